"""Reading offset ranges of Kafka topics with read_committed consumers, as Arrow batches (the
executor side of the sink's Kafka input; the planning is `sink.kafka_input`'s).

An `OffsetRange` is records `[start, end)` of one topic partition. `read_ranges` reads a Spark
task's ranges through one consumer, building each batch column by column (`records_batch`):
`map` over the C methods of librdkafka's messages, no Python bytecode per record.
"""

from __future__ import annotations

import bisect
import operator
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

import numpy as np
import pyarrow as pa
from confluent_kafka import Consumer, KafkaError, Message
from confluent_kafka import TopicPartition as KafkaTopicPartition

from spark_eos_connect.errors import EosConnectError
from spark_eos_connect.kafka.client_settings import with_client_defaults
from spark_eos_connect.kafka.clients import NEXT_RECORD_WAIT_S, connected, next_records
from spark_eos_connect.kafka.errors import is_partition_eof, is_unused_group_error, missing_acl

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

T = TypeVar("T")

TP = tuple[str, int]
"""(topic, partition)."""

EARLIEST, LATEST = -2, -1
"""The rows `read_ranges` yields (Spark's DDL: `sink.kafka_input.KAFKA_ROW_DDL`)."""

_FORCED_CONSUMER = {
    "group.id": "eosconnect-range-reader",
    "isolation.level": "read_committed",
    "enable.auto.commit": False,
    "enable.auto.offset.store": False,
    "auto.offset.reset": "earliest",
    "enable.partition.eof": False,
}

"""Settings of a range consumer that `kafka.*` options cannot change."""


@dataclass(frozen=True)
class OffsetRange:
    """Records `[start, end)` of one topic partition: one Spark input partition."""

    topic: str
    partition: int
    start: int
    end: int


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
_MILLIS = operator.itemgetter(1)


def _offset(message: Message) -> int:
    """A record's offset (records always have one)."""
    return message.offset() or 0


def _record_offsets(messages: list[Message]) -> list[int]:
    """The offsets of records (never None: only librdkafka's events have none), through the
    C method: a Python function per record cost a tenth of a sink task's time."""
    return cast(list[int], list(map(Message.offset, messages)))


def _constant(value: Any, type_: pa.DataType, rows: int) -> pa.Array:
    """`rows` copies of `value` (a dictionary decoded: no Python object per row)."""
    indices = pa.array(np.zeros(rows, dtype=np.int32))  # not fill_null: it imports pandas
    return pa.DictionaryArray.from_arrays(indices, pa.array([value], type_)).dictionary_decode()


def _offsets(messages: list[Message]) -> pa.Array:
    """The offsets of one partition's messages (increasing): a range when they leave no gap,
    as they do outside transactions (no Python object per record), else read one by one."""
    first, last = _offset(messages[0]), _offset(messages[-1])
    if last - first == len(messages) - 1:
        return pa.array(np.arange(first, last + 1, dtype=np.int64))
    return pa.array(list(map(Message.offset, messages)), pa.int64())


def _keys(messages: list[Message]) -> pa.Array:
    """The keys column (nulls without a Python list when no record has a key)."""
    keys = list(map(Message.key, messages))
    if keys.count(None) == len(keys):
        return pa.nulls(len(keys), pa.binary())
    return pa.array(keys, pa.binary())


def _timestamps(millis: list[int]) -> pa.Array:
    """Kafka's epoch milliseconds as timestamps; librdkafka's -1 (no timestamp) is null (Kafka
    accepts no other negative timestamp)."""
    ms = pa.array(millis, pa.int64())
    none = pa.scalar(None, pa.int64())  # not at import: pyarrow then imports pandas
    import pyarrow.compute as pc  # here: the driver imports this module too, and pc takes 40 ms

    return pc.if_else(pc.less(ms, 0), none, pc.multiply(ms, 1000)).cast(_TIMESTAMP_TYPE)


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
        _offsets(messages),
        _timestamps(list(map(_MILLIS, map(Message.timestamp, messages)))),
        _keys(messages),
        pa.array(list(map(Message.value, messages)), pa.binary()),
        _headers(messages),
    ]
    return pa.RecordBatch.from_arrays(arrays, schema=KAFKA_ROW_SCHEMA)


Headers = tuple[tuple[str, bytes | None], ...]


