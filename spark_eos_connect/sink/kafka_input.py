"""Reading Kafka topics as a stream of offset ranges, the sink side's input: "read_committed,
offset ranges planned on the driver, Arrow batches, admission control" (the project's design).

Driver side: `KafkaReaderConfig` (options), `KafkaMetadata` (the subscribed partitions and
where a new query starts, over `kafka.topic_offsets` and the consumer group's committed offsets
of `kafka.group_offsets`) and the pure planning functions
(`plan_end_offsets`, `plan_ranges`, `assign_ranges`) that turn Spark's start offsets and the
read_committed watermarks into per-partition ranges. Executor side: `read_ranges` (from
`kafka.range_reader`) reads a task's ranges with a read_committed consumer into Arrow batches.

Offsets follow Kafka's convention: an offset is the next record to read. Spark sees them as
`{"topic": {"partition": offset}}` JSON, as with Spark's own Kafka source.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from spark_eos_connect.api.config import ConfigDef, ConfigType, Range
from spark_eos_connect.errors import ConfigError
from spark_eos_connect.kafka.group_offsets import KafkaGroupOffsets
from spark_eos_connect.kafka.range_reader import KAFKA_ROW_SCHEMA as KAFKA_ROW_SCHEMA
from spark_eos_connect.kafka.range_reader import OffsetRange
from spark_eos_connect.kafka.range_reader import read_range as read_range
from spark_eos_connect.kafka.range_reader import read_ranges as read_ranges
from spark_eos_connect.kafka.range_reader import records_batch as records_batch
from spark_eos_connect.kafka.topic_offsets import TopicOffsets
from spark_eos_connect.protocol.sink_groups import sink_group_id
from spark_eos_connect.runtime.config.config_references import ConfigProviders
from spark_eos_connect.runtime.config.options import DataSourceOptions

log = logging.getLogger(__name__)

TP = tuple[str, int]
"""(topic, partition)."""

KAFKA_ROW_DDL = (
    "topic string, partition int, offset long, timestamp timestamp, key binary, value binary, "
    "headers array<struct<key:string,value:binary>>"
)
"""The Spark schema of the rows (`KAFKA_ROW_SCHEMA`, in `kafka.range_reader`, in Arrow)."""

SINK_RANGE_DDL = (
    "task int, topic string, partition int, start long, end long, generation long, run string"
)
"""The Spark schema of a sink connector's stream: per micro-batch one row for each partition
assigned to each sink task, with the offsets `[start, end)` planned for it; the task reads the
records itself (`sink.host`)."""

SINK_RANGE_SCHEMA = pa.schema(
    [
        ("task", pa.int32()),
        ("topic", pa.string()),
        ("partition", pa.int32()),
        ("start", pa.int64()),
        ("end", pa.int64()),
        ("generation", pa.int64()),
        ("run", pa.string()),
    ]
)

EARLIEST, LATEST = -2, -1
"""Sentinels in a `startingOffsets` JSON, as in Spark's Kafka source."""

READER_CONFIG = (
    ConfigDef()
    .define("topics", ConfigType.LIST, None, None, "high", "Topics to read (comma-separated).")
    .define(
        "topics.regex",
        ConfigType.STRING,
        None,
        None,
        "high",
        "Read every topic whose whole name matches this regular expression.",
    )
    .define(
        "name",
        ConfigType.STRING,
        None,
        None,
        "medium",
        "Connector name: the stream starts from consumer group `connect-<name>`'s offsets and "
        "follows the connector's target state in the config topic (registered there when "
        "`connector.class` is set); after a stop it continues from the group's offsets.",
    )
    .define(
        "startingoffsets",
        ConfigType.STRING,
        "earliest",
        None,
        "medium",
        '`startingOffsets`: `earliest`, `latest` or JSON `{"topic":{"0":42}}` (-2 earliest, '
        "-1 latest) for partitions the consumer group has no offset for.",
    )
    .define(
        "maxrecordspertrigger",
        ConfigType.LONG,
        None,
        None,
        "medium",
        "`maxRecordsPerTrigger`: offsets per micro-batch, shared by partitions by their lag.",
    )
    .define(
        "kafkaconsumer.polltimeoutms",
        ConfigType.LONG,
        120000,
        Range.at_least(1),
        "low",
        "`kafkaConsumer.pollTimeoutMs`: how long an executor waits for its range without "
        "receiving anything before the task fails.",
    )
)


