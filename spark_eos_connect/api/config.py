"""Declarative option definitions for connectors, modelled on Kafka Connect's `ConfigDef`.

A `ConfigDef` lists a connector's options (name, type, default, validator, importance, doc). It
turns the string properties a user supplies into typed values (`parse`), reports every problem at
once (`ConfigError` naming each option), answers Connect's `PUT .../config/validate` shape
(`validate`) and renders a markdown table for the docs (`to_markdown`). Pure Python; used on the
driver and on executors.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final, Literal

from spark_eos_connect.errors import ConfigError

__all__ = [
    "HIDDEN",
    "NO_DEFAULT",
    "ConfigDef",
    "ConfigKey",
    "ConfigType",
    "ConfigValueReport",
    "Importance",
    "InvalidConfigError",
    "NonEmptyList",
    "NonEmptyString",
    "Password",
    "Range",
    "ValidString",
    "Validator",
    "parse_value",
    "props_with_prefix",
    "unknown_options",
]

HIDDEN: Final = "[hidden]"
"""What a password shows instead of its value, in messages, reprs, reports and docs."""

Importance = Literal["high", "medium", "low"]
_IMPORTANCE_ORDER: Final[dict[str, int]] = {"high": 0, "medium": 1, "low": 2}

Validator = Callable[[str, Any], None]
"""A check called as `validator(name, value)`, raising `ConfigError` if the value is invalid."""

_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_LIST_SPLIT: Final = re.compile(r"\s*,\s*")


class _NoDefault(enum.Enum):
    NO_DEFAULT = "NO_DEFAULT"

    def __repr__(self) -> str:
        return "NO_DEFAULT"


NO_DEFAULT: Final = _NoDefault.NO_DEFAULT
"""Sentinel default marking an option as required."""


class ConfigType(enum.Enum):
    """The value types an option can have (Connect's `ConfigDef.Type`)."""

    STRING = "string"
    INT = "int"
    LONG = "long"
    DOUBLE = "double"
    BOOLEAN = "boolean"
    LIST = "list"
    PASSWORD = "password"
    CLASS = "class"

    def describe(self) -> str:
        """A short phrase for error messages, e.g. `INT (32-bit integer)`."""
        return f"{self.name} ({_TYPE_PHRASES[self]})"


_TYPE_PHRASES: Final[dict[ConfigType, str]] = {
    ConfigType.STRING: "string",
    ConfigType.INT: "32-bit integer",
    ConfigType.LONG: "64-bit integer",
    ConfigType.DOUBLE: "floating-point number",
    ConfigType.BOOLEAN: "true or false",
    ConfigType.LIST: "comma-separated list",
    ConfigType.PASSWORD: "secret string",
    ConfigType.CLASS: "dotted class path or short name",
}


class Password:
    """A secret option value: prints as `[hidden]`; `.value` holds the secret."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    @property
    def value(self) -> str:
        """The secret itself; never log it."""
        return self._value

    def __repr__(self) -> str:
        return HIDDEN

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Password) and other._value == self._value

    def __hash__(self) -> int:
        return hash((Password, self._value))


def _shown(value: Any, config_type: ConfigType | None = None) -> str:
    """How a value appears in messages: passwords hidden, strings quoted."""
    if config_type is ConfigType.PASSWORD or isinstance(value, Password):
        return HIDDEN
    return repr(value)


def _invalid(name: str, value: Any, reason: str) -> ConfigError:
    return ConfigError(f"Invalid value {_shown(value)} for configuration {name}: {reason}")


# --- validators ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Range:
    """Numeric bounds (inclusive); build with `Range.at_least(n)` or `Range.between(a, b)`."""

    min: float | None = None
    max: float | None = None

    @classmethod
    def at_least(cls, minimum: float) -> Range:
        """Values >= `minimum`."""
        return cls(min=minimum)

    @classmethod
    def between(cls, minimum: float, maximum: float) -> Range:
        """Values in `[minimum, maximum]`."""
        if minimum > maximum:
            raise ValueError(f"Range.between({minimum}, {maximum}): minimum exceeds maximum")
        return cls(min=minimum, max=maximum)

    def __call__(self, name: str, value: Any) -> None:
        if value is None or isinstance(value, bool) or not isinstance(value, int | float):
            raise _invalid(name, value, f"expected a number in {self}")
        if self.min is not None and value < self.min:
            raise _invalid(name, value, f"value must be at least {self.min}")
        if self.max is not None and value > self.max:
            raise _invalid(name, value, f"value must be no more than {self.max}")

    def __str__(self) -> str:
        low = "..." if self.min is None else str(self.min)
        return f"[{low},...]" if self.max is None else f"[{low},...,{self.max}]"


@dataclass(frozen=True)
class CountOrBrokerDefault:
    """A count of at least 1, or -1 for the broker's default: Kafka Connect's internal-topic
    replication factors and partition counts (KIP-464)."""

    def __call__(self, name: str, value: Any) -> None:
        valid = isinstance(value, int) and not isinstance(value, bool)
        if not valid or (value != -1 and value < 1):
            raise _invalid(name, value, "expected -1 (the broker's default) or at least 1")

    def __str__(self) -> str:
        return "-1 or [1,...]"


@dataclass(frozen=True, init=False)
class ValidString:
    """One of a fixed set of strings; case-sensitive unless `case_insensitive=True`."""

    values: tuple[str, ...]
    case_insensitive: bool = False

    def __init__(self, values: Iterable[str], case_insensitive: bool = False) -> None:
        object.__setattr__(self, "values", tuple(values))
        object.__setattr__(self, "case_insensitive", case_insensitive)

    @classmethod
    def one_of(cls, *values: str, case_insensitive: bool = False) -> ValidString:
        """Accept only the given strings."""
        return cls(values, case_insensitive=case_insensitive)

    def __call__(self, name: str, value: Any) -> None:
        if isinstance(value, str):
            if self.case_insensitive:
                folded = value.casefold()
                if any(folded == v.casefold() for v in self.values):
                    return
            elif value in self.values:
                return
        raise _invalid(name, value, f"string must be one of: {', '.join(self.values)}")

    def __str__(self) -> str:
        text = "[" + ", ".join(self.values) + "]"
        return f"{text} (case-insensitive)" if self.case_insensitive else text


@dataclass(frozen=True)
class NonEmptyString:
    """A string that is not empty (None passes: it means "not set" for optional options)."""

    def __call__(self, name: str, value: Any) -> None:
        if value is not None and (not isinstance(value, str) or value == ""):
            raise _invalid(name, value, "string must be non-empty")

    def __str__(self) -> str:
        return "non-empty string"


@dataclass(frozen=True)
class NonEmptyList:
    """A list with at least one element (None passes: it means "not set")."""

    def __call__(self, name: str, value: Any) -> None:
        if value is not None and (not isinstance(value, list | tuple) or not value):
            raise _invalid(name, value, "list must have at least one element")

    def __str__(self) -> str:
        return "non-empty list"


# --- definitions --------------------------------------------------------------------------------


@dataclass(frozen=True)
class ConfigKey:
    """One option's definition; `default is NO_DEFAULT` means the option is required."""

    name: str
    type: ConfigType
    default: Any = NO_DEFAULT
    doc: str = ""
    importance: Importance = "medium"
    validator: Validator | None = None
    group: str | None = None

    @property
    def required(self) -> bool:
        """True when the option has no default."""
        return self.default is NO_DEFAULT

    def describe_valid(self) -> str:
        """The valid values as written in messages and docs ("" when any value of the type goes)."""
        return "" if self.validator is None else str(self.validator)

    def expected(self) -> str:
        """Type plus valid values, for error messages."""
        valid = self.describe_valid()
        return self.type.describe() + (f", valid values {valid}" if valid else "")


@dataclass(frozen=True)
class ConfigValueReport:
    """One option's outcome in `ConfigDef.validate` (Connect's `ConfigValue`)."""

    name: str
    value: Any
    recommended_values: list[Any] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    visible: bool = True

    def to_dict(self) -> dict[str, Any]:
        """The REST `value` object: the value as a string (passwords `[hidden]`), errors, etc."""
        return {
            "name": self.name,
            "value": _to_config_string(self.value),
            "recommended_values": [_to_config_string(v) for v in self.recommended_values],
            "errors": list(self.errors),
            "visible": self.visible,
        }


class InvalidConfigError(ConfigError):
    """Several options are invalid; `problems` maps each option name to its messages."""

    def __init__(self, problems: Mapping[str, Sequence[str]]) -> None:
        self.problems: dict[str, list[str]] = {k: list(v) for k, v in problems.items()}
        lines = [m for msgs in self.problems.values() for m in msgs]
        count = len(lines)
        noun = "problem" if count == 1 else "problems"
        super().__init__(
            f"Invalid configuration ({count} {noun}):\n" + "\n".join(f"  - {m}" for m in lines)
        )


def _to_config_string(value: Any) -> str | None:
    """Render a parsed value back to Connect's string form."""
    if value is None or value is NO_DEFAULT:
        return None
    if isinstance(value, Password):
        return HIDDEN
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return ",".join(str(v) for v in value)
    if isinstance(value, type):
        return f"{value.__module__}.{value.__qualname__}"
    return str(value)


def _parse_int(name: str, value: Any, config_type: ConfigType, lo: int, hi: int) -> int:
    if isinstance(value, bool):
        raise _invalid(name, value, f"expected {config_type.describe()}")
    if isinstance(value, int):
        result = value
    elif isinstance(value, str):
        try:
            result = int(value.strip(), 10)
        except ValueError:
            raise _invalid(name, value, f"expected {config_type.describe()}") from None
    else:
        raise _invalid(name, value, f"expected {config_type.describe()}")
    if not lo <= result <= hi:
        raise _invalid(name, value, f"out of range for {config_type.describe()}")
    return result


def parse_value(name: str, value: Any, config_type: ConfigType) -> Any:
    """Convert one supplied value to `config_type`; None stays None. Raises `ConfigError`."""
    if value is None:
        return None
    match config_type:
        case ConfigType.BOOLEAN:
            if isinstance(value, bool):
                return value
            if isinstance(value, str):
                lowered = value.strip().lower()
                if lowered in ("true", "false"):
                    return lowered == "true"
            raise _invalid(name, value, f"expected {config_type.describe()}")
        case ConfigType.INT:
            return _parse_int(name, value, config_type, _INT32_MIN, _INT32_MAX)
        case ConfigType.LONG:
            return _parse_int(name, value, config_type, _INT64_MIN, _INT64_MAX)
        case ConfigType.DOUBLE:
            if isinstance(value, int | float) and not isinstance(value, bool):
                return float(value)
            if isinstance(value, str):
                try:
                    return float(value.strip())
                except ValueError:
                    pass
            raise _invalid(name, value, f"expected {config_type.describe()}")
        case ConfigType.STRING:
            if isinstance(value, str):
                return value.strip()
            raise _invalid(name, value, f"expected {config_type.describe()}")
        case ConfigType.PASSWORD:
            if isinstance(value, Password):
                return value
            if isinstance(value, str):
                return Password(value)
            raise ConfigError(
                f"Invalid value {HIDDEN} for configuration {name}: "
                f"expected {config_type.describe()}"
            )
        case ConfigType.LIST:
            if isinstance(value, str):
                trimmed = value.strip()
                return [] if not trimmed else _LIST_SPLIT.split(trimmed)
            if isinstance(value, list | tuple):
                return [str(v) for v in value]
            raise _invalid(name, value, f"expected {config_type.describe()}")
        case ConfigType.CLASS:
            if isinstance(value, type):
                return value
            if isinstance(value, str) and value.strip():
                return value.strip()
            raise _invalid(name, value, f"expected {config_type.describe()}")
    raise AssertionError(f"unhandled config type {config_type}")  # pragma: no cover


def unknown_options(
    props: Mapping[str, Any], known: Iterable[str], known_prefixes: Iterable[str] = ()
) -> list[str]:
    """Names in `props` that are neither in `known` nor start with one of `known_prefixes`."""
    known_set = set(known)
    prefixes = tuple(known_prefixes)
    return sorted(name for name in props if name not in known_set and not name.startswith(prefixes))


def props_with_prefix(props: Mapping[str, Any], prefix: str, strip: bool = True) -> dict[str, Any]:
    """The entries whose name starts with `prefix`, the prefix removed unless `strip=False`."""
    cut = len(prefix) if strip else 0
    return {k[cut:]: v for k, v in props.items() if k.startswith(prefix)}


class ConfigDef:
    """An ordered set of option definitions; `define` chains. Immutable keys once defined."""

    def __init__(self, keys: Iterable[ConfigKey] = ()) -> None:
        self._keys: dict[str, ConfigKey] = {}
        for key in keys:
            self._add(key)

    def define(
        self,
        name: str,
        type: ConfigType,
        default: Any = NO_DEFAULT,
        validator: Validator | None = None,
        importance: Importance = "medium",
        doc: str = "",
        group: str | None = None,
    ) -> ConfigDef:
        """Add an option; the default is parsed to `type` and checked by `validator`."""
        if default is not NO_DEFAULT:
            default = parse_value(name, default, type)
            if validator is not None and default is not None:
                validator(name, default)
        self._add(ConfigKey(name, type, default, doc, importance, validator, group))
        return self

    def _add(self, key: ConfigKey) -> None:
        if not key.name:
            raise ConfigError("Configuration names must be non-empty")
        if key.importance not in _IMPORTANCE_ORDER:
            raise ConfigError(
                f"Configuration {key.name}: importance must be high, medium or low, "
                f"not {key.importance!r}"
            )
        if key.name in self._keys:
            raise ConfigError(f"Configuration {key.name} is defined twice")
        self._keys[key.name] = key

    @property
    def keys(self) -> Mapping[str, ConfigKey]:
        """The definitions by name, in definition order (read-only)."""
        return MappingProxyType(self._keys)

    def names(self) -> list[str]:
        """The option names in definition order."""
        return list(self._keys)

    def __contains__(self, name: object) -> bool:
        return name in self._keys

    def __len__(self) -> int:
        return len(self._keys)

    def unknown_options(
        self, props: Mapping[str, Any], known_prefixes: Iterable[str] = ()
    ) -> list[str]:
        """Names in `props` not defined here and not starting with one of `known_prefixes`."""
        return unknown_options(props, self._keys, known_prefixes)

    def merge(self, other: ConfigDef) -> ConfigDef:
        """A new definition with both sets of options; identical duplicates are allowed."""
        merged = ConfigDef(self._keys.values())
        for key in other._keys.values():
            existing = merged._keys.get(key.name)
            if existing is None:
                merged._add(key)
            elif existing != key:
                raise ConfigError(f"Configuration {key.name} is defined differently in both")
        return merged

    def _parse_collect(
        self, props: Mapping[str, Any]
    ) -> tuple[dict[str, Any], dict[str, list[str]]]:
        """Parse every option, returning the values and the problems by option name."""
        values: dict[str, Any] = {}
        problems: dict[str, list[str]] = {}
        for name, key in self._keys.items():
            if name in props:
                try:
                    value = parse_value(name, props[name], key.type)
                except ConfigError as exc:
                    valid = key.describe_valid()
                    problems[name] = [f"{exc}" + (f" (valid values {valid})" if valid else "")]
                    values[name] = props[name]
                    continue
            elif key.required:
                problems[name] = [
                    f'Missing required configuration "{name}" which has no default value; '
                    f"expected {key.expected()}"
                ]
                values[name] = None
                continue
            else:
                value = key.default
            values[name] = value
            if key.validator is not None and value is not None:
                try:
                    key.validator(name, value)
                except ConfigError as exc:
                    problems[name] = [str(exc)]
        return values, problems

    def parse(
        self,
        props: Mapping[str, Any],
        allow_unknown_prefixes: Iterable[str] | None = None,
    ) -> dict[str, Any]:
        """Typed values for every defined option, or one `InvalidConfigError` listing all problems.

        Options not defined here are ignored when `allow_unknown_prefixes` is None (Connect's
        behaviour); otherwise each one not starting with an allowed prefix is a problem too.
        """
        values, problems = self._parse_collect(props)
        if allow_unknown_prefixes is not None:
            for name in unknown_options(props, self._keys, allow_unknown_prefixes):
                # The value is not shown: an unknown option may well be a misspelt secret.
                problems[name] = [f"Unknown configuration {name}"]
        if problems:
            raise InvalidConfigError(problems)
        return values

    def validate(self, props: Mapping[str, Any]) -> list[ConfigValueReport]:
        """One report per defined option, errors included; never raises for bad values."""
        values, problems = self._parse_collect(props)
        reports = []
        for name, key in self._keys.items():
            recommended: list[Any] = []
            if isinstance(key.validator, ValidString):
                recommended = list(key.validator.values)
            elif key.type is ConfigType.BOOLEAN:
                recommended = [True, False]
            value = values[name]
            if key.type is ConfigType.PASSWORD and value is not None:
                value = value if isinstance(value, Password) else Password(str(value))
            reports.append(
                ConfigValueReport(name, value, recommended, problems.get(name, []), True)
            )
        return reports

    def to_markdown(self, title: str | None = None) -> str:
        """A markdown table of the options: required first, then by importance, then by name."""
        ordered = sorted(
            self._keys.values(),
            key=lambda k: (not k.required, _IMPORTANCE_ORDER[k.importance], k.name),
        )
        lines = []
        if title:
            lines += [f"## {title}", ""]
        lines += [
            "| Name | Type | Default | Valid values | Importance | Description |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        for key in ordered:
            cells = [
                f"`{key.name}`",
                key.type.name.lower(),
                _markdown_default(key),
                key.describe_valid(),
                key.importance,
                key.doc,
            ]
            lines.append("| " + " | ".join(_md_cell(c) for c in cells) + " |")
        return "\n".join(lines) + "\n"


def _markdown_default(key: ConfigKey) -> str:
    if key.required:
        return "(required)"
    if key.default is None:
        return "null"
    if key.type is ConfigType.PASSWORD:
        return HIDDEN
    text = _to_config_string(key.default)
    return '""' if text == "" else f"`{text}`"


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ").strip()