@dataclass(frozen=True)
class MessageColumns:
    """One partition's records as columns for a sink task (`sink.rows.RecordChunk`): plain
    lists where the task reads values one by one, Arrow arrays for the keys and values its
    converters convert a column at a time. Taken from librdkafka's messages once."""

    topic: str
    partition: int
    offsets: list[int]
    keys: pa.Array
    values: pa.Array
    timestamps: list[int | None]
    """Epoch milliseconds; None where librdkafka has none (-1)."""
    headers: list[Headers]

    def __len__(self) -> int:
        return len(self.offsets)


def message_columns(topic: str, partition: int, messages: list[Message]) -> MessageColumns:
    """The columns of one partition's messages (`map` over the C methods of `Message`)."""
    millis = list(map(_MILLIS, map(Message.timestamp, messages)))
    if min(millis) < 0:
        millis = [None if ms < 0 else ms for ms in millis]
    raw_headers: list[Any] = list(map(Message.headers, messages))
    headers: list[Headers] = (
        [tuple(h) if h else () for h in raw_headers] if any(raw_headers) else [()] * len(messages)
    )
    return MessageColumns(
        topic,
        partition,
        _record_offsets(messages),
        _keys(messages),
        pa.array(list(map(Message.value, messages)), pa.binary()),
        millis,
        headers,
    )


def _range_failed(
    kafka: Mapping[str, Any], topic: str, partition: int | None, error: KafkaError
) -> EosConnectError:
    """The error to raise for a failed fetch of a partition (`partition` None: of any): a
    missing ACL is named."""
    denied = missing_acl(error, "Read and Describe", topic, kafka)
    where = topic if partition is None else f"{topic}-{partition}"
    return denied or EosConnectError(f"reading {where} failed: {error}")


def _without_events(
    kafka: Mapping[str, Any], reading: Mapping[TP, OffsetRange], messages: list[Message]
) -> list[Message]:
    """`messages` without librdkafka's harmless events; a fetch error raises, naming its
    partition (or the partitions being read, for an error of none)."""
    if not any(map(Message.error, messages)):
        return messages
    kept = []
    for message in messages:
        error = message.error()
        if error is None:
            kept.append(message)
        elif not is_partition_eof(error) and not is_unused_group_error(error):
            topic = message.topic()
            if topic is None:
                topic = ", ".join(sorted({t for t, _ in reading}))
            raise _range_failed(kafka, topic, message.partition(), error)
    return kept


def partition_runs(messages: list[Message], one_topic: bool) -> Iterator[tuple[TP, list[Message]]]:
    """`messages` cut into runs of one partition each, in order (librdkafka hands a fetch's
    records partition by partition). `one_topic`: all are of one topic, so the partition
    number tells them apart. The cuts are found by numpy, not a Python step per record."""
    if not messages:
        return
    numbers = cast(list[int], list(map(Message.partition, messages)))
    if one_topic and numbers.count(numbers[0]) == len(numbers):
        yield (cast(str, messages[0].topic()), numbers[0]), messages
        return
    partitions = np.array(numbers, np.int64)
    changed = partitions[1:] != partitions[:-1]
    if not one_topic:
        topics = np.array(list(map(Message.topic, messages)), dtype=object)
        changed |= topics[1:] != topics[:-1]
    starts = [0, *(np.flatnonzero(changed) + 1).tolist()]
    for start, stop in zip(starts, [*starts[1:], len(messages)], strict=True):
        first = messages[start]
        yield (cast(str, first.topic()), cast(int, first.partition())), messages[start:stop]


def _split_at(messages: list[Message], end: int) -> tuple[list[Message], list[Message]]:
    """`messages` (increasing offsets) before `end`, and from `end` on (fetched ahead)."""
    if not messages or _record_offsets(messages[-1:])[0] < end:
        return messages, []
    cut = bisect.bisect_left(_record_offsets(messages), end)
    return messages[:cut], messages[cut:]


@dataclass
class _Assigned:
    """A partition the range consumer is assigned: where a read continuing it starts
    (`next`), and the records taken from librdkafka from there on but not handed out yet."""

    next: int | None
    """None while a read of the partition is under way (a read left unfinished leaves the
    consumer somewhere past it: the next read seeks)."""
    held: list[Message] = field(default_factory=list)
    paused: bool = False


