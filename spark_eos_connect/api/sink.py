"""The sink side of the connector API (Connect's `org.apache.kafka.connect.sink`).

A `SinkTask` runs on an executor and receives Kafka records through `put`. Before consumer offsets
are committed the runtime calls `pre_commit(current_offsets)` and commits only what it returns:
returning `{}` means the task keeps its offsets itself (e.g. with the data, as the Delta sink does).
"""

from __future__ import annotations

import threading
from abc import abstractmethod
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, fields
from operator import attrgetter
from typing import Any, NamedTuple, overload

from spark_eos_connect.api.connector import Connector, Task
from spark_eos_connect.api.data import Schema
from spark_eos_connect.errors import EosConnectError

__all__ = [
    "SinkConnector",
    "SinkRecord",
    "SinkRecords",
    "SinkTask",
    "SinkTaskContext",
    "TopicPartition",
]


class TopicPartition(NamedTuple):
    """A Kafka topic partition."""

    topic: str
    partition: int


@dataclass(slots=True)
class SinkRecord:
    """One Kafka record handed to a sink task; `timestamp` is epoch milliseconds.

    `key`/`value` are what the key and value converters made of the bytes, and
    `key_schema`/`value_schema` their schemas (None for schemaless data).
    """

    topic: str
    kafka_partition: int
    kafka_offset: int
    key: Any
    value: Any
    timestamp: int | None = None
    headers: Sequence[tuple[str, Any]] = ()
    key_schema: Schema | None = None
    value_schema: Schema | None = None

    @property
    def topic_partition(self) -> TopicPartition:
        """The record's `TopicPartition`."""
        return TopicPartition(self.topic, self.kafka_partition)


RECORD_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(SinkRecord))
"""The fields of a `SinkRecord`, in order: the columns of `SinkRecords`."""


class SinkRecords(Sequence[SinkRecord]):
    """The records of one `put`, kept as columns: one list per `SinkRecord` field.

    The `SinkRecord`s are made, all at once, only when the task first looks at the records one
    by one (iteration, indexing); they are kept, so the task sees the same objects, and what it
    changed in them, each time. A task that needs only some fields of every record reads them a
    column at a time (`record_field`) and no record is made.
    """

    __slots__ = ("_columns", "_records")

    def __init__(self, columns: Sequence[list[Any]]) -> None:
        """`columns` in `RECORD_FIELDS` order, all of one length."""
        if len(columns) != len(RECORD_FIELDS):
            raise ValueError(f"SinkRecords needs {len(RECORD_FIELDS)} columns, got {len(columns)}")
        self._columns: Sequence[list[Any]] | None = columns
        self._records: list[SinkRecord] | None = None

    @classmethod
    def of(cls, records: list[SinkRecord]) -> SinkRecords:
        """Records already made (e.g. by the transforms)."""
        made = cls.__new__(cls)
        made._columns, made._records = None, records
        return made

    def records(self) -> list[SinkRecord]:
        """The records as `SinkRecord`s (made on the first call)."""
        if self._records is None:
            assert self._columns is not None
            self._records = list(map(SinkRecord, *self._columns))
            self._columns = None
        return self._records

    def field(self, name: str) -> list[Any]:
        """The field `name` (one of `RECORD_FIELDS`) of every record: the column as given, or,
        once the records are made, read from them."""
        if self._columns is not None:
            return self._columns[RECORD_FIELDS.index(name)]
        return list(map(attrgetter(name), self.records()))

    def __len__(self) -> int:
        if self._columns is not None:
            return len(self._columns[0])
        return len(self.records())

    @overload
    def __getitem__(self, index: int) -> SinkRecord: ...

    @overload
    def __getitem__(self, index: slice) -> list[SinkRecord]: ...

    def __getitem__(self, index: int | slice) -> SinkRecord | list[SinkRecord]:
        return self.records()[index]

    def __iter__(self) -> Iterator[SinkRecord]:
        return iter(self.records())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, SinkRecords):
            return self.records() == other.records()
        return isinstance(other, list) and self.records() == other

    __hash__ = None  # type: ignore[assignment]  # mutable, as a list

    def __repr__(self) -> str:
        return f"SinkRecords({self.records()!r})"


def record_field(records: Sequence[SinkRecord], name: str) -> list[Any]:
    """The field `name` of every record, a column at a time for `SinkRecords` (no record made),
    else read from each record."""
    if isinstance(records, SinkRecords):
        return records.field(name)
    return list(map(attrgetter(name), records))


