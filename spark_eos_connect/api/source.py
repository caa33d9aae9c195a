"""The source side of the connector API (Connect's `org.apache.kafka.connect.source`, KIP-618).

A `SourceTask` runs on an executor. The runtime calls `poll()` repeatedly, produces the records in a
Kafka transaction together with their source offsets, and on restart the task resumes from the
offsets it finds through `context.offset_storage_reader`: it must derive all its position from
there, because offsets in Kafka are the source of truth.
"""

from __future__ import annotations

import enum
import json
import threading
from abc import abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from spark_eos_connect.api.connector import Connector, ConnectorContext, Task
from spark_eos_connect.api.data import Schema
from spark_eos_connect.errors import EosConnectError

__all__ = [
    "ConnectorTransactionBoundaries",
    "ExactlyOnceSupport",
    "InMemoryOffsetStorageReader",
    "OffsetStorageReader",
    "RecordMetadata",
    "SourceConnector",
    "SourceConnectorContext",
    "SourceRecord",
    "SourceTask",
    "SourceTaskContext",
    "TransactionBoundaryConflictError",
    "TransactionContext",
]

Header = tuple[str, bytes | None]


@dataclass(slots=True)
class SourceRecord:
    """One record from a source task: the Kafka record plus where it came from.

    `source_partition`/`source_offset` are maps of string keys to primitive values (they become
    JSON in the offsets topic); `timestamp` is epoch milliseconds, None to let the producer set it.
    `key_schema`/`value_schema` (`spark_eos_connect.api.data.Schema`) describe a structured key
    or value (a `Struct`, a list, ...); None for schemaless ones such as plain bytes or str.
    """

    source_partition: dict[str, Any] | None
    source_offset: dict[str, Any] | None
    topic: str
    value: Any
    key: Any = None
    partition: int | None = None
    headers: Sequence[Header] = ()
    timestamp: int | None = None
    key_schema: Schema | None = None
    value_schema: Schema | None = None


@dataclass(frozen=True, slots=True)
class RecordMetadata:
    """Where Kafka stored a record, passed to `SourceTask.commit_record`."""

    topic: str
    partition: int
    offset: int
    timestamp: int | None = None


class ExactlyOnceSupport(enum.Enum):
    """A source connector's answer to "can you deliver exactly once with this config?"."""

    SUPPORTED = "SUPPORTED"
    UNSUPPORTED = "UNSUPPORTED"


class ConnectorTransactionBoundaries(enum.Enum):
    """Whether a source connector can define transactions (`transaction.boundary=connector`)."""

    SUPPORTED = "SUPPORTED"
    UNSUPPORTED = "UNSUPPORTED"


@runtime_checkable
class OffsetStorageReader(Protocol):
    """Read access to committed source offsets of the task's connector."""

    def offset(self, partition: Mapping[str, Any]) -> dict[str, Any] | None:
        """The latest committed offset of `partition`, or None if none (or reset)."""
        ...

    def offsets(
        self, partitions: Iterable[Mapping[str, Any]]
    ) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
        """`(partition, offset-or-None)` for each requested partition, in request order."""
        ...


def _partition_id(partition: Mapping[str, Any]) -> str:
    """A hashable identity for a source partition (key order does not matter)."""
    return json.dumps(partition, sort_keys=True, separators=(",", ":"))


class InMemoryOffsetStorageReader:
    """An `OffsetStorageReader` over a dict, for tests and for the runtime's snapshots."""

    def __init__(
        self, offsets: Iterable[tuple[Mapping[str, Any], Mapping[str, Any] | None]] = ()
    ) -> None:
        self._offsets: dict[str, dict[str, Any] | None] = {}
        for partition, offset in offsets:
            self.set(partition, offset)

    def set(self, partition: Mapping[str, Any], offset: Mapping[str, Any] | None) -> None:
        """Record `offset` for `partition` (None = reset)."""
        self._offsets[_partition_id(partition)] = None if offset is None else dict(offset)

    def offset(self, partition: Mapping[str, Any]) -> dict[str, Any] | None:
        """The stored offset (a copy), or None."""
        found = self._offsets.get(_partition_id(partition))
        return None if found is None else dict(found)

    def offsets(
        self, partitions: Iterable[Mapping[str, Any]]
    ) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
        """`(partition, offset-or-None)` for each partition."""
        return [(dict(p), self.offset(p)) for p in partitions]


class TransactionBoundaryConflictError(EosConnectError, RuntimeError):
    """A task asked to both commit and abort the same transaction; the task must fail."""