class RangeReader:
    """One read_committed consumer reading ranges, kept between reads (a live sink task's, for
    its whole life). It only assigns and never commits: like the readers of the internal
    topics it needs no Group ACL (librdkafka's lookup of its unused group may be refused; see
    `is_unused_group_error`), only Read on the topics.

    A read takes ranges of several partitions at once: the consumer is assigned all of them
    and fetches them together, as a Kafka consumer polls its whole assignment, and each range
    is handed out as its records come. Partitions stay assigned between reads: a range that
    starts where the partition's last one ended continues from there, with the records
    librdkafka fetched ahead meanwhile (so a sink task's next micro-batch continues its
    last); any other start is a seek. Records that come past a range's end are held for the
    next read (the partition paused once `batch_rows` of them wait)."""

    def __init__(
        self, kafka: Mapping[str, Any], poll_timeout_ms: int = 120000, batch_rows: int = 10000
    ) -> None:
        self.kafka = dict(kafka)
        self.poll_timeout_ms = poll_timeout_ms
        self.batch_rows = batch_rows
        self._consumer: Consumer | None = None
        self._assigned: dict[TP, _Assigned] = {}

    def read(self, ranges: Sequence[OffsetRange]) -> Iterator[pa.RecordBatch]:
        """The committed records of `ranges` (at most one per partition), as Arrow batches of
        one partition's records, at most `batch_rows` each; a partition's batches come in
        offset order, the partitions' interleaved as they are fetched.

        With transactions offsets are not contiguous (commit markers, aborted records), so a
        range ends when the consumer's position reaches its end, not after end - start records.
        Records at or past the end are left for a range continuing this one, so a range always
        yields the same records."""
        return self._read(ranges, records_batch)

    def read_columns(self, ranges: Sequence[OffsetRange]) -> Iterator[MessageColumns]:
        """The committed records of `ranges` as `MessageColumns` (see `read`)."""
        return self._read(ranges, message_columns)

    def forget(self, partitions: Iterable[TP]) -> None:
        """Stop fetching `partitions` (a sink task no longer owns them)."""
        gone = [tp for tp in partitions if tp in self._assigned]
        for tp in gone:
            del self._assigned[tp]
        if gone and self._consumer is not None:
            self._consumer.incremental_unassign([KafkaTopicPartition(*tp) for tp in gone])

    def _read(
        self, ranges: Sequence[OffsetRange], make: Callable[[str, int, list[Message]], T]
    ) -> Iterator[T]:
        reading = {(r.topic, r.partition): r for r in ranges if r.end > r.start}
        if len(reading) < sum(1 for r in ranges if r.end > r.start):
            raise ValueError(f"one range per partition in a read: {list(ranges)}")
        if not reading:
            return
        consumer, pending = self._placed(reading)
        one_topic = len({topic for topic, _ in self._assigned}) == 1
        progress: dict[TP, int] = {}
        last_progress = time.monotonic()
        while True:
            positions = self._positions(consumer, reading)
            for tp in [tp for tp, offsets in reading.items() if positions[tp] >= offsets.end]:
                if pending[tp]:
                    yield make(tp[0], tp[1], pending[tp])
                self._assigned[tp].next = reading.pop(tp).end
                del pending[tp]
            if not reading:
                return
            if positions != progress:
                progress, last_progress = positions, time.monotonic()
            elif (time.monotonic() - last_progress) * 1000 > self.poll_timeout_ms:
                raise self._stuck(reading, positions)
            messages = next_records(consumer, self.batch_rows, NEXT_RECORD_WAIT_S)
            records_only = _without_events(self.kafka, reading, messages)
            for tp, run in partition_runs(records_only, one_topic):
                if tp in reading:
                    records, past = _split_at(run, reading[tp].end)
                    pending[tp] += records
                    self._hold(consumer, tp, past)
                    if len(pending[tp]) >= self.batch_rows:
                        yield make(tp[0], tp[1], pending[tp])
                        pending[tp] = []
                else:
                    self._hold(consumer, tp, run)

    def _placed(
        self, reading: Mapping[TP, OffsetRange]
    ) -> tuple[Consumer, dict[TP, list[Message]]]:
        """The consumer, assigned every partition of `reading` at its range's start (a new
        partition is assigned, one whose last read ended elsewhere, or that is paused, seeks),
        and the held records each range starts with."""
        if self._consumer is None:
            settings = with_client_defaults({**_READ_DEFAULTS, **self.kafka, **_FORCED_CONSUMER})
            self._consumer = connected(Consumer(settings))
        consumer = self._consumer
        new = [r for tp, r in reading.items() if tp not in self._assigned]
        if new:
            consumer.incremental_assign([KafkaTopicPartition(*_tp(r), r.start) for r in new])
            self._assigned.update({_tp(r): _Assigned(r.start) for r in new})
        for tp, offsets in reading.items():
            state = self._assigned[tp]
            if state.next == offsets.start and not state.paused:
                continue
            if state.paused:
                consumer.resume([KafkaTopicPartition(*tp)])
            consumer.seek(KafkaTopicPartition(*tp, offsets.start))
            self._assigned[tp] = _Assigned(offsets.start)
        held = {tp: self._take_held(tp, offsets.end) for tp, offsets in reading.items()}
        for tp in reading:
            self._assigned[tp].next = None
        return consumer, held

    def _take_held(self, tp: TP, end: int) -> list[Message]:
        """The held records of `tp` before `end` (a continued range's first records)."""
        state = self._assigned[tp]
        taken, state.held = _split_at(state.held, end)
        return taken

    def _hold(self, consumer: Consumer, tp: TP, messages: list[Message]) -> None:
        """Keep records fetched past what is being read; pause a partition holding enough."""
        state = self._assigned.get(tp)
        if state is None or not messages:
            return  # a partition forgotten since it was fetched
        state.held += messages
        if len(state.held) >= self.batch_rows and not state.paused:
            consumer.pause([KafkaTopicPartition(*tp)])
            state.paused = True

    def _positions(self, consumer: Consumer, reading: Mapping[TP, OffsetRange]) -> dict[TP, int]:
        """How far the consumer is in each partition being read: past the last record it
        took, and past markers and aborted records (at least the range's start)."""
        tps = [KafkaTopicPartition(*tp) for tp in reading]
        return {
            (p.topic, p.partition): max(p.offset, reading[(p.topic, p.partition)].start)
            for p in consumer.position(tps)
        }

    def _stuck(self, reading: Mapping[TP, OffsetRange], positions: Mapping[TP, int]) -> Exception:
        stuck = ", ".join(
            f"{t}-{p} offsets [{r.start}, {r.end}) at {positions[(t, p)]}"
            for (t, p), r in sorted(reading.items())
        )
        return EosConnectError(
            f"no progress reading {stuck} for {self.poll_timeout_ms} ms "
            "(kafkaConsumer.pollTimeoutMs)"
        )

    def close(self) -> None:
        """Close the consumer (a later `read` makes a new one)."""
        self._assigned = {}
        if self._consumer is not None:
            consumer, self._consumer = self._consumer, None
            consumer.close()