@dataclass(frozen=True)
class KafkaReaderConfig:
    """Parsed options of `readStream.format("eosconnect").option("topics", ...)`."""

    topics: tuple[str, ...]
    topics_regex: str | None
    name: str | None
    starting_offsets: str | dict[TP, int]
    max_records_per_trigger: int | None
    poll_timeout_ms: int
    kafka: dict[str, str]
    providers: ConfigProviders = field(default_factory=ConfigProviders)
    """Resolve `kafka` with these where clients are built (driver and executors)."""

    @property
    def group_id(self) -> str | None:
        """`connect-<name>`, the consumer group holding committed sink offsets."""
        return sink_group_id(self.name) if self.name else None

    def subscribed(self, topic: str) -> bool:
        """Whether `topic` is read by this stream."""
        if self.topics_regex is not None:
            return not topic.startswith("__") and re.fullmatch(self.topics_regex, topic) is not None
        return topic in self.topics


def is_kafka_read(options: Mapping[str, Any] | DataSourceOptions) -> bool:
    """Whether reader options ask for Kafka topics (`topics` or `topics.regex`)."""
    keys = DataSourceOptions.read(options).given
    return "topics" in keys or "topics.regex" in keys


def parse_reader_options(options: Mapping[str, Any] | DataSourceOptions) -> KafkaReaderConfig:
    """Parse reader options (case-insensitive; unknown non-`kafka.` options are ignored)."""
    read = DataSourceOptions.read(options)
    rest, kafka = read.rest, read.kafka
    values = READER_CONFIG.parse(rest)
    topics = tuple(t for t in (values["topics"] or []) if t)
    regex = values["topics.regex"]
    if bool(topics) == bool(regex):
        raise ConfigError("Set exactly one of the options topics and topics.regex")
    if regex:
        try:
            re.compile(regex)
        except re.error as error:
            raise ConfigError(f"Invalid value for topics.regex {regex!r}: {error}") from None
    if "bootstrap.servers" not in kafka:
        raise ConfigError("Missing option kafka.bootstrap.servers: the Kafka cluster to read")
    if "group.id" in kafka:
        raise ConfigError(
            "Option kafka.group.id cannot be set: set option name; offsets are committed to the "
            "consumer group connect-<name>"
        )
    if kafka.get("isolation.level", "read_committed") != "read_committed":
        raise ConfigError("Option kafka.isolation.level must be read_committed (the default)")
    limit = values["maxrecordspertrigger"]
    if limit is not None and limit < 1:
        raise ConfigError(f"Invalid value {limit} for maxRecordsPerTrigger: must be at least 1")
    return KafkaReaderConfig(
        topics=topics,
        topics_regex=regex,
        name=values["name"] or None,
        starting_offsets=parse_starting_offsets(values["startingoffsets"]),
        max_records_per_trigger=limit,
        poll_timeout_ms=values["kafkaconsumer.polltimeoutms"],
        kafka=kafka,
        providers=read.checked_providers(),
    )


def poll_timeout_ms(options: Mapping[str, Any] | DataSourceOptions) -> int:
    """`kafkaConsumer.pollTimeoutMs` of reader (or writer) options, checked."""
    key = "kafkaconsumer.polltimeoutms"
    given = {k: v for k, v in DataSourceOptions.read(options).given.items() if k == key}
    return int(READER_CONFIG.parse(given)[key])


def parse_starting_offsets(text: str) -> str | dict[TP, int]:
    """`earliest`, `latest` or a `{"topic":{"0":42}}` JSON of explicit offsets."""
    stripped = text.strip()
    if stripped.lower() in ("earliest", "latest"):
        return stripped.lower()
    try:
        return offsets_from_json(json.loads(stripped))
    except (ValueError, TypeError, AttributeError) as error:
        raise ConfigError(
            f"Invalid value {text!r} for startingOffsets: expected earliest, latest or JSON like "
            f'{{"topic":{{"0":42}}}} ({error})'
        ) from None


