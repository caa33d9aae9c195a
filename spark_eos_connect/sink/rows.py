"""A sink task's input as columns: the stream's Arrow rows cut into `put`-sized chunks.

A `RecordChunk` holds at most `consumer.override.max.poll.records` rows as Python lists and
binary Arrow arrays (keys, values), taken from the Arrow batch a column at a time: no Python
object is made per record here, and converters convert whole columns
(`Converter.to_connect_column`). A `RawRecord` is made only for a record that failed, for its
error report and the dead letter queue.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property

import pyarrow as pa
import pyarrow.compute as pc

from spark_eos_connect.kafka.range_reader import MessageColumns

TP = tuple[str, int]
"""(topic, partition)."""

Headers = tuple[tuple[str, bytes | None], ...]

_PER_MILLI = {"s": 0.001, "ms": 1, "us": 1000, "ns": 1_000_000}


@dataclass(frozen=True)
class RawRecord:
    """One row of the stream as Kafka bytes (made for failed records)."""

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    timestamp_ms: int | None
    headers: Headers


def _column(batch: pa.RecordBatch, name: str) -> pa.Array | None:
    index = batch.schema.get_field_index(name)
    return None if index < 0 else batch.column(index)


def _binary(batch: pa.RecordBatch, name: str) -> pa.Array:
    """A key or value column as binary: text as its UTF-8 bytes, other values as their text,
    a missing column as nulls."""
    column = _column(batch, name)
    if column is None:
        return pa.nulls(batch.num_rows, pa.binary())
    if pa.types.is_binary(column.type):
        return column
    if not (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)):
        column = column.cast(pa.string())
    return column.cast(pa.binary())


def _repeated_or_list(column: pa.Array) -> tuple[list, bool]:
    """The column's values, and whether they are all one value (then one Python object
    repeated)."""
    if len(column) and column.null_count == 0 and len(pc.unique(column)) == 1:
        return [column[0].as_py()] * len(column), True
    return column.to_pylist(), False


def _timestamps(batch: pa.RecordBatch) -> list[int | None]:
    """Epoch milliseconds (rounded down) of a timestamp column; other columns as they are."""
    column = _column(batch, "timestamp")
    if column is None:
        return [None] * batch.num_rows
    if not pa.types.is_timestamp(column.type):
        return column.to_pylist()
    per_ms = _PER_MILLI[column.type.unit]
    units = column.cast(pa.int64())
    if per_ms == 1:
        return units.to_pylist()
    if per_ms < 1:
        return pc.multiply(units, int(1 / per_ms)).to_pylist()
    millis = pc.divide(units, per_ms)  # truncates toward zero: floor below 1970
    below = pc.greater(pc.multiply(millis, per_ms), units)
    return pc.subtract(millis, below.cast(pa.int64())).to_pylist()


def _headers(batch: pa.RecordBatch) -> list[Headers]:
    """Each row's `(key, value)` headers; `()` for none."""
    column = _column(batch, "headers")
    if column is None or column.null_count == len(column):
        return [()] * batch.num_rows
    return [tuple((h["key"], h["value"]) for h in row or ()) for row in column.to_pylist()]


