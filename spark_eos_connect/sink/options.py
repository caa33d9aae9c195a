"""The sink writer's options (`writeStream.format("eosconnect")` for a sink connector).

`check_sink_options` parses them once: it splits them into the framework's values, the
connector's own props, the Kafka client settings, the converters' and transforms' options and
the `errors.*` policy, and lists every problem by option on the way (framework, converters,
transforms, predicates, `errors.*`), references to config providers resolved.
`parse_sink_options` raises its problems; `sink_config_problems` returns them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from spark_eos_connect.api.config import (
    ConfigDef,
    ConfigType,
    InvalidConfigError,
    Range,
    props_with_prefix,
)
from spark_eos_connect.converters import make_converter, make_header_converter
from spark_eos_connect.errors import ConfigError
from spark_eos_connect.runtime.config.config_references import (
    ConfigProviders,
    has_reference,
)
from spark_eos_connect.runtime.config.connect_options import ACCEPTED_VALUES
from spark_eos_connect.runtime.config.framework_config import TAKEOVER_CONFIG, WORKER_CONFIG
from spark_eos_connect.runtime.config.option_names import unknown_option_message
from spark_eos_connect.runtime.config.options import DataSourceOptions
from spark_eos_connect.runtime.errors_dlq import ERRORS_CONFIG, ErrorPolicy
from spark_eos_connect.sink.kafka_input import READER_CONFIG

MAX_POLL_RECORDS = "consumer.override.max.poll.records"

SINK_FRAMEWORK_CONFIG = (
    ConfigDef()
    .define("name", ConfigType.STRING, importance="high", doc="Unique connector name.")
    .define(
        "connector.class",
        ConfigType.STRING,
        importance="high",
        doc="The sink connector: a dotted Python path or a shipped short name.",
    )
    .define(
        "tasks.max",
        ConfigType.INT,
        1,
        Range.at_least(1),
        "high",
        "The number of sink tasks, as in Connect: the `eosconnect` reader given the connector's "
        "options (`connector.class` among them; the writer takes them) plans min(tasks.max, "
        "partitions) Spark tasks, the subscribed partitions dealt to them in turn; Spark task "
        "i runs the connector's task config i (i mod their number if it returns fewer).",
    )
    .define(
        "key.converter",
        ConfigType.STRING,
        "ByteArrayConverter",
        None,
        "medium",
        "Turns key bytes into record keys and `key_schema`: a Kafka Connect converter by class "
        "or short name (ByteArrayConverter, StringConverter, JsonConverter, LongConverter, ...); "
        "its options are `key.converter.<option>`, e.g. `key.converter.schemas.enable`.",
    )
    .define(
        "value.converter",
        ConfigType.STRING,
        "ByteArrayConverter",
        None,
        "medium",
        "Turns value bytes into record values and `value_schema`, as `key.converter` does; "
        "options `value.converter.<option>`.",
    )
    .define(
        "header.converter",
        ConfigType.STRING,
        "ByteArrayConverter",
        None,
        "low",
        "Turns header bytes into header values; options `header.converter.<option>`. The "
        "default keeps the bytes (Connect's default is SimpleHeaderConverter: set it to get "
        "Connect's header values).",
    )
    .define(
        MAX_POLL_RECORDS,
        ConfigType.INT,
        500,
        Range.at_least(1),
        "low",
        "The most records one `put` call receives.",
    )
    .merge(TAKEOVER_CONFIG)
    .merge(ERRORS_CONFIG)
)

CONVERTER_OPTIONS = ("key.converter", "value.converter", "header.converter")


def converter_options(options: Mapping[str, Any]) -> dict[str, str]:
    """Every `<key|value|header>.converter.<option>` option (the converters' own settings)."""
    prefixes = tuple(f"{name}." for name in CONVERTER_OPTIONS)
    return {k: str(v) for k, v in options.items() if k.startswith(prefixes)}


@dataclass(frozen=True)
class SinkOptions:
    """Parsed writer options: framework values, connector props, Kafka client settings."""

    values: dict[str, Any]
    connector_props: dict[str, str]
    kafka: dict[str, str]
    errors: ErrorPolicy
    providers: ConfigProviders = field(default_factory=ConfigProviders)
    converter_options: dict[str, str] = field(default_factory=dict)
    transform_options: dict[str, str] = field(default_factory=dict)


TRANSFORMS = "transforms"
PREDICATES = "predicates"


def transform_options(options: Mapping[str, Any]) -> dict[str, str]:
    """`transforms`, `predicates` and every `transforms.*`/`predicates.*` option."""
    prefixes = (f"{TRANSFORMS}.", f"{PREDICATES}.")
    return {
        k: str(v)
        for k, v in options.items()
        if k in (TRANSFORMS, PREDICATES) or k.startswith(prefixes)
    }


def has_chain(options: Mapping[str, Any]) -> bool:
    """Whether `transforms` names at least one alias."""
    return bool(str(options.get(TRANSFORMS) or "").strip(" ,"))


Problems = dict[str, list[str]]


def _add(problems: Problems, found: Mapping[str, Iterable[str]]) -> None:
    for name, messages in found.items():
        problems.setdefault(name, []).extend(messages)


def _messages(option: str, error: ConfigError) -> Problems:
    """An error's problems by option (a plain `ConfigError` is filed under `option`)."""
    if isinstance(error, InvalidConfigError):
        return error.problems
    text = str(error)
    return {option: [text if option in text else f"{option}: {text}"]}


def sink_config_problems(options: Mapping[str, Any] | DataSourceOptions) -> Problems:
    """Every problem of a sink writer's options by option name (`check_sink_options`)."""
    return check_sink_options(options)[1]


def check_sink_options(
    options: Mapping[str, Any] | DataSourceOptions,
) -> tuple[SinkOptions | None, Problems]:
    """The one parse of a sink writer's options: the parsed options, or None and every problem
    by option name: `kafka.bootstrap.servers`, the framework's options, each converter and its
    options, `transforms`/`predicates` (each transformation and predicate configured, then
    closed) and `errors.*`. References to config providers are resolved for the check, and
    kept in what is returned; the connector's own options are its `validate`'s business."""
    from spark_eos_connect.runtime.config.connect_options import alias_case_problems
    from spark_eos_connect.transforms import parse_transform_chain, transform_config_problems

    problems: Problems = {}
    read = DataSourceOptions.read(options)
    if "bootstrap.servers" not in read.kafka:
        problems["kafka.bootstrap.servers"] = [
            "Missing option kafka.bootstrap.servers: the Kafka cluster whose consumer group "
            "connect-<name> receives the committed offsets"
        ]
    providers, props = read.providers, read.props
    if read.providers_error is not None:
        _add(problems, _messages("config.providers", read.providers_error))
    _add(problems, alias_case_problems(props))
    resolved: dict[str, Any] = {}
    framework = {**converter_options(props), **transform_options(props)}
    framework.update({k: v for k, v in props.items() if k in SINK_FRAMEWORK_CONFIG})
    for name, value in framework.items():  # the connector's own options resolve in plan_sink
        try:
            resolved[name] = providers.resolve({name: value})[name]
        except ConfigError as error:
            _add(problems, _messages(name, error))
            resolved[name] = value
    values: dict[str, Any] = {}
    try:
        values = SINK_FRAMEWORK_CONFIG.parse(
            {k: v for k, v in resolved.items() if k in SINK_FRAMEWORK_CONFIG}
        )
    except InvalidConfigError as error:
        _add(problems, error.problems)
    for name in CONVERTER_OPTIONS:
        if name in problems:
            continue
        converter = str(values.get(name) or resolved.get(name) or "ByteArrayConverter")
        own = props_with_prefix(resolved, f"{name}.")
        try:
            if name == "header.converter":
                make_header_converter(converter, own)
            else:
                make_converter(converter, own, is_key=name == "key.converter")
        except ConfigError as error:
            _add(problems, _messages(name, error))
    chain_problems = transform_config_problems(resolved)
    _add(problems, chain_problems)
    if not chain_problems and has_chain(resolved):
        try:
            parse_transform_chain(resolved).close()
        except ConfigError as error:
            _add(problems, _messages(TRANSFORMS, error))
    if problems:
        return None, problems
    connector_props = {k: str(v) for k, v in props.items() if k not in SINK_FRAMEWORK_CONFIG}
    for key in ("name", "connector.class", "tasks.max"):  # references stay references
        raw = props.get(key)
        connector_props[key] = str(raw) if has_reference(raw) else str(values[key])
    parsed = SinkOptions(
        values,
        connector_props,
        read.kafka,
        ErrorPolicy.from_values(values["name"], values),
        providers,
        converter_options(props),
        transform_options(props),
    )
    return parsed, {}


SPARK_WRITER_OPTIONS = frozenset({"checkpointlocation", "path", "queryname"})
"""Options Spark itself hands a writer (lower case, as the writer sees them)."""


def unknown_sink_options(
    props: Mapping[str, Any], class_name: str, defined: Iterable[str]
) -> dict[str, str]:
    """The connector props (`SinkOptions.connector_props`) that neither the framework, the
    Kafka reader, Spark nor the connector (`defined`: its `config_def` names) reads, each with
    its message and a did-you-mean; none when the connector defines no options (it may read
    anything)."""
    own = set(defined)
    if not own:
        return {}
    known = (
        set(SINK_FRAMEWORK_CONFIG.names())
        | set(WORKER_CONFIG.names())
        | set(READER_CONFIG.names())
        | {TRANSFORMS, PREDICATES, *ACCEPTED_VALUES, *SPARK_WRITER_OPTIONS}
        | own
    )
    prefixes = tuple(f"{p}." for p in (*CONVERTER_OPTIONS, TRANSFORMS, PREDICATES, "kafka"))
    return {
        name: f"{unknown_option_message(name, class_name, known)}; the connector ignores it"
        for name in sorted(props)
        if name.lower() not in known and name not in known and not name.startswith(prefixes)
    }


def parse_sink_options(options: Mapping[str, Any] | DataSourceOptions) -> SinkOptions:
    """Parse `writeStream.format("eosconnect")` options for a sink connector; raises one
    `InvalidConfigError` listing every problem (`check_sink_options`)."""
    parsed, problems = check_sink_options(options)
    if parsed is None:
        raise InvalidConfigError(problems)
    return parsed
