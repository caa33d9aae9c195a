"""The framework's own options (worker- and connector-level, as Kafka Connect names them).

Spark passes data source options case-insensitively (lower-cased), so the Spark-style options
are defined in lower case here (`maxRecordsPerTrigger` arrives as `maxrecordspertrigger`).
`config.providers*` options name the config providers (worker-level, as in Connect); values may
hold `${provider:[path:]key}` references (`runtime.config_references`), kept as they are here
and resolved where they are used. Everything else that is not `kafka.`-prefixed belongs to the
connector, including Connect's converter, `transforms`/`predicates` and `errors.*` options,
which the source pipeline also reads (`runtime.source_conversion`), as a Connect worker does.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from spark_eos_connect.api.config import (
    ConfigDef,
    ConfigType,
    CountOrBrokerDefault,
    InvalidConfigError,
    NonEmptyString,
    Range,
    ValidString,
)
from spark_eos_connect.errors import ConfigError
from spark_eos_connect.runtime.config_references import (
    ConfigProviders,
    has_reference,
    is_provider_option,
)
from spark_eos_connect.runtime.connect_options import (
    alias_case_problems,
    refused_option_problems,
    restore_alias_case,
)
from spark_eos_connect.runtime.errors_dlq import SOURCE_ERRORS_CONFIG
from spark_eos_connect.source.conversion import (
    CONVERTER_OPTIONS,
    conversion_option_names,
    parse_record_conversion,
)
from spark_eos_connect.source.plan import RecordConversion

KAFKA_PREFIX = "kafka."
REPLICATION_DOC = (
    "Replication factor of the {topic} when created (-1: the brokers' default.replication."
    "factor); more than the brokers up is refused. Left at 3 on a single-broker cluster: 1, "
    "with a warning."
)


@dataclass(frozen=True)
class InternalTopicSettings:
    """How the internal topics are created: Connect's `*.storage.replication.factor` (None:
    left at the default) and `*.storage.partitions` options."""

    config_replication: int | None = None
    offsets_replication: int | None = None
    status_replication: int | None = None
    offsets_partitions: int = 25
    status_partitions: int = 5

    @classmethod
    def from_values(cls, values: Mapping[str, Any], given: Iterable[str]) -> InternalTopicSettings:
        """The settings from parsed worker `values`; `given` names the options set."""
        given = set(given)

        def chosen(option: str) -> int | None:
            return int(values[option]) if option in given else None

        return cls(
            config_replication=chosen("config.storage.replication.factor"),
            offsets_replication=chosen("offset.storage.replication.factor"),
            status_replication=chosen("status.storage.replication.factor"),
            offsets_partitions=int(values["offset.storage.partitions"]),
            status_partitions=int(values["status.storage.partitions"]),
        )


WORKER_CONFIG = (
    ConfigDef()
    .define(
        "group.id",
        ConfigType.STRING,
        "eosconnect",
        NonEmptyString(),
        "high",
        "The Connect cluster this driver acts for; prefixes every transactional id.",
    )
    .define(
        "config.storage.topic",
        ConfigType.STRING,
        "eosconnect-configs",
        NonEmptyString(),
        "high",
        "Compacted, one-partition topic of connector and task configs.",
    )
    .define(
        "offset.storage.topic",
        ConfigType.STRING,
        "eosconnect-offsets",
        NonEmptyString(),
        "high",
        "The worker's global, compacted source-offsets topic.",
    )
    .define(
        "offset.storage.partitions",
        ConfigType.INT,
        25,
        CountOrBrokerDefault(),
        "low",
        "Partitions of the offsets topics when they are created (-1: the broker's default).",
    )
    .define(
        "offset.storage.replication.factor",
        ConfigType.INT,
        3,
        CountOrBrokerDefault(),
        "low",
        REPLICATION_DOC.format(topic="offsets topics"),
    )
    .define(
        "config.storage.replication.factor",
        ConfigType.INT,
        3,
        CountOrBrokerDefault(),
        "low",
        REPLICATION_DOC.format(topic="config topic"),
    )
    .define(
        "status.storage.topic",
        ConfigType.STRING,
        "eosconnect-status",
        NonEmptyString(),
        "high",
        "Compacted topic of connector and task states.",
    )
    .define(
        "status.storage.partitions",
        ConfigType.INT,
        5,
        CountOrBrokerDefault(),
        "low",
        "Partitions of the status topic when it is created (-1: the broker's default).",
    )
    .define(
        "status.storage.replication.factor",
        ConfigType.INT,
        3,
        CountOrBrokerDefault(),
        "low",
        REPLICATION_DOC.format(topic="status topic"),
    )
    .define(
        "exactly.once.source.support",
        ConfigType.STRING,
        "enabled",
        ValidString.one_of("enabled", "preparing", "disabled", case_insensitive=True),
        "high",
        "`enabled`: source tasks write records and offsets in one transaction; "
        "`disabled`/`preparing`: at-least-once (records first, then offsets).",
    )
)

CONNECTOR_FRAMEWORK_CONFIG = (
    ConfigDef()
    .define(
        "name",
        ConfigType.STRING,
        validator=NonEmptyString(),
        importance="high",
        doc="Unique connector name; keys its offsets, task ids and consumer group.",
    )
    .define(
        "connector.class",
        ConfigType.STRING,
        validator=NonEmptyString(),
        importance="high",
        doc="Dotted Python path `package.module.Class` or a shipped short name.",
    )
    .define(
        "tasks.max",
        ConfigType.INT,
        1,
        Range.at_least(1),
        "high",
        "Maximum number of tasks; each source task is one Spark input partition.",
    )
    .define(
        "exactly.once.support",
        ConfigType.STRING,
        "requested",
        ValidString.one_of("requested", "required", case_insensitive=True),
        "medium",
        "`required` refuses to start unless the connector declares exactly-once support.",
    )
    .define(
        "transaction.boundary",
        ConfigType.STRING,
        "poll",
        ValidString.one_of("poll", "interval", "connector", case_insensitive=True),
        "medium",
        "`poll`: one transaction per task per micro-batch; `interval`: every "
        "`transaction.boundary.interval.ms`; `connector`: the task's TransactionContext.",
    )
    .define(
        "transaction.boundary.interval.ms",
        ConfigType.LONG,
        60000,
        Range.at_least(1),
        "low",
        "Transaction length with `transaction.boundary=interval`.",
    )
    .define(
        "offsets.storage.topic",
        ConfigType.STRING,
        None,
        None,
        "low",
        "A dedicated offsets topic for this connector (mirrored to the global one).",
    )
    .define(
        "maxrecordspertrigger",
        ConfigType.LONG,
        100000,
        Range.at_least(1),
        "medium",
        "`maxRecordsPerTrigger`: records per micro-batch across all tasks.",
    )
    .define(
        "maxpolldurationms",
        ConfigType.LONG,
        5000,
        Range.at_least(1),
        "low",
        "`maxPollDurationMs`: how long a task polls within one micro-batch at most.",
    )
)

FRAMEWORK_CONFIG = WORKER_CONFIG.merge(CONNECTOR_FRAMEWORK_CONFIG)


@dataclass(frozen=True)
class SourcePipelineConfig:
    """Parsed options of a source pipeline: framework settings, Kafka client settings, the rest."""

    name: str
    connector_class: str
    tasks_max: int
    group_id: str
    config_topic: str
    global_offsets_topic: str
    topics: InternalTopicSettings
    status_topic: str
    exactly_once: bool
    exactly_once_required: bool
    transaction_boundary: str
    transaction_interval_ms: int
    connector_offsets_topic: str | None
    max_records_per_trigger: int
    max_poll_duration_ms: int
    kafka: dict[str, str] = field(default_factory=dict)
    connector_props: dict[str, str] = field(default_factory=dict)
    providers: ConfigProviders = field(default_factory=ConfigProviders)
    """The config providers; `kafka` and `connector_props` hold references unresolved."""
    conversion: RecordConversion | None = None
    """Converters, transforms and `errors.*` of the records; None: records go as they are."""

    @property
    def primary_offsets_topic(self) -> str:
        """Where tasks commit offsets transactionally: the dedicated topic if any, else global."""
        return self.connector_offsets_topic or self.global_offsets_topic

    def task_transactional_id(self, task: int) -> str:
        """`<group.id>-<connector>-<task>`, the transactional id of one source task."""
        return f"{self.group_id}-{self.name}-{task}"

    @property
    def leader_transactional_id(self) -> str:
        """`connect-cluster-<group.id>`, the config-topic leader's transactional id."""
        return f"connect-cluster-{self.group_id}"

    @property
    def offsets_transactional_id(self) -> str:
        """`<group.id>-<connector>`, used when offsets are altered or reset."""
        return f"{self.group_id}-{self.name}"


