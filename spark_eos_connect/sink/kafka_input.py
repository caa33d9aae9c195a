"""Reading Kafka topics as a stream of offset ranges (the sink side's input, DESIGN §2.2).

Driver side: `KafkaReaderConfig` (options), `KafkaMetadata` (partitions, last stable offsets,
consumer group offsets) and the pure planning functions (`plan_end_offsets`, `plan_ranges`) that
turn Spark's start offsets and the read_committed watermarks into per-partition ranges.
Executor side: `read_range` reads one range with a read_committed consumer into Arrow batches.

Offsets follow Kafka's convention: an offset is the next record to read. Spark sees them as
`{"topic": {"partition": offset}}` JSON, as with Spark's own Kafka source.
"""

from __future__ import annotations

import bisect
import json
import logging
import operator
import re
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from confluent_kafka import (
    Consumer,
    ConsumerGroupTopicPartitions,
    IsolationLevel,
    KafkaError,
    KafkaException,
    Message,
    TopicCollection,
)
from confluent_kafka import TopicPartition as KafkaTopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec

from spark_eos_connect.api.config import ConfigDef, ConfigType, Range
from spark_eos_connect.errors import ConfigError, EosConnectError
from spark_eos_connect.kafka.clients import (
    NEXT_RECORD_WAIT_S,
    OFFSETS_REQUEST_TIMEOUT_S,
    connected,
    is_unused_group_error,
    kafka_error_of,
    listed_offsets,
    missing_acl,
    next_records,
)
from spark_eos_connect.kafka.group_offsets import (
    OutsiderFactory,
    commit_group_offsets,
    outsider_consumer,
)
from spark_eos_connect.kafka.retry import call_with_retries, needs_new_metadata
from spark_eos_connect.runtime.config_references import ConfigProviders
from spark_eos_connect.runtime.framework_config import split_options

log = logging.getLogger(__name__)

TP = tuple[str, int]
"""(topic, partition)."""

KAFKA_ROW_DDL = (
    "topic string, partition int, offset long, timestamp timestamp, key binary, value binary, "
    "headers array<struct<key:string,value:binary>>"
)