def _tp(offsets: OffsetRange) -> TP:
    return (offsets.topic, offsets.partition)


def distinct_partition_runs(ranges: Sequence[OffsetRange]) -> list[list[OffsetRange]]:
    """`ranges` in order, cut where a partition comes again: each run is read at once."""
    runs: list[list[OffsetRange]] = []
    seen: set[TP] = set()
    for offsets in ranges:
        if not runs or _tp(offsets) in seen:
            runs.append([])
            seen = set()
        runs[-1].append(offsets)
        seen.add(_tp(offsets))
    return runs


def read_ranges(
    kafka: Mapping[str, Any],
    ranges: Sequence[OffsetRange],
    poll_timeout_ms: int = 120000,
    batch_rows: int = 10000,
) -> Iterator[pa.RecordBatch]:
    """Executor: the committed records of `ranges` as Arrow batches (each of one partition)
    through one `RangeReader`: the ranges of distinct partitions read together, a partition
    that comes again after the others."""
    if not ranges:
        return
    reader = RangeReader(kafka, poll_timeout_ms, batch_rows)
    try:
        for run in distinct_partition_runs(ranges):
            yield from reader.read(run)
    finally:
        reader.close()


def read_range(
    kafka: Mapping[str, Any],
    offsets: OffsetRange,
    poll_timeout_ms: int = 120000,
    batch_rows: int = 10000,
) -> Iterator[pa.RecordBatch]:
    """Executor: the committed records of one range (`read_ranges`)."""
    return read_ranges(kafka, [offsets], poll_timeout_ms, batch_rows)