def offsets_to_json(offsets: Mapping[TP, int]) -> dict[str, dict[str, int]]:
    """`{"topic": {"partition": offset}}` in a stable (sorted) order, so equal offsets compare
    equal as JSON text (Spark detects new data by comparing offsets)."""
    result: dict[str, dict[str, int]] = {}
    for topic, partition in sorted(offsets):
        result.setdefault(topic, {})[str(partition)] = int(offsets[(topic, partition)])
    return result


def offsets_from_json(data: Any) -> dict[TP, int]:
    """The inverse of `offsets_to_json`; raises ValueError on a malformed value."""
    if not isinstance(data, dict):
        raise ValueError("offsets must be a JSON object of topics")
    offsets: dict[TP, int] = {}
    for topic, partitions in data.items():
        if not isinstance(partitions, dict):
            raise ValueError(f"offsets of topic {topic!r} must be an object of partitions")
        for partition, offset in partitions.items():
            if isinstance(offset, bool) or not isinstance(offset, int) or offset < EARLIEST:
                raise ValueError(f"bad offset {offset!r} for {topic}-{partition}")
            offsets[(str(topic), int(partition))] = offset
    return offsets


# --- planning (driver, pure) --------------------------------------------------------------------


def prorate(lags: Mapping[TP, int], limit: int) -> dict[TP, int]:
    """Share `limit` offsets among partitions in proportion to their lag (largest remainder).

    Never gives a partition more than its lag; the shares add up to min(limit, total lag).
    """
    total = sum(max(0, lag) for lag in lags.values())
    if total <= limit:
        return {tp: max(0, lag) for tp, lag in lags.items()}
    shares: dict[TP, int] = {}
    remainders: list[tuple[int, TP]] = []
    for tp, lag in lags.items():
        share, remainder = divmod(limit * max(0, lag), total)
        shares[tp] = share
        remainders.append((-remainder, tp))
    left = limit - sum(shares.values())
    for _, tp in sorted(remainders)[:left]:
        shares[tp] += 1
    return shares


def plan_end_offsets(
    start: Mapping[TP, int], latest: Mapping[TP, int], limit: int | None
) -> dict[TP, int]:
    """The end of the next micro-batch: `latest` (the last stable offsets), capped by `limit`.

    Partitions missing from `start` are new and start at 0 (the earliest offset still present);
    partitions missing from `latest` (deleted topics) keep their start; offsets never go back.
    """
    lags = {tp: max(0, latest[tp] - start.get(tp, 0)) for tp in latest}
    shares = prorate(lags, limit) if limit is not None else lags
    end = {tp: offset for tp, offset in start.items() if tp not in latest}
    for tp in latest:
        end[tp] = start.get(tp, 0) + shares[tp]
    return end


def plan_ranges(start: Mapping[TP, int], end: Mapping[TP, int]) -> list[OffsetRange]:
    """The non-empty ranges between two planned offsets (new partitions start at 0)."""
    ranges = []
    for topic, partition in sorted(end):
        first = start.get((topic, partition), 0)
        last = end[(topic, partition)]
        if last > first:
            ranges.append(OffsetRange(topic, partition, first, last))
    return ranges


def assign_ranges(
    partitions: Sequence[TP], ranges: Sequence[OffsetRange], tasks: int
) -> list[tuple[OffsetRange, ...]]:
    """The ranges of `min(tasks, len(partitions))` sink tasks: the subscribed `partitions`,
    sorted, dealt to the tasks in turn (Kafka's round-robin assignor), each task given the
    ranges of its partitions (none when they have no records in the micro-batch). Task i
    keeps the same partitions from one micro-batch to the next while they do not change."""
    count = min(tasks, len(partitions))
    owner = {tp: index % count for index, tp in enumerate(sorted(partitions))} if count else {}
    assigned: list[list[OffsetRange]] = [[] for _ in range(count)]
    for offsets in ranges:
        assigned[owner[(offsets.topic, offsets.partition)]].append(offsets)
    return [tuple(task) for task in assigned]


