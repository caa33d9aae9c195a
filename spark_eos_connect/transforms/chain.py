"""A connector config's `transforms` and `predicates`, read as Connect reads them, and the chain.

The options:

- `transforms`: comma-separated aliases, applied in that order;
- `transforms.<alias>.type`: the transformation's class; `transforms.<alias>.<option>`: its
  options; `transforms.<alias>.predicate`: the alias of a predicate deciding whether it applies;
  `transforms.<alias>.negate`: apply it when the predicate is false instead;
- `predicates`: comma-separated predicate aliases; `predicates.<alias>.type` and
  `predicates.<alias>.<option>` likewise.

`transform_config_problems` lists every problem (each message names the option key and what was
expected) without building anything; `parse_transform_chain` builds the configured chain or
raises `InvalidConfigError` with all of them; `transform_config_warnings` names the options
nobody reads (Connect ignores them too). A failure inside `apply` is raised as
`TransformationError` naming the alias and class, with the original error as its cause.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from spark_eos_connect.api.config import (
    ConfigDef,
    ConfigType,
    InvalidConfigError,
    parse_value,
)
from spark_eos_connect.errors import ConfigError, EosConnectError
from spark_eos_connect.transforms.options import NonDuplicateList, parse_options
from spark_eos_connect.transforms.record import ConnectRecord
from spark_eos_connect.transforms.registry import PluginKind, resolve_plugin_class

__all__ = [
    "CHAIN_CONFIG",
    "TransformChain",
    "TransformStage",
    "TransformationError",
    "parse_transform_chain",
    "transform_config_problems",
    "transform_config_warnings",
    "validate_transform_config",
]

TRANSFORMS: Final = "transforms"
PREDICATES: Final = "predicates"
_STAGE_OPTIONS: Final = ("type", "predicate", "negate")

CHAIN_CONFIG: Final = (
    ConfigDef()
    .define(
        TRANSFORMS,
        ConfigType.LIST,
        [],
        importance="low",
        doc="Aliases for the transformations to be applied to records, in order. Each alias "
        "needs transforms.<alias>.type; its options are transforms.<alias>.<option>; "
        "transforms.<alias>.predicate names a predicate alias and transforms.<alias>.negate "
        "(default false) inverts it.",
    )
    .define(
        PREDICATES,
        ConfigType.LIST,
        [],
        importance="low",
        doc="Aliases for the predicates used by transformations; each needs "
        "predicates.<alias>.type, its options are predicates.<alias>.<option>.",
    )
)
"""The chain's own options, for the options reference page."""


class TransformationError(EosConnectError, RuntimeError):
    """A transformation or its predicate failed on a record; `__cause__` is the original error."""

    def __init__(self, alias: str, class_name: str, cause: BaseException, in_predicate: bool):
        self.alias = alias
        self.class_name = class_name
        self.cause = cause
        self.in_predicate = in_predicate
        where = "predicate of transformation" if in_predicate else "transformation"
        super().__init__(f"{where} '{alias}' ({class_name}) failed: {cause}")


def _class_name(plugin: Any) -> str:
    cls = type(plugin)
    connect = getattr(cls, "CONNECT_CLASS", None)
    return connect if isinstance(connect, str) else f"{cls.__module__}.{cls.__qualname__}"


@dataclass
class TransformStage:
    """One transformation, with the predicate (and `negate`) that gates it, if any."""

    alias: str
    transformation: Any
    predicate: Any = None
    predicate_alias: str | None = None
    negate: bool = False

    def applies_to(self, record: ConnectRecord) -> bool:
        """Whether the transformation runs on `record` (always, without a predicate)."""
        if self.predicate is None:
            return True
        try:
            return self.negate ^ bool(self.predicate.test(record))
        except Exception as error:
            raise TransformationError(
                self.alias, _class_name(self.predicate), error, in_predicate=True
            ) from error

    def apply(self, record: ConnectRecord) -> ConnectRecord | None:
        """The record after this stage (unchanged when the predicate says no), or None."""
        if not self.applies_to(record):
            return record
        try:
            result: ConnectRecord | None = self.transformation.apply(record)
        except Exception as error:
            raise TransformationError(
                self.alias, _class_name(self.transformation), error, in_predicate=False
            ) from error
        return result

    def close(self) -> None:
        """Close the transformation and its predicate."""
        for plugin in (self.transformation, self.predicate):
            closer = getattr(plugin, "close", None)
            if callable(closer):
                closer()


