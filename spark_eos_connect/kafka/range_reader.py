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
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, cast

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from confluent_kafka import Consumer, KafkaError, Message
from confluent_kafka import TopicPartition as KafkaTopicPartition

from spark_eos_connect.errors import EosConnectError
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
    """The records of `offsets`' partition in `messages`: librdkafka's harmless events are
    skipped, a fetch error raises."""
    if any(map(Message.error, messages)):
        kept = []
        for message in messages:
            error = message.error()
            if error is None:
                kept.append(message)
            elif not is_partition_eof(error) and not is_unused_group_error(error):
                raise _range_failed(kafka, offsets, error)
        messages = kept
    if messages and not (_in(messages[0], offsets) and _in(messages[-1], offsets)):
        messages = [m for m in messages if _in(m, offsets)]  # left from the previous range
    return messages


def _split_at(messages: list[Message], end: int) -> tuple[list[Message], list[Message]]:
    """`messages` (increasing offsets) before `end`, and from `end` on (fetched ahead)."""
    if not messages or _record_offsets(messages[-1:])[0] < end:
        return messages, []
    cut = bisect.bisect_left(_record_offsets(messages), end)
    return messages[:cut], messages[cut:]


@dataclass
class _ReadAhead:
    """Where a range consumer stands after reading a range to its end: still assigned to its
    partition, with the records it took past the end. A next range starting at that end
    continues from here, with what librdkafka fetched meanwhile."""

    topic: str
    partition: int
    end: int
    taken: list[Message]

    def continued_by(self, offsets: OffsetRange) -> bool:
        return (self.topic, self.partition, self.end) == (
            offsets.topic,
            offsets.partition,
            offsets.start,
        )


def _read_one(
    consumer: Consumer,
    kafka: Mapping[str, Any],
    offsets: OffsetRange,
    poll_timeout_ms: int,
    batch_rows: int,
    make: Callable[[str, int, list[Message]], T],
    ahead: _ReadAhead | None,
) -> Iterator[T | _ReadAhead]:
    """The records of one range through `consumer` (assigned to its partition alone), in
    parts of about `batch_rows` that `make` builds (Arrow batches by default); last, once the
    range was read to its end, where the consumer stands (`_ReadAhead`). `ahead`, if the range
    continues it, is where to start instead of assigning the consumer anew."""
    tp = KafkaTopicPartition(offsets.topic, offsets.partition, offsets.start)
    if ahead is not None and ahead.continued_by(offsets):
        pending, taken = _split_at(ahead.taken, offsets.end)
        position = max(consumer.position([tp])[0].offset, offsets.start)
    else:
        consumer.assign([tp])
        pending, taken, position = [], [], offsets.start
    last_progress = time.monotonic()
    while position < offsets.end:
        messages = next_records(consumer, batch_rows, NEXT_RECORD_WAIT_S)
        records, taken = _split_at(_records_of(kafka, offsets, messages), offsets.end)
        pending += records
        if len(pending) >= batch_rows:
            yield make(offsets.topic, offsets.partition, pending)
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
        yield make(offsets.topic, offsets.partition, pending)
    yield _ReadAhead(offsets.topic, offsets.partition, offsets.end, taken)


class RangeReader:
    """One read_committed consumer reading ranges one after the other, kept between reads (a
    live sink task's, for its whole life). It only assigns and never commits: like the readers
    of the internal topics it needs no Group ACL (librdkafka's lookup of its unused group may
    be refused; see `is_unused_group_error`), only Read on the topics.

    A range that starts where the previous one ended, on the same partition, is read on from
    there without a new assignment: the records librdkafka fetched ahead meanwhile (up to
    `queued.min.messages`) are the next range's first, as a sink task's next micro-batch
    continues its last."""

    def __init__(
        self, kafka: Mapping[str, Any], poll_timeout_ms: int = 120000, batch_rows: int = 10000
    ) -> None:
        self.kafka = dict(kafka)
        self.poll_timeout_ms = poll_timeout_ms
        self.batch_rows = batch_rows
        self._consumer: Consumer | None = None
        self._ahead: _ReadAhead | None = None

    def read(self, offsets: OffsetRange) -> Iterator[pa.RecordBatch]:
        """The committed records of one range, as Arrow batches of at most `batch_rows`.

        With transactions offsets are not contiguous (commit markers, aborted records), so a
        range ends when the consumer's position reaches its end, not after end - start records.
        Records at or past the end are left for a range continuing this one, so a range always
        yields the same records."""
        return self._read(offsets, records_batch)

    def read_columns(self, offsets: OffsetRange) -> Iterator[MessageColumns]:
        """The committed records of one range as `MessageColumns` (see `read`)."""
        return self._read(offsets, message_columns)

    def _read(
        self, offsets: OffsetRange, make: Callable[[str, int, list[Message]], T]
    ) -> Iterator[T]:
        if offsets.end <= offsets.start:
            return
        if self._consumer is None:
            settings = {**_READ_DEFAULTS, **self.kafka, **_FORCED_CONSUMER}
            self._consumer = connected(Consumer(settings))
        ahead, self._ahead = self._ahead, None  # kept only once this range is read to its end
        parts = _read_one(
            self._consumer, self.kafka, offsets, self.poll_timeout_ms, self.batch_rows, make, ahead
        )
        for part in parts:
            if isinstance(part, _ReadAhead):
                self._ahead = part
            else:
                yield part

    def close(self) -> None:
        """Close the consumer (a later `read` makes a new one)."""
        self._ahead = None
        if self._consumer is not None:
            consumer, self._consumer = self._consumer, None
            consumer.close()


def read_ranges(
    kafka: Mapping[str, Any],
    ranges: Sequence[OffsetRange],
    poll_timeout_ms: int = 120000,
    batch_rows: int = 10000,
) -> Iterator[pa.RecordBatch]:
    """Executor: the committed records of `ranges`, one range after the other, as Arrow batches
    (each batch holds records of one partition), through one `RangeReader`."""
    if not ranges:
        return
    reader = RangeReader(kafka, poll_timeout_ms, batch_rows)
    try:
        for offsets in ranges:
            yield from reader.read(offsets)
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
