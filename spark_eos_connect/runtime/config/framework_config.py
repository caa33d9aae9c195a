"""The framework's own options (worker- and connector-level, as Kafka Connect names them).

Spark passes data source options case-insensitively (lower-cased), so the Spark-style options
are defined in lower case here (`maxRecordsPerTrigger` arrives as `maxrecordspertrigger`).
`config.providers*` options name the config providers (worker-level, as in Connect); values may
hold `${provider:[path:]key}` references (`runtime.config.config_references`), kept as they are here
and resolved where they are used. Everything else that is not `kafka.`-prefixed belongs to the
connector, including Connect's converter, `transforms`/`predicates` and `errors.*` options,
which the source pipeline also reads (`source.config`), as a Connect worker does.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from spark_eos_connect.api.config import (
    ConfigDef,
    ConfigType,
    CountOrBrokerDefault,
    NonEmptyString,
    Range,
    ValidString,
)
from spark_eos_connect.errors import ConfigError
from spark_eos_connect.runtime.config.config_references import (
    ConfigProviders,
    has_reference,
)

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


@dataclass(frozen=True)
class WorkerConfig:
    """What every role of a Connect worker reads alike from the worker's options: its cluster
    (`group.id`), the three internal topics and how they are created, and whether source tasks
    run exactly once (the defaults are `WORKER_CONFIG`'s)."""

    group_id: str = "eosconnect"
    config_topic: str = "eosconnect-configs"
    offsets_topic: str = "eosconnect-offsets"
    status_topic: str = "eosconnect-status"
    exactly_once: bool = True
    topics: InternalTopicSettings = field(default_factory=InternalTopicSettings)
    """How the internal topics are created (Connect's `*.storage.*` options)."""
    plugin_path: str | None = None
    """Connect's `plugin.path`: folders of Java plugins (`jvm_tasks.resolution`)."""

    @staticmethod
    def fields_from(values: Mapping[str, Any], given: Iterable[str]) -> dict[str, Any]:
        """This class's fields from parsed `WORKER_CONFIG` `values` (`given`: the options
        set), for a subclass's constructor."""
        return {
            "group_id": values["group.id"],
            "config_topic": values["config.storage.topic"],
            "offsets_topic": values["offset.storage.topic"],
            "status_topic": values["status.storage.topic"],
            "exactly_once": values["exactly.once.source.support"].lower() == "enabled",
            "topics": InternalTopicSettings.from_values(values, given),
            "plugin_path": values["plugin.path"],
        }


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
    .define(
        "plugin.path",
        ConfigType.STRING,
        None,
        None,
        "medium",
        "Folders of Kafka Connect Java plugins, comma-separated, scanned as Connect scans "
        "them. A source connector whose `connector.class` one of them holds runs as that Java "
        "plugin, in a JVM task host, exactly once like the Python connectors; a class they do "
        "not hold resolves to this project's connectors as without it.",
    )
)

TAKEOVER = "takeover"
TAKEOVER_CONFIG = ConfigDef().define(
    TAKEOVER,
    ConfigType.BOOLEAN,
    False,
    None,
    "low",
    "Take the connector over from another driver whose query still runs it (that query "
    "is fenced and stops). Without it such a start is refused; a driver that crashed is "
    "taken over without it once its liveness lapses (`runtime.lifecycle.liveness`).",
)
"""`takeover`, about one run of a query rather than the connector: read by source and sink
queries alike (`CONNECTOR_FRAMEWORK_CONFIG`, `sink.options.SINK_FRAMEWORK_CONFIG`)."""

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
        "`maxRecordsPerTrigger`: records per micro-batch across all tasks (under the poll "
        "and interval transaction boundaries a task ends a micro-batch between two of its "
        "polls: it may exceed this by the rest of its last poll).",
    )
    .define(
        "maxpolldurationms",
        ConfigType.LONG,
        5000,
        Range.at_least(1),
        "low",
        "`maxPollDurationMs`: how long a task polls within one micro-batch at most.",
    )
).merge(TAKEOVER_CONFIG)

FRAMEWORK_CONFIG = WORKER_CONFIG.merge(CONNECTOR_FRAMEWORK_CONFIG)


def parse_framework_values(rest: Mapping[str, Any], providers: ConfigProviders) -> dict[str, Any]:
    """`FRAMEWORK_CONFIG`'s values, references resolved (the driver needs them; no secrets)."""
    if has_reference(rest.get("name")):
        raise ConfigError("Option name cannot hold a ${provider:...} reference: it keys the config")
    return FRAMEWORK_CONFIG.parse(
        providers.resolve({k: v for k, v in rest.items() if k in FRAMEWORK_CONFIG})
    )
