"""What a live source task submitted and what it committed (Kafka Connect's `SubmittedRecords`
and the offsets a worker task keeps): the source offsets of the open transaction, the records
Kafka acknowledged or refused in it, and the offsets each source partition was last committed
at by this task.

The producer reports deliveries to `delivered` (and `delivered_record` for a task that wants
`commit_record`); the task loop `submit`s the last offset of each source partition it handed
over; a commit `take`s the transaction's offsets, rows and acknowledged records, then records
them as `committed`; an abort `discard`s them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import pyarrow as pa

from spark_eos_connect.api.source import RecordMetadata, SourceRecord
from spark_eos_connect.protocol.offsets_format import partition_key
from spark_eos_connect.source.records import committed_rows

SourcePartition = dict[str, Any]
SourceOffset = dict[str, Any] | None
OffsetPair = tuple[SourcePartition, SourceOffset]


class SubmittedOffsets:
    """One task's submitted (open transaction) and committed source offsets."""

    def __init__(self, committed: Iterable[OffsetPair] = ()) -> None:
        self._committed: dict[str, SourceOffset] = {partition_key(p): o for p, o in committed}
        self._owned: set[str] = set()
        self._pending: dict[str, OffsetPair] = {}
        self._rows: tuple[list[str], list[int], list[int]] = ([], [], [])
        self._acknowledged: list[tuple[SourceRecord, RecordMetadata | None]] = []
        self.refusals: list[tuple[str, Any]] = []
        """Records Kafka refused in the open transaction: (topic, error), in report order."""

    # -- the open transaction ----------------------------------------------------------------

    def submit(self, partition: SourcePartition, offset: SourceOffset) -> None:
        """`offset` is the last of `partition` handed to the producer (later ones replace it)."""
        self._pending[partition_key(partition)] = (partition, offset)

    def delivered(self, error: Any, message: Any) -> None:
        """Delivery report of a data record (the producer's callback)."""
        if error is not None:
            self.refusals.append((message.topic(), error))
            return
        topics, partitions, offsets = self._rows
        topics.append(message.topic())
        partitions.append(message.partition())
        offsets.append(message.offset())

    def delivered_record(self, record: SourceRecord, error: Any, message: Any) -> None:
        """Delivery report of a record whose task wants `commit_record`."""
        self.delivered(error, message)
        if error is None:
            metadata = RecordMetadata(message.topic(), message.partition(), message.offset())
            self._acknowledged.append((record, metadata))

    def dropped(self, record: SourceRecord) -> None:
        """`record` was dropped (filtered, or a tolerated failure): its task's `commit_record`
        gets it with no metadata once the transaction commits."""
        self._acknowledged.append((record, None))

    def offsets_delivered(self, error: Any, message: Any) -> None:
        """Delivery report of an offsets-topic record: only a refusal matters."""
        if error is not None:
            self.refusals.append((message.topic(), error))

    def pending(self) -> list[OffsetPair]:
        """The open transaction's source offsets, one per source partition."""
        return list(self._pending.values())

    def acknowledged_rows(self) -> int:
        """How many records Kafka acknowledged in the open transaction so far."""
        return len(self._rows[0])

    def acknowledged(self) -> list[tuple[SourceRecord, RecordMetadata | None]]:
        """The open transaction's records for `commit_record` (acknowledged or dropped)."""
        return list(self._acknowledged)

    def take_refusals(self) -> list[tuple[str, Any]]:
        """The refusals reported so far, forgotten."""
        refusals, self.refusals = self.refusals, []
        return refusals

    def rows(self) -> pa.RecordBatch:
        """The rows of the records Kafka acknowledged in the open transaction."""
        return committed_rows(*self._rows)

    # -- its end -----------------------------------------------------------------------------

    def committed(
        self, offsets: Iterable[OffsetPair]
    ) -> list[tuple[SourceRecord, RecordMetadata | None]]:
        """The open transaction committed with `offsets`: remembered as this task's, the
        transaction forgotten; returns its records for `commit_record`."""
        for partition, offset in offsets:
            key = partition_key(partition)
            self._committed[key] = offset
            self._owned.add(key)
        acknowledged = self._acknowledged
        self._pending = {}
        self._rows = ([], [], [])
        self._acknowledged = []
        return acknowledged

    def discard(self) -> None:
        """The open transaction was aborted: its offsets, rows and reports are forgotten."""
        self._pending = {}
        self._rows = ([], [], [])
        self._acknowledged = []
        self.refusals = []

    # -- reuse -------------------------------------------------------------------------------

    def left_as(self, planned: Mapping[str, SourceOffset]) -> bool:
        """Whether every source partition this task committed is at the offset it left it at
        in `planned` (committed offsets by partition key)."""
        return all(planned.get(key) == self._committed.get(key) for key in self._owned)