class SinkTaskContext:
    """What the runtime gives a sink task (executor side).

    The task may ask to rewind/skip partitions (`offset`, collected by the runtime with
    `take_offset_resets`) or to commit soon (`request_commit`).
    """

    def __init__(
        self, configs: Mapping[str, str], assignment: Iterable[TopicPartition] = ()
    ) -> None:
        self._configs = dict(configs)
        self._lock = threading.Lock()
        self._assignment = frozenset(assignment)
        self._resets: dict[TopicPartition, int] = {}
        self._commit_requested = False

    def configs(self) -> dict[str, str]:
        """The task's configuration (a copy)."""
        return dict(self._configs)

    def assignment(self) -> frozenset[TopicPartition]:
        """The partitions currently assigned to the task."""
        with self._lock:
            return self._assignment

    def update_assignment(self, partitions: Iterable[TopicPartition]) -> None:
        """Runtime: replace the current assignment."""
        with self._lock:
            self._assignment = frozenset(partitions)

    def offset(self, tp: TopicPartition, offset: int) -> None:
        """Ask the runtime to continue consuming `tp` from `offset` (the next record to read)."""
        if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
            raise EosConnectError(f"Offset for {tp.topic}-{tp.partition} must be an int >= 0")
        with self._lock:
            self._resets[TopicPartition(*tp)] = offset

    def offsets(self, offsets: Mapping[TopicPartition, int]) -> None:
        """`offset` for several partitions at once."""
        for tp, value in offsets.items():
            self.offset(tp, value)

    def request_commit(self) -> None:
        """Ask the runtime to commit offsets (via `pre_commit`) as soon as it can.

        Here that is always the end of the current micro-batch: every micro-batch ends with
        `pre_commit` and the driver's commit of what it returned, and a micro-batch is not cut
        short (its offset ranges are fixed when Spark plans it, so that a replay reads the same
        records). The request is recorded (`take_commit_request`) and needs nothing more.
        """
        with self._lock:
            self._commit_requested = True

    def take_offset_resets(self) -> dict[TopicPartition, int]:
        """Runtime: the requested resets since the last call (then forgotten)."""
        with self._lock:
            resets, self._resets = self._resets, {}
            return resets

    def take_commit_request(self) -> bool:
        """Runtime: whether a commit was requested since the last call."""
        with self._lock:
            requested, self._commit_requested = self._commit_requested, False
            return requested


class SinkTask(Task):
    """A sink task: `put` receives records; `pre_commit` decides which offsets get committed."""

    _context: SinkTaskContext | None = None

    def initialize(self, context: SinkTaskContext) -> None:
        """Called once by the runtime before `start`."""
        self._context = context

    @property
    def context(self) -> SinkTaskContext:
        """The context given to `initialize`."""
        if self._context is None:
            raise EosConnectError(f"{type(self).__name__} has not been initialized")
        return self._context

    def open(self, partitions: Iterable[TopicPartition]) -> None:
        """Partitions newly assigned to the task (before records from them arrive)."""

    @abstractmethod
    def put(self, records: Sequence[SinkRecord]) -> None:
        """Write (or buffer) records; raise to fail the task. The runtime passes `SinkRecords`:
        a read-only sequence whose fields can also be read a column at a time
        (`record_field`)."""

    def flush(self, current_offsets: dict[TopicPartition, int]) -> None:
        """Make everything `put` so far durable; `current_offsets` are the next offsets to read."""

    def pre_commit(self, current_offsets: dict[TopicPartition, int]) -> dict[TopicPartition, int]:
        """The offsets the runtime may commit; by default `flush` then return `current_offsets`.

        Return `{}` to commit nothing (the task keeps offsets itself).
        """
        self.flush(current_offsets)
        return current_offsets

    def close(self, partitions: Iterable[TopicPartition]) -> None:
        """Partitions taken away from the task; drop any state kept for them."""


class SinkConnector(Connector):
    """A connector that writes Kafka records to an external system (driver side)."""

    @abstractmethod
    def task_class(self) -> type[SinkTask]:
        """The `SinkTask` subclass that runs this connector's work."""

    def alter_offsets(
        self, config: dict[str, str], offsets: dict[TopicPartition, int | None]
    ) -> bool:
        """Check (and apply externally kept) consumer offsets before they are altered or reset.

        `offsets` maps partitions to the next offset to read, None meaning reset; the connector is
        stopped. Raise `ConfigError` to reject them. Return True when handled; False (the
        default) means the consumer group's offsets are altered but external ones are not.
        """
        return False