KAFKA_ROW_SCHEMA = pa.schema(
    [
        ("topic", pa.string()),
        ("partition", pa.int32()),
        ("offset", pa.int64()),
        ("timestamp", pa.timestamp("us", tz="UTC")),
        ("key", pa.binary()),
        ("value", pa.binary()),
        ("headers", pa.list_(pa.struct([("key", pa.string()), ("value", pa.binary())]))),
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

_FORCED_CONSUMER = {
    "group.id": "eosconnect-range-reader",
    "isolation.level": "read_committed",
    "enable.auto.commit": False,
    "enable.auto.offset.store": False,
    "auto.offset.reset": "earliest",
    "enable.partition.eof": False,
}


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
        return group_id_for(self.name) if self.name else None

    def subscribed(self, topic: str) -> bool:
        """Whether `topic` is read by this stream."""
        if self.topics_regex is not None:
            return not topic.startswith("__") and re.fullmatch(self.topics_regex, topic) is not None
        return topic in self.topics


def group_id_for(connector: str) -> str:
    """Kafka Connect's sink consumer group: `connect-<connector>`."""
    return f"connect-{connector}"


def is_kafka_read(options: Mapping[str, Any]) -> bool:
    """Whether reader options ask for Kafka topics (`topics` or `topics.regex`)."""
    keys = {str(k).lower() for k in options}
    return "topics" in keys or "topics.regex" in keys


def parse_reader_options(options: Mapping[str, Any]) -> KafkaReaderConfig:
    """Parse reader options (case-insensitive; unknown non-`kafka.` options are ignored)."""
    rest, kafka = split_options({str(k).lower(): v for k, v in options.items()})
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
        providers=ConfigProviders.from_options(rest),
    )


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


@dataclass(frozen=True)
class OffsetRange:
    """Records `[start, end)` of one topic partition: one Spark input partition."""

    topic: str
    partition: int
    start: int
    end: int


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


# --- Kafka metadata and group offsets (driver) --------------------------------------------------


_NO_GROUP = (KafkaError.GROUP_ID_NOT_FOUND, KafkaError._UNKNOWN_GROUP)


def _failed(error: KafkaException, what: str) -> EosConnectError:
    return EosConnectError(f"{what} failed: {error}")


def _error_code(error: KafkaException) -> Any:
    """The librdkafka error code carried by `error`, or None."""
    code = getattr(error.args[0], "code", None) if error.args else None
    return code() if callable(code) else None


class KafkaMetadata:
    """Driver: partitions, watermarks and consumer group offsets through one AdminClient; the
    group commits through consumers outside the group."""

    def __init__(
        self,
        kafka: Mapping[str, Any],
        timeout_s: float = 30.0,
        outsider: OutsiderFactory = outsider_consumer,
    ) -> None:
        """`outsider` makes the consumers that commit a group's offsets
        (`kafka.group_offsets`)."""
        self.timeout_s = timeout_s
        self.kafka = dict(kafka)
        self.admin = AdminClient(self.kafka)
        self._outsider = outsider

    def _renew_if_stale(self, error: KafkaError | None) -> None:
        """A new admin client, with fresh metadata, when `error` says the cached is old."""
        if needs_new_metadata(error):
            self.admin = AdminClient(self.kafka)

    def partitions(self, config: KafkaReaderConfig) -> list[TP]:
        """Every partition of the subscribed topics that exist now.

        The broker leaves the topics the principal may not Describe out of the topic list. A
        topic of `topics` missing from it is asked about by name: if the broker refuses it, the
        read fails naming the ACL (else it does not exist yet and is read once it does). For
        `topics.regex` a topic the principal cannot see just does not match, as in Kafka's
        own pattern subscription.
        """
        topics = call_with_retries(
            lambda limit: self.admin.list_topics(timeout=limit).topics,
            "asking the cluster for its topics",
            self.timeout_s,
        )
        found: list[TP] = []
        for name, metadata in topics.items():
            if metadata.error is None and config.subscribed(name):
                found += [(name, p) for p in metadata.partitions]
        if config.topics_regex is None:
            self._check_visible([t for t in config.topics if t not in topics])
        return sorted(found)

    def _check_visible(self, topics: list[str]) -> None:
        """Raise naming the ACL when the broker refuses to describe one of `topics`; any other
        answer (it does not exist yet, ...) leaves it out of this micro-batch as before.

        `describe_topics`, unlike a metadata request for the topic (`list_topics(topic=...)`),
        never has the broker auto-create a topic that does not exist."""
        if not topics:
            return
        futures = self.admin.describe_topics(
            TopicCollection(topics), request_timeout=self.timeout_s
        )
        for topic, future in futures.items():
            try:
                future.result()
            except KafkaException as error:
                denied = missing_acl(error, "Read and Describe", topic, self.kafka)
                if denied is not None:
                    raise denied from None
                log.debug("subscribed topic %s is not readable yet: %s", topic, error)

    def _list_offsets(self, tps: list[TP], spec: OffsetSpec) -> dict[TP, int]:
        if not tps:
            return {}
        request = {KafkaTopicPartition(t, p): spec for t, p in tps}

        def listed(limit: float) -> dict[TP, int]:
            return listed_offsets(self.admin, request, IsolationLevel.READ_COMMITTED, limit)

        try:
            return call_with_retries(
                listed,
                "listing offsets",
                self.timeout_s,
                OFFSETS_REQUEST_TIMEOUT_S,
                before_retry=self._renew_if_stale,
            )
        except KafkaException as error:
            raise _failed(error, f"listing offsets of {sorted(tps)}") from None

    def last_stable_offsets(self, tps: list[TP]) -> dict[TP, int]:
        """The read_committed end of each partition: records below it are decided."""
        return self._list_offsets(tps, OffsetSpec.latest())

    def earliest_offsets(self, tps: list[TP]) -> dict[TP, int]:
        """The first offset still present in each partition."""
        return self._list_offsets(tps, OffsetSpec.earliest())

    def group_offsets(self, group: str) -> dict[TP, int]:
        """The consumer group's committed offsets (next offset to read), `{}` if none (also
        when the group does not exist, e.g. after its offsets were reset). Retried while the
        group's coordinator is not ready (a fresh broker loading its offsets topic), up to the
        client timeout.

        Read once when a query starts, with the Admin API: unlike a consumer's OffsetFetch
        (which only times out), it names a missing Read on the group at once. The commits after
        every micro-batch go through a consumer (`commit_group_offsets`)."""

        def listed_offsets(limit: float) -> Any:
            futures = self.admin.list_consumer_group_offsets(
                [ConsumerGroupTopicPartitions(group)], request_timeout=limit
            )
            return futures[group].result()

        try:
            listed = call_with_retries(
                listed_offsets,
                f"reading offsets of consumer group {group}",
                self.timeout_s,
                before_retry=self._renew_if_stale,
            )
        except KafkaException as error:
            if _error_code(error) in _NO_GROUP:
                return {}
            denied = missing_acl(error, "Read", group, self.kafka)
            raise denied or _failed(error, f"reading offsets of consumer group {group}") from None
        return {
            (tp.topic, tp.partition): tp.offset
            for tp in listed.topic_partitions or []
            if tp.offset >= 0
        }

    def commit_group_offsets(self, group: str, offsets: Mapping[TP, int]) -> None:
        """Set the consumer group's offsets (the group must have no active members).

        A partition the broker refuses fails the commit (the request as a whole may succeed
        with per-partition errors, e.g. Describe but not Read on the group)."""
        try:
            answer = commit_group_offsets(
                self.kafka, group, offsets, self.timeout_s, self._outsider
            )
        except KafkaException as error:
            raise self._commit_failed(group, error, str(error)) from None
        refused = [tp for tp in answer if tp.error is not None]
        if refused:
            detail = "; ".join(f"{tp.topic}-{tp.partition}: {tp.error}" for tp in refused)
            raise self._commit_failed(group, refused[0].error, detail, refused[0].topic)

    def _commit_failed(
        self, group: str, error: Any, detail: str, topic: str | None = None
    ) -> EosConnectError:
        """The error of a refused group commit: a missing ACL is named (Read on the group, or
        on the topic when the topic was refused)."""
        kafka_error = kafka_error_of(error)
        refused_topic = (
            kafka_error is not None and kafka_error.name() == "TOPIC_AUTHORIZATION_FAILED"
        )
        denied = missing_acl(error, "Read", topic if topic and refused_topic else group, self.kafka)
        return denied or EosConnectError(
            f"committing offsets to consumer group {group} failed: {detail} (a group with "
            "active members, e.g. a running Kafka Connect worker, cannot be written)"
        )

    def initial_offsets(self, config: KafkaReaderConfig) -> dict[TP, int]:
        """Where a new query starts: the group's offsets, else `startingOffsets` per partition."""
        tps = self.partitions(config)
        group = self.group_offsets(config.group_id) if config.group_id else {}
        if group:
            log.info("starting from consumer group %s's offsets", config.group_id)
        spec = config.starting_offsets
        explicit = spec if isinstance(spec, dict) else {}
        default = EARLIEST if spec == "earliest" or isinstance(spec, dict) else LATEST
        wanted = {tp: group.get(tp, explicit.get(tp, default)) for tp in tps}
        earliest = self.earliest_offsets([tp for tp, o in wanted.items() if o == EARLIEST])
        latest = self.last_stable_offsets([tp for tp, o in wanted.items() if o == LATEST])
        return {tp: earliest.get(tp, latest.get(tp, offset)) for tp, offset in wanted.items()}


# --- reading ranges (executor) ------------------------------------------------------------------

_READ_DEFAULTS = {
    "fetch.queue.backoff.ms": 10,
    "queued.min.messages": 200_000,
}
"""librdkafka settings of a range consumer that `kafka.*` options may override. Once a
partition's fetch queue holds `queued.min.messages` (100,000 by default) librdkafka postpones the
next fetch by `fetch.queue.backoff.ms`, 1 s by default: a reader draining 10,000 records at a
time waited that second again and again (one partition, 1,000,000 records of 100 B: 245,000
records/s with the defaults, 1,600,000 with a 10 ms backoff)."""

_HEADERS_TYPE = KAFKA_ROW_SCHEMA.field("headers").type
_TIMESTAMP_TYPE = KAFKA_ROW_SCHEMA.field("timestamp").type
_NO_TIMESTAMP = pa.scalar(None, pa.int64())
_MILLIS = operator.itemgetter(1)


def _offset(message: Message) -> int:
    """A record's offset (records always have one)."""
    return message.offset() or 0


def _constant(value: Any, type_: pa.DataType, rows: int) -> pa.Array:
    """`rows` copies of `value` (a dictionary decoded: no Python object per row)."""
    indices = pa.nulls(rows, pa.int32()).fill_null(0)
    return pa.DictionaryArray.from_arrays(indices, pa.array([value], type_)).dictionary_decode()


def _timestamps(millis: list[int]) -> pa.Array:
    """Kafka's epoch milliseconds as timestamps; librdkafka's -1 (no timestamp) is null (Kafka
    accepts no other negative timestamp)."""
    ms = pa.array(millis, pa.int64())
    return pc.if_else(pc.less(ms, 0), _NO_TIMESTAMP, pc.multiply(ms, 1000)).cast(_TIMESTAMP_TYPE)


def _headers(messages: list[Message]) -> pa.Array:
    """The headers column: all null, as usual, without a Python object per row."""
    headers: list[Any] = list(map(Message.headers, messages))
    if not any(headers):
        return pa.nulls(len(messages), _HEADERS_TYPE)
    rows = [[{"key": k, "value": v} for k, v in h] if h else None for h in headers]
    return pa.array(rows, _HEADERS_TYPE)


def records_batch(topic: str, partition: int, messages: list[Message]) -> pa.RecordBatch:
    """The rows of one partition's messages, built column by column (`KAFKA_ROW_SCHEMA`):
    `map` over the C methods of `Message`, no Python bytecode per record."""
    rows = len(messages)
    arrays = [
        _constant(topic, pa.string(), rows),
        _constant(partition, pa.int32(), rows),
        pa.array(list(map(Message.offset, messages)), pa.int64()),
        _timestamps(list(map(_MILLIS, map(Message.timestamp, messages)))),
        pa.array(list(map(Message.key, messages)), pa.binary()),
        pa.array(list(map(Message.value, messages)), pa.binary()),
        _headers(messages),
    ]
    return pa.RecordBatch.from_arrays(arrays, schema=KAFKA_ROW_SCHEMA)


def _range_failed(
    kafka: Mapping[str, Any], offsets: OffsetRange, error: KafkaError
) -> EosConnectError:
    """The error to raise for a failed fetch of `offsets`: a missing ACL is named."""
    denied = missing_acl(error, "Read and Describe", offsets.topic, kafka)
    return denied or EosConnectError(f"reading {offsets.topic}-{offsets.partition} failed: {error}")


def _in(message: Message, offsets: OffsetRange) -> bool:
    """Whether `message` is of the range's partition."""
    return message.partition() == offsets.partition and message.topic() == offsets.topic


def _records_of(
    kafka: Mapping[str, Any], offsets: OffsetRange, messages: list[Message]
) -> list[Message]:
    """The records of `messages` inside the range: librdkafka's harmless events are skipped,
    a fetch error raises, records at or past the end (fetched ahead) are dropped."""
    if any(map(Message.error, messages)):
        kept = []
        for message in messages:
            error = message.error()
            if error is None:
                kept.append(message)
            elif error.code() != KafkaError._PARTITION_EOF and not is_unused_group_error(error):
                raise _range_failed(kafka, offsets, error)
        messages = kept
    if messages and not (_in(messages[0], offsets) and _in(messages[-1], offsets)):
        messages = [m for m in messages if _in(m, offsets)]  # left from the previous range
    if messages and _offset(messages[-1]) >= offsets.end:
        cut = bisect.bisect_left(list(map(_offset, messages)), offsets.end)
        messages = messages[:cut]
    return messages


def _read_one(
    consumer: Consumer,
    kafka: Mapping[str, Any],
    offsets: OffsetRange,
    poll_timeout_ms: int,
    batch_rows: int,
) -> Iterator[pa.RecordBatch]:
    """The records of one range through `consumer` (assigned to its partition alone)."""
    tp = KafkaTopicPartition(offsets.topic, offsets.partition, offsets.start)
    consumer.assign([tp])
    pending: list[Message] = []
    last_progress = time.monotonic()
    position = offsets.start
    while position < offsets.end:
        messages = next_records(consumer, batch_rows, NEXT_RECORD_WAIT_S)
        pending += _records_of(kafka, offsets, messages)
        if len(pending) >= batch_rows:
            yield records_batch(offsets.topic, offsets.partition, pending)
            pending = []
        now = consumer.position([tp])[0].offset
        if now > position:
            position, last_progress = now, time.monotonic()
        elif messages:
            last_progress = time.monotonic()
        elif (time.monotonic() - last_progress) * 1000 > poll_timeout_ms:
            raise EosConnectError(
                f"no progress reading {offsets.topic}-{offsets.partition} offsets "
                f"[{offsets.start}, {offsets.end}) for {poll_timeout_ms} ms; stuck at "
                f"{position} (kafkaConsumer.pollTimeoutMs)"
            )
    if pending:
        yield records_batch(offsets.topic, offsets.partition, pending)


def read_ranges(
    kafka: Mapping[str, Any],
    ranges: Sequence[OffsetRange],
    poll_timeout_ms: int = 120000,
    batch_rows: int = 10000,
) -> Iterator[pa.RecordBatch]:
    """Executor: the committed records of `ranges`, one range after the other, as Arrow batches
    (each batch holds records of one partition).

    With transactions offsets are not contiguous (commit markers, aborted records), so a range
    ends when the consumer's position reaches its end, not after end - start records. Records
    at or past the end are dropped, so a range always yields the same records. One consumer
    reads every range; it only assigns and never commits: like the readers of the internal
    topics it needs no Group ACL (librdkafka's lookup of its unused group may be refused; see
    `is_unused_group_error`), only Read on the topics.
    """
    if not ranges:
        return
    consumer = connected(Consumer({**_READ_DEFAULTS, **kafka, **_FORCED_CONSUMER}))
    try:
        for offsets in ranges:
            yield from _read_one(consumer, kafka, offsets, poll_timeout_ms, batch_rows)
    finally:
        consumer.close()


def read_range(
    kafka: Mapping[str, Any],
    offsets: OffsetRange,
    poll_timeout_ms: int = 120000,
    batch_rows: int = 10000,
) -> Iterator[pa.RecordBatch]:
    """Executor: the committed records of one range (`read_ranges`)."""
    return read_ranges(kafka, [offsets], poll_timeout_ms, batch_rows)