class TransactionContext:
    """Lets a task define transaction boundaries (`transaction.boundary=connector`).

    The task calls `commit_transaction`/`abort_transaction`, with a record (the transaction ends
    once that record has been dispatched to the producer, the record included) or without (the
    transaction ends after the current `poll()` batch has been dispatched). The runtime asks
    `should_commit_on(record)`/`should_abort_on(record)` after dispatching each record and
    `should_commit_batch()`/`should_abort_batch()` after each batch; every answer consumes the
    request. Records are matched by identity: pass the very object returned from `poll()`.
    Asking for both commit and abort of the same record or batch raises
    `TransactionBoundaryConflictError` when the runtime asks (a task could swallow it otherwise).
    Thread-safe: tasks may call it from their own threads.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._commit_records: dict[int, SourceRecord] = {}
        self._abort_records: dict[int, SourceRecord] = {}
        self._commit_batch = False
        self._abort_batch = False

    def commit_transaction(self, record: SourceRecord | None = None) -> None:
        """Commit after `record` is dispatched, or after the current batch if no record."""
        with self._lock:
            if record is None:
                self._commit_batch = True
            else:
                self._commit_records[id(record)] = record

    def abort_transaction(self, record: SourceRecord | None = None) -> None:
        """Abort after `record` is dispatched, or after the current batch if no record."""
        with self._lock:
            if record is None:
                self._abort_batch = True
            else:
                self._abort_records[id(record)] = record

    def _check_record(self, record: SourceRecord) -> None:
        key = id(record)
        if key in self._commit_records and key in self._abort_records:
            raise TransactionBoundaryConflictError(
                "Connector requested both commit and abort of the transaction ending with the "
                f"record for {record.topic}/{record.partition}"
            )

    def _check_batch(self) -> None:
        if self._commit_batch and self._abort_batch:
            raise TransactionBoundaryConflictError(
                "Connector requested both commit and abort of the same transaction"
            )

    def should_commit_on(self, record: SourceRecord) -> bool:
        """Runtime: after dispatching `record`, commit? Consumes the request."""
        with self._lock:
            self._check_record(record)
            return self._commit_records.pop(id(record), None) is not None

    def should_abort_on(self, record: SourceRecord) -> bool:
        """Runtime: after dispatching `record`, abort? Consumes the request."""
        with self._lock:
            self._check_record(record)
            return self._abort_records.pop(id(record), None) is not None

    def should_commit_batch(self) -> bool:
        """Runtime: after dispatching the batch, commit? Consumes the request."""
        with self._lock:
            self._check_batch()
            result, self._commit_batch = self._commit_batch, False
            return result

    def should_abort_batch(self) -> bool:
        """Runtime: after dispatching the batch, abort? Consumes the request."""
        with self._lock:
            self._check_batch()
            result, self._abort_batch = self._abort_batch, False
            return result

    def has_pending_requests(self) -> bool:
        """True while any record- or batch-level request has not been consumed."""
        with self._lock:
            return bool(
                self._commit_records
                or self._abort_records
                or self._commit_batch
                or self._abort_batch
            )


@runtime_checkable
class SourceConnectorContext(ConnectorContext, Protocol):
    """What the runtime offers a running source connector (driver side): Connect's
    `SourceConnectorContext`."""

    @property
    def offset_storage_reader(self) -> OffsetStorageReader:
        """The connector's committed offsets, as they stand in Kafka when asked."""
        ...


class SourceTaskContext:
    """What the runtime gives a source task (executor side)."""

    def __init__(
        self,
        configs: Mapping[str, str],
        offset_storage_reader: OffsetStorageReader,
        transaction_context: TransactionContext | None = None,
        task_id: int = 0,
        connector_name: str = "",
    ) -> None:
        self._configs = dict(configs)
        self._offset_storage_reader = offset_storage_reader
        self._transaction_context = transaction_context
        self.task_id = task_id
        self.connector_name = connector_name

    def configs(self) -> dict[str, str]:
        """The task's configuration (a copy)."""
        return dict(self._configs)

    @property
    def offset_storage_reader(self) -> OffsetStorageReader:
        """Committed offsets of this connector's source partitions."""
        return self._offset_storage_reader

    @property
    def transaction_context(self) -> TransactionContext | None:
        """Set only when the connector defines transaction boundaries, else None."""
        return self._transaction_context


class SourceTask(Task):
    """A source task: `poll()` returns records; the runtime commits them with their offsets."""

    _context: SourceTaskContext | None = None

    def initialize(self, context: SourceTaskContext) -> None:
        """Called once by the runtime before `start`."""
        self._context = context

    @property
    def context(self) -> SourceTaskContext:
        """The context given to `initialize`."""
        if self._context is None:
            raise EosConnectError(f"{type(self).__name__} has not been initialized")
        return self._context

    @abstractmethod
    def poll(self) -> list[SourceRecord] | None:
        """New records, or None/[] when there are none now; should not block for long."""

    def commit(self) -> None:
        """Called after offsets up to the last polled records were committed (optional hook)."""

    def commit_record(self, record: SourceRecord, metadata: RecordMetadata | None) -> None:
        """Called per record once Kafka acknowledged it; metadata None if a transform dropped it."""


class SourceConnector(Connector):
    """A connector that reads from an external system into Kafka (driver side)."""

    @abstractmethod
    def task_class(self) -> type[SourceTask]:
        """The `SourceTask` subclass that runs this connector's work."""

    def exactly_once_support(self, config: dict[str, str]) -> ExactlyOnceSupport | None:
        """Whether `config` allows exactly-once delivery; None (the default) means unknown."""
        return None

    def can_define_transaction_boundaries(
        self, config: dict[str, str]
    ) -> ConnectorTransactionBoundaries:
        """Whether tasks can define transactions with `config`; UNSUPPORTED by default."""
        return ConnectorTransactionBoundaries.UNSUPPORTED

    def alter_offsets(
        self, config: dict[str, str], offsets: list[tuple[dict[str, Any], dict[str, Any] | None]]
    ) -> bool:
        """Check (and apply any externally kept) offsets before they are altered or reset.

        `offsets` pairs source partitions with new offsets, None meaning reset; the connector is
        stopped. Raise `ConfigError` to reject them. Return True when the connector has handled
        them; False (the default) means the framework's offsets are altered anyway but offsets the
        connector may keep elsewhere are not (the REST answer says so, as Connect's does).
        """
        return False