class TransformChain:
    """The configured stages in order; `apply` runs a record through them."""

    def __init__(self, stages: Iterable[TransformStage] = ()) -> None:
        self.stages: tuple[TransformStage, ...] = tuple(stages)

    def __len__(self) -> int:
        return len(self.stages)

    def __bool__(self) -> bool:
        return bool(self.stages)

    @property
    def aliases(self) -> list[str]:
        """The stage aliases in order."""
        return [stage.alias for stage in self.stages]

    def apply(self, record: ConnectRecord) -> ConnectRecord | None:
        """The transformed record, or None when a stage filtered it out."""
        current: ConnectRecord | None = record
        for stage in self.stages:
            assert current is not None
            current = stage.apply(current)
            if current is None:
                return None
        return current

    def apply_all(self, records: Iterable[ConnectRecord]) -> list[ConnectRecord]:
        """The transformed records in order, the filtered ones left out."""
        results = []
        for record in records:
            transformed = self.apply(record)
            if transformed is not None:
                results.append(transformed)
        return results

    def close(self) -> None:
        """Close every stage (each is closed even if another fails; the first error is raised)."""
        first: BaseException | None = None
        for stage in self.stages:
            try:
                stage.close()
            except Exception as error:
                first = first or error
        if first is not None:
            raise first


# --- reading the config -------------------------------------------------------------------------


def _aliases(props: Mapping[str, Any], key: str, problems: dict[str, list[str]]) -> list[str]:
    raw = props.get(key)
    if raw is None:
        return []
    try:
        aliases: list[str] = parse_value(key, raw, ConfigType.LIST)
    except ConfigError as error:
        problems.setdefault(key, []).append(str(error))
        return []
    if len(set(aliases)) != len(aliases):
        problems.setdefault(key, []).append(
            f"Invalid value {raw!r} for configuration {key}: Duplicate alias provided."
        )
    if any(not alias for alias in aliases):
        problems.setdefault(key, []).append(
            f"Invalid value {raw!r} for configuration {key}: an alias is empty; "
            "expected comma-separated non-empty aliases"
        )
    seen: list[str] = []
    for alias in aliases:
        if alias and alias not in seen:
            seen.append(alias)
    return seen


def _options(props: Mapping[str, Any], prefix: str, drop: Iterable[str]) -> dict[str, Any]:
    dropped = set(drop)
    return {
        name[len(prefix) :]: value
        for name, value in props.items()
        if name.startswith(prefix) and name[len(prefix) :] not in dropped
    }


def _plugin_class(
    props: Mapping[str, Any],
    group: str,
    alias: str,
    kind: PluginKind,
    problems: dict[str, list[str]],
) -> type[Any] | None:
    key = f"{group}.{alias}.type"
    raw = props.get(key)
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        examples = (
            "org.apache.kafka.connect.transforms.RegexRouter"
            if kind == "transformation"
            else "org.apache.kafka.connect.transforms.predicates.TopicNameMatches"
        )
        problems.setdefault(key, []).append(
            f'Missing required configuration "{key}" which has no default value; expected the '
            f"{kind} class for alias '{alias}' (a Connect class name such as {examples}, or a "
            "dotted path to a Python class)"
        )
        return None
    if isinstance(raw, type):
        return raw
    try:
        return resolve_plugin_class(str(raw), kind, key)
    except ConfigError as error:
        problems.setdefault(key, []).append(str(error))
        return None


def _check_options(
    cls: type[Any], options: Mapping[str, Any], prefix: str, problems: dict[str, list[str]]
) -> None:
    checker = getattr(cls, "check_config", None)
    if callable(checker):
        _, found = checker(options, prefix)
    else:
        definer = getattr(cls, "config_def", None)
        if not callable(definer):
            return
        _, found = parse_options(definer(), options, prefix)
    for key, messages in found.items():
        problems.setdefault(key, []).extend(messages)


def _negate_value(props: Mapping[str, Any], key: str, problems: dict[str, list[str]]) -> bool:
    try:
        return bool(parse_value(key, props[key], ConfigType.BOOLEAN))
    except ConfigError as error:
        problems.setdefault(key, []).append(str(error))
        return False


def transform_config_problems(props: Mapping[str, Any]) -> dict[str, list[str]]:
    """Every problem in the chain's options, by option key; empty when the config is valid."""
    problems: dict[str, list[str]] = {}
    transform_aliases = _aliases(props, TRANSFORMS, problems)
    predicate_aliases = _aliases(props, PREDICATES, problems)
    for alias in predicate_aliases:
        prefix = f"{PREDICATES}.{alias}."
        cls = _plugin_class(props, PREDICATES, alias, "predicate", problems)
        if cls is not None:
            _check_options(cls, _options(props, prefix, ("type",)), prefix, problems)
    for alias in transform_aliases:
        prefix = f"{TRANSFORMS}.{alias}."
        cls = _plugin_class(props, TRANSFORMS, alias, "transformation", problems)
        if cls is not None:
            _check_options(cls, _options(props, prefix, _STAGE_OPTIONS), prefix, problems)
        predicate_key, negate_key = prefix + "predicate", prefix + "negate"
        predicate = props.get(predicate_key)
        if predicate is not None:
            name = str(predicate).strip()
            if name not in predicate_aliases:
                declared = ", ".join(predicate_aliases) or "none"
                problems.setdefault(predicate_key, []).append(
                    f"Invalid value {predicate!r} for configuration {predicate_key}: no predicate "
                    f"'{name}' is declared in {PREDICATES} (declared: {declared}); expected the "
                    f"alias of a predicate listed in {PREDICATES}"
                )
        if negate_key in props:
            _negate_value(props, negate_key, problems)
            if predicate is None:
                problems.setdefault(negate_key, []).append(
                    f"Config '{negate_key}' was provided but there is no config "
                    f"'{predicate_key}' defining a predicate to be negated."
                )
    return problems