@dataclass(frozen=True)
class RecordChunk:
    """Rows of the stream as columns (`topic`, `partition`, `offset` are required)."""

    topics: list[str]
    partitions: list[int]
    offsets: list[int]
    keys: pa.Array
    values: pa.Array
    timestamps: list[int | None]
    headers: list[Headers]
    single: TP | None = None
    """The one `(topic, partition)` of every row, when known (a batch of the Kafka reader)."""

    @classmethod
    def of(cls, batch: pa.RecordBatch) -> RecordChunk:
        """The columns of an Arrow batch with Kafka columns."""
        topics, one_topic = _repeated_or_list(batch.column(batch.schema.get_field_index("topic")))
        column = batch.column(batch.schema.get_field_index("partition"))
        partitions, one_partition = _repeated_or_list(column)
        return cls(
            topics,
            partitions,
            batch.column(batch.schema.get_field_index("offset")).to_pylist(),
            _binary(batch, "key"),
            _binary(batch, "value"),
            _timestamps(batch),
            _headers(batch),
            (topics[0], partitions[0]) if one_topic and one_partition else None,
        )

    @classmethod
    def of_columns(cls, columns: MessageColumns) -> RecordChunk:
        """One partition's records as a sink task's range reader takes them."""
        rows = len(columns)
        return cls(
            [columns.topic] * rows,
            [columns.partition] * rows,
            columns.offsets,
            columns.keys,
            columns.values,
            columns.timestamps,
            columns.headers,
            (columns.topic, columns.partition),
        )

    def part(self, start: int, stop: int) -> RecordChunk:
        """Rows `start` to `stop` (the lists copied, the Arrow arrays sliced)."""
        return RecordChunk(
            self.topics[start:stop],
            self.partitions[start:stop],
            self.offsets[start:stop],
            self.keys.slice(start, stop - start),
            self.values.slice(start, stop - start),
            self.timestamps[start:stop],
            self.headers[start:stop],
            self.single,
        )

    def joined(self, other: RecordChunk) -> RecordChunk:
        """These rows, then `other`'s."""
        return RecordChunk(
            self.topics + other.topics,
            self.partitions + other.partitions,
            self.offsets + other.offsets,
            pa.concat_arrays([self.keys, other.keys]),
            pa.concat_arrays([self.values, other.values]),
            self.timestamps + other.timestamps,
            self.headers + other.headers,
            self.single if self.single == other.single else None,
        )

    def __len__(self) -> int:
        return len(self.offsets)

    def raw(self, row: int) -> RawRecord:
        """Row `row` as a `RawRecord`."""
        return RawRecord(
            self.topics[row],
            self.partitions[row],
            self.offsets[row],
            self.keys[row].as_py(),
            self.values[row].as_py(),
            self.timestamps[row],
            self.headers[row],
        )

    @cached_property
    def partitions_seen(self) -> frozenset[TP]:
        """The distinct `(topic, partition)` of the rows."""
        if self.single is not None:
            return frozenset((self.single,))
        topics, partitions = self.topics, self.partitions
        one_topic = bool(topics) and topics.count(topics[0]) == len(topics)
        if one_topic and partitions.count(partitions[0]) == len(partitions):
            return frozenset(((topics[0], partitions[0]),))  # no tuple per row (a part of a
        return frozenset(zip(topics, partitions, strict=True))  # chunk joining two partitions)

    def topic_runs(self) -> Iterator[tuple[str, int, int]]:
        """`(topic, start, stop)` for each run of rows of one topic."""
        if not self.topics or self.topics.count(self.topics[0]) == len(self.topics):
            if self.topics:
                yield self.topics[0], 0, len(self.topics)
            return
        start = 0
        for topic, run in itertools.groupby(self.topics):
            size = sum(1 for _ in run)
            yield topic, start, start + size
            start += size

    def next_offsets(self) -> dict[TP, int]:
        """The offset after each partition's last row: what the rows consumed."""
        if len(self.partitions_seen) == 1:
            (tp,) = self.partitions_seen
            return {tp: max(self.offsets) + 1}
        consumed: dict[TP, int] = {}
        rows = zip(zip(self.topics, self.partitions, strict=True), self.offsets, strict=True)
        for tp, offset in rows:
            if offset >= consumed.get(tp, -1):
                consumed[tp] = offset + 1
        return consumed

    def select(self, rows: list[int]) -> RecordChunk:
        """The chunk of the given rows only."""
        taken = pa.array(rows, pa.int64())
        return RecordChunk(
            [self.topics[r] for r in rows],
            [self.partitions[r] for r in rows],
            [self.offsets[r] for r in rows],
            self.keys.take(taken),
            self.values.take(taken),
            [self.timestamps[r] for r in rows],
            [self.headers[r] for r in rows],
        )


def chunks(parts: Iterable[RecordChunk], size: int) -> Iterator[RecordChunk]:
    """The rows of `parts` in chunks of `size` (the last may be smaller; a chunk may span
    parts)."""
    rest: RecordChunk | None = None
    for rows in parts:
        if not len(rows):
            continue
        if rest is not None:
            rows, rest = rest.joined(rows), None
        whole = len(rows) - len(rows) % size
        for start in range(0, whole, size):
            yield rows.part(start, start + size)
        if whole < len(rows):
            rest = rows.part(whole, len(rows))
    if rest is not None:
        yield rest