def split_options(options: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """(options without `kafka.`, Kafka client settings with the prefix removed)."""
    kafka = {
        k[len(KAFKA_PREFIX) :]: str(v) for k, v in options.items() if k.startswith(KAFKA_PREFIX)
    }
    rest = {k: v for k, v in options.items() if not k.startswith(KAFKA_PREFIX)}
    return rest, kafka


def parse_source_pipeline(options: Mapping[str, Any]) -> SourcePipelineConfig:
    """Parse data source options; raises ConfigError naming every bad option."""
    rest, kafka = split_options({str(k).lower(): v for k, v in options.items()})
    if "bootstrap.servers" not in kafka:
        raise ConfigError(
            "Missing option kafka.bootstrap.servers: the Kafka cluster to write to "
            "(e.g. .option('kafka.bootstrap.servers', 'localhost:9092'))"
        )
    if "transactional.id" in kafka:
        raise ConfigError(
            "Option kafka.transactional.id cannot be set: source tasks use "
            "<group.id>-<connector>-<task> so that zombie tasks are fenced"
        )
    providers = ConfigProviders.from_options(rest)
    rest = restore_alias_case({k: v for k, v in rest.items() if not is_provider_option(k)})
    problems = {**alias_case_problems(rest), **refused_option_problems(rest)}
    if problems:
        raise InvalidConfigError(problems)
    values = parse_framework_values(rest, providers)
    connector_props = {k: str(v) for k, v in rest.items() if k not in FRAMEWORK_CONFIG}
    for key in ("name", "connector.class", "tasks.max"):  # references stay references
        raw = rest.get(key)
        connector_props[key] = str(raw) if has_reference(raw) else str(values[key])
    conversion = parse_record_conversion(
        values["name"], connector_props, providers.resolve(record_options(connector_props))
    )
    return SourcePipelineConfig(
        name=values["name"],
        connector_class=values["connector.class"],
        tasks_max=values["tasks.max"],
        group_id=values["group.id"],
        config_topic=values["config.storage.topic"],
        global_offsets_topic=values["offset.storage.topic"],
        topics=InternalTopicSettings.from_values(values, rest),
        status_topic=values["status.storage.topic"],
        exactly_once=values["exactly.once.source.support"].lower() == "enabled",
        exactly_once_required=values["exactly.once.support"].lower() == "required",
        transaction_boundary=values["transaction.boundary"].lower(),
        transaction_interval_ms=values["transaction.boundary.interval.ms"],
        connector_offsets_topic=values["offsets.storage.topic"],
        max_records_per_trigger=values["maxrecordspertrigger"],
        max_poll_duration_ms=values["maxpolldurationms"],
        kafka=kafka,
        connector_props=connector_props,
        providers=providers,
        conversion=conversion,
    )


def record_options(props: Mapping[str, Any]) -> dict[str, Any]:
    """The options that decide how records are converted: converters, chain, `errors.*`."""
    names = {*conversion_option_names(props), *CONVERTER_OPTIONS, *SOURCE_ERRORS_CONFIG.names()}
    return {k: v for k, v in props.items() if k in names}


def parse_framework_values(rest: Mapping[str, Any], providers: ConfigProviders) -> dict[str, Any]:
    """`FRAMEWORK_CONFIG`'s values, references resolved (the driver needs them; no secrets)."""
    if has_reference(rest.get("name")):
        raise ConfigError("Option name cannot hold a ${provider:...} reference: it keys the config")
    return FRAMEWORK_CONFIG.parse(
        providers.resolve({k: v for k, v in rest.items() if k in FRAMEWORK_CONFIG})
    )