def validate_transform_config(props: Mapping[str, Any]) -> list[str]:
    """Every problem as one message each (empty when the config is valid)."""
    return [
        message for messages in transform_config_problems(props).values() for message in messages
    ]


def transform_config_warnings(props: Mapping[str, Any]) -> list[str]:
    """Options under `transforms.`/`predicates.` that nothing reads, one message each."""
    ignored: dict[str, list[str]] = {}
    transform_aliases = _aliases(props, TRANSFORMS, ignored)
    predicate_aliases = _aliases(props, PREDICATES, ignored)
    warnings = []
    for key in sorted(props):
        groups: tuple[tuple[str, list[str], PluginKind, tuple[str, ...]], ...] = (
            (TRANSFORMS, transform_aliases, "transformation", _STAGE_OPTIONS),
            (PREDICATES, predicate_aliases, "predicate", ("type",)),
        )
        for group, aliases, kind, fixed in groups:
            if not key.startswith(group + "."):
                continue
            alias = next((a for a in aliases if key.startswith(f"{group}.{a}.")), None)
            if alias is None:
                warnings.append(
                    f"{key} is ignored: no {kind} alias in '{group}' owns it "
                    f"(declared: {', '.join(aliases) or 'none'})"
                )
                continue
            option = key[len(f"{group}.{alias}.") :]
            if option in fixed:
                continue
            warning = _option_warning(props, group, alias, kind, option, key)
            if warning:
                warnings.append(warning)
    return warnings


def _option_warning(
    props: Mapping[str, Any], group: str, alias: str, kind: PluginKind, option: str, key: str
) -> str | None:
    """Why `key` is (partly) ignored, or None: not an option, or a list with repeats."""
    try:
        cls = resolve_plugin_class(str(props.get(f"{group}.{alias}.type", "")), kind, key)
    except ConfigError:
        return None
    definer = getattr(cls, "config_def", None)
    if not callable(definer):
        return None
    definition: ConfigDef = definer()
    if option in definition:
        if isinstance(definition.keys[option].validator, NonDuplicateList):
            try:
                names = parse_value(key, props[key], ConfigType.LIST)
            except ConfigError:
                return None
            if len(set(names)) != len(names):
                return f"{key} repeats names; the repeats are ignored (as Connect does)"
        return None
    removed: Mapping[str, str] = getattr(cls, "REMOVED_OPTIONS", {})
    hint = f"; Kafka 4 removed it, use '{removed[option]}'" if option in removed else ""
    known = ", ".join(definer().names()) or "none"
    return f"{key} is not an option of {cls.__name__} and is ignored (its options: {known}){hint}"


def _configure(cls: type[Any], options: Mapping[str, Any], where: str) -> Any:
    plugin = cls()
    try:
        plugin.configure(dict(options))
    except ConfigError:
        raise
    except Exception as error:
        raise ConfigError(f"Configuring {where} ({cls.__qualname__}) failed: {error}") from error
    return plugin


def parse_transform_chain(props: Mapping[str, Any]) -> TransformChain:
    """The chain a connector config asks for, configured; `InvalidConfigError` lists problems."""
    problems = transform_config_problems(props)
    if problems:
        raise InvalidConfigError(problems)
    stages: list[TransformStage] = []
    chain = TransformChain()
    try:
        for alias in _aliases(props, TRANSFORMS, problems):
            prefix = f"{TRANSFORMS}.{alias}."
            cls = _plugin_class(props, TRANSFORMS, alias, "transformation", problems)
            assert cls is not None
            options = _options(props, prefix, ("predicate", "negate"))
            transformation = _configure(cls, options, f"transformation '{alias}'")
            stage = TransformStage(alias, transformation)
            stages.append(stage)
            predicate_alias = props.get(prefix + "predicate")
            if predicate_alias is not None:
                name = str(predicate_alias).strip()
                predicate_prefix = f"{PREDICATES}.{name}."
                predicate_cls = _plugin_class(props, PREDICATES, name, "predicate", problems)
                assert predicate_cls is not None
                stage.predicate = _configure(
                    predicate_cls, _options(props, predicate_prefix, ()), f"predicate '{name}'"
                )
                stage.predicate_alias = name
                if prefix + "negate" in props:
                    stage.negate = _negate_value(props, prefix + "negate", problems)
        chain = TransformChain(stages)
    except BaseException:
        TransformChain(stages).close()
        raise
    return chain
