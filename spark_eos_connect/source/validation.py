"""Everything wrong with a source connector's options, found before its query starts.

`source_config_report(options)` checks the whole config at once: the Kafka settings the
framework needs, the framework's own options, the Connect options this project refuses
(`runtime.config.connect_options`), the converters, `transforms`, `predicates` and `errors.*`
(`source.conversion`), and the connector's own options as its `validate` sees them. It
returns every problem by option, and warnings for options nothing reads (which Connect passes to
the connector and ignores too). `validate_source_options` raises one `InvalidConfigError`
listing all the problems; `spark.readStream.format("eosconnect")...load()` calls it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from spark_eos_connect.api.config import InvalidConfigError, props_with_prefix
from spark_eos_connect.errors import ConfigError, ConnectorNotFoundError
from spark_eos_connect.runtime.config.config_references import ConfigProviders
from spark_eos_connect.runtime.config.connect_options import (
    ACCEPTED_VALUES,
    alias_case_problems,
    refused_option_problems,
)
from spark_eos_connect.runtime.config.framework_config import FRAMEWORK_CONFIG
from spark_eos_connect.runtime.config.option_names import quoted, unknown_option_message
from spark_eos_connect.runtime.config.options import DataSourceOptions
from spark_eos_connect.runtime.errors_dlq import SOURCE_ERRORS_CONFIG
from spark_eos_connect.source.conversion import (
    CONVERTER_OPTIONS,
    SOURCE_CONVERTER_CONFIG,
)

Problems = dict[str, list[str]]

_CLIENT_SETTINGS = frozenset(
    {"bootstrap.servers", "security.protocol", "client.id", "acks", "compression.type"}
)


def _add(problems: Problems, found: Mapping[str, Sequence[str]]) -> None:
    for name, messages in found.items():
        problems.setdefault(name, []).extend(messages)


def _kafka_problems(kafka: Mapping[str, str]) -> Problems:
    problems: Problems = {}
    if "bootstrap.servers" not in kafka:
        problems["kafka.bootstrap.servers"] = [
            "Missing option kafka.bootstrap.servers: the Kafka cluster to write to "
            "(e.g. .option('kafka.bootstrap.servers', 'localhost:9092'))"
        ]
    if "transactional.id" in kafka:
        problems["kafka.transactional.id"] = [
            "Option kafka.transactional.id cannot be set: source tasks use "
            "<group.id>-<connector>-<task> so that zombie tasks are fenced"
        ]
    return problems


def _resolved(
    props: Mapping[str, Any], providers: ConfigProviders, problems: Problems
) -> dict[str, Any]:
    """`props` with references resolved one option at a time (each failure is a problem)."""
    resolved: dict[str, Any] = {}
    for name, value in props.items():
        try:
            resolved[name] = providers.resolve({name: value})[name]
        except ConfigError as error:
            _add(problems, {name: [str(error)]})
            resolved[name] = value
    return resolved


def _connector_report(
    props: Mapping[str, Any], problems: Problems, plugin_path: str | None = None
) -> tuple[str, frozenset[str]] | None:
    """Run the connector's `validate`; (its class name, the options it defines) or None.
    The connector is the Java plugin whenever `plugin_path` holds its class."""
    from spark_eos_connect.api.source import SourceConnector
    from spark_eos_connect.jvm_tasks.resolution import resolve_with_plugin_path

    name = str(props.get("connector.class") or "")
    if not name:
        return None  # already reported as a missing required option
    try:
        cls = resolve_with_plugin_path(name, plugin_path)
    except (ConfigError, ConnectorNotFoundError) as error:
        _add(problems, {"connector.class": [str(error)]})
        return None
    if not issubclass(cls, SourceConnector):
        _add(problems, {"connector.class": [f"{name!r} is not a source connector"]})
        return None
    try:
        connector = cls()
        reports = connector.validate(dict(props))
        defined = frozenset(connector.config_def().names())
    except Exception as error:
        _add(
            problems,
            {
                "connector.class": [
                    f"{name}: validating its options failed: {type(error).__name__}: {error}"
                ]
            },
        )
        return None
    _add(problems, {r.name: r.errors for r in reports if r.errors})
    return cls.__name__, defined


def _converter_warnings(props: Mapping[str, Any]) -> list[str]:
    """Converter options nobody reads: no converter set, or not one of its options."""
    from spark_eos_connect.converters import make_converter, make_header_converter

    warnings = []
    for option in CONVERTER_OPTIONS:
        suffixes = sorted(props_with_prefix(props, f"{option}."))
        if not suffixes:
            continue
        name = str(props.get(option) or "").strip()
        if not name:
            warnings += [f"{option}.{s} is ignored: {option} is not set" for s in suffixes]
            continue
        try:
            converter = (
                make_header_converter(name, {})
                if option == "header.converter"
                else make_converter(name, {}, is_key=option == "key.converter")
            )
        except ConfigError:
            continue  # reported as a problem
        known = converter.config_def.names()
        warnings += [
            f"{option}.{s} is not an option of {type(converter).__name__} and is ignored "
            f"(its options: {', '.join(known) or 'none'})"
            for s in suffixes
            if s not in known
        ]
    return warnings


def _known_names(defined: frozenset[str]) -> set[str]:
    """Every option name the framework or the connector (`defined`) reads."""
    return (
        set(FRAMEWORK_CONFIG.names())
        | set(SOURCE_CONVERTER_CONFIG.names())
        | set(SOURCE_ERRORS_CONFIG.names())
        | {"transforms", "predicates", *ACCEPTED_VALUES}
        | defined
    )


def unknown_options(
    props: Mapping[str, Any], connector: tuple[str, frozenset[str]]
) -> dict[str, str]:
    """Options neither the framework nor the connector defines, each with its warning (only when
    the connector defines its options: a connector with an empty `config_def` may read
    anything)."""
    class_name, defined = connector
    if not defined:
        return {}
    known = _known_names(defined)
    prefixes = tuple(f"{p}." for p in (*CONVERTER_OPTIONS, "transforms", "predicates"))
    found = {}
    for name in sorted(props):
        if name in known or name.startswith(prefixes):
            continue
        hint = ""
        if name in _CLIENT_SETTINGS or name.startswith(("sasl.", "ssl.")):
            prefixed = quoted(f"kafka.{name}")
            hint = f"; Kafka client settings take the kafka. prefix here ({prefixed})"
        found[name] = (
            f"{unknown_option_message(name, class_name, known)}; it is passed to the "
            f"connector, which ignores it{hint}"
        )
    return found


def source_config_report(
    options: Mapping[str, Any] | DataSourceOptions,
) -> tuple[Problems, list[str]]:
    """(every problem by option, warnings) for a source connector's data source options; with
    problems, the unknown options are problems too, listed first (the likeliest cause)."""
    from spark_eos_connect.source.config import conversion_problems
    from spark_eos_connect.transforms import transform_config_warnings

    problems: Problems = {}
    read = DataSourceOptions.read(options)
    kafka, providers, props = read.kafka, read.providers, read.props
    _add(problems, _kafka_problems(kafka))
    if read.providers_error is not None:
        _add(problems, {"config.providers": [str(read.providers_error)]})
    _add(problems, alias_case_problems(props))
    _add(problems, refused_option_problems(props))
    if "name" in props and "${" in str(props["name"]):
        _add(problems, {"name": ["Option name cannot hold a ${provider:...} reference"]})
    resolved = _resolved(props, providers, problems)
    _resolved({f"kafka.{k}": v for k, v in kafka.items()}, providers, problems)  # checked only
    try:
        FRAMEWORK_CONFIG.parse({k: v for k, v in resolved.items() if k in FRAMEWORK_CONFIG})
    except InvalidConfigError as error:
        _add(problems, error.problems)
    plugin_path = resolved.get("plugin.path")
    _add(problems, conversion_problems(resolved, None if plugin_path is None else str(plugin_path)))
    connector_props = {k: v for k, v in resolved.items() if k not in FRAMEWORK_CONFIG}
    for key in ("name", "connector.class", "tasks.max"):
        if key in resolved:
            connector_props[key] = resolved[key]
    connector = _connector_report(
        connector_props, problems, None if plugin_path is None else str(plugin_path)
    )
    warnings = transform_config_warnings(props) + _converter_warnings(props)
    unknown = unknown_options(props, connector) if connector is not None else {}
    if problems and unknown:
        problems = {**{name: [text] for name, text in unknown.items()}, **problems}
    else:
        warnings += list(unknown.values())
    return problems, warnings


def validate_source_options(options: Mapping[str, Any] | DataSourceOptions) -> list[str]:
    """The warnings about `options`; raises `InvalidConfigError` listing every problem."""
    problems, warnings = source_config_report(options)
    if problems:
        raise InvalidConfigError(problems)
    return warnings