def task_assignments(
    start: Mapping[TP, int], end: Mapping[TP, int], tasks: int
) -> list[tuple[OffsetRange, ...]]:
    """Every subscribed partition (those of `end`) with its planned `[start, end)`, dealt to
    `min(tasks, partitions)` sink tasks (`assign_ranges`); partitions with nothing new have
    an empty range, so that each task knows its whole assignment."""
    ranges = [OffsetRange(t, p, start.get((t, p), 0), end[(t, p)]) for t, p in sorted(end)]
    return assign_ranges(sorted(end), ranges, tasks)


def ranges_batch(
    task: int, ranges: Sequence[OffsetRange], generation: int, run: str
) -> pa.RecordBatch:
    """The rows of one sink task's share of a micro-batch (`SINK_RANGE_SCHEMA`); `run` names
    the query's run (its reader)."""
    return pa.RecordBatch.from_arrays(
        [
            pa.array([task] * len(ranges), pa.int32()),
            pa.array([r.topic for r in ranges], pa.string()),
            pa.array([r.partition for r in ranges], pa.int32()),
            pa.array([r.start for r in ranges], pa.int64()),
            pa.array([r.end for r in ranges], pa.int64()),
            pa.array([generation] * len(ranges), pa.int64()),
            pa.array([run] * len(ranges), pa.string()),
        ],
        schema=SINK_RANGE_SCHEMA,
    )


@dataclass(frozen=True)
class TaskRanges:
    """One sink task's share of a micro-batch as its rows carry it (`ranges_batch`)."""

    task: int
    generation: int
    run: str
    ranges: tuple[OffsetRange, ...]


def ranges_of(batches: Sequence[pa.RecordBatch]) -> TaskRanges:
    """The task's share from rows made by `ranges_batch` (the inverse)."""
    rows = [row for batch in batches for row in batch.to_pylist()]
    ranges = tuple(OffsetRange(r["topic"], r["partition"], r["start"], r["end"]) for r in rows)
    return TaskRanges(rows[0]["task"], rows[0]["generation"], rows[0]["run"], ranges)


# --- Kafka metadata (driver) --------------------------------------------------------------------


class KafkaMetadata(TopicOffsets):
    """Driver: the subscribed partitions and watermarks through one AdminClient
    (`kafka.topic_offsets`), and where a new query starts (after the consumer group's committed
    offsets, `kafka.group_offsets`)."""

    def partitions(self, config: KafkaReaderConfig) -> list[TP]:
        """Every partition of the subscribed topics that exist now.

        A topic of `topics` the broker does not list is asked about by name: if the broker
        refuses it, the read fails naming the ACL (else it does not exist yet and is read once
        it does). For `topics.regex` a topic the principal cannot see just does not match, as
        in Kafka's own pattern subscription.
        """
        named = config.topics if config.topics_regex is None else None
        return self.topic_partitions(config.subscribed, named)

    def initial_offsets(self, config: KafkaReaderConfig) -> dict[TP, int]:
        """Where a new query starts: the group's offsets, else `startingOffsets` per partition."""
        tps = self.partitions(config)
        groups = KafkaGroupOffsets(self.kafka, self.timeout_s, admin=self.admin)
        group: dict[TP, int] = (
            dict(groups.committed(config.group_id).items()) if config.group_id else {}
        )
        if group:
            log.info("starting from consumer group %s's offsets", config.group_id)
        spec = config.starting_offsets
        explicit = spec if isinstance(spec, dict) else {}
        default = EARLIEST if spec == "earliest" or isinstance(spec, dict) else LATEST
        wanted = {tp: group.get(tp, explicit.get(tp, default)) for tp in tps}
        earliest = self.earliest_offsets([tp for tp, o in wanted.items() if o == EARLIEST])
        latest = self.last_stable_offsets([tp for tp, o in wanted.items() if o == LATEST])
        return {tp: earliest.get(tp, latest.get(tp, offset)) for tp, offset in wanted.items()}
