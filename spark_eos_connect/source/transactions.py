"""`TaskTransactions`: a live source task's transactions, what its boundary drives
(`source.boundaries.Transactions`): records handed over in the open transaction, then, at each
commit, their source offsets in the same transaction (KIP-618), the commit, and the task's
`commit_record`/`commit` hooks once it went through.

The first commit of a task started behind a `ReplayGuard` checks that no earlier attempt
committed its partitions since planning; if one did, this attempt is stale: it aborts, writes
nothing, and hands on the rows the earlier attempt of its micro-batch committed, if any. How a
transaction opens, ends and is dropped is the delivery guarantee's (`source.guarantees`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pyarrow as pa

from spark_eos_connect.api.source import SourceRecord, SourceTask
from spark_eos_connect.errors import EosConnectError
from spark_eos_connect.jvm_tasks.converted import ConvertedRecords
from spark_eos_connect.kafka.producers import (
    PRODUCER_ERRORS,
    ProducerClientError,
    txn_requires_abort,
)
from spark_eos_connect.ports import Clock
from spark_eos_connect.source.batch_result import BatchResult
from spark_eos_connect.source.guarantees import COMMIT_TIMEOUT_S, DeliveryGuarantee
from spark_eos_connect.source.offsets_mirror import OffsetsMirror
from spark_eos_connect.source.plan import SourceTaskPlan
from spark_eos_connect.source.replay_guard import ReplayGuard
from spark_eos_connect.source.sender import RecordSender
from spark_eos_connect.source.submitted import OffsetPair, SubmittedOffsets
from spark_eos_connect.source.task_failures import DeliveryFailedError, TaskFailures
from spark_eos_connect.storage.offsets import OffsetsWriter


class TaskTransactions:
    """The transactions of `task`, whose records `sender` hands to `producer`.

    Kept with the task across micro-batches (a transaction the connector boundary left open
    stays open into the next); `start_batch` names the micro-batch whose result commits fill.
    """

    def __init__(
        self,
        task: SourceTask,
        sender: RecordSender,
        guarantee: DeliveryGuarantee,
        submitted: SubmittedOffsets,
        failures: TaskFailures,
        guard: ReplayGuard | None,
        mirror: OffsetsMirror,
        clock: Clock,
    ) -> None:
        self.plan = sender.plan
        self._task = task
        self._producer = sender.producer
        self._sender = sender
        self._guarantee = guarantee
        self._submitted = submitted
        self._failures = failures
        self._guard = guard
        self._mirror = mirror
        self._clock = clock
        self._batch_id: int | None = None
        self._result = BatchResult()
        self._began = 0.0
        self._ready_rows: list[pa.RecordBatch] = []
        self.open = False
        """Whether a transaction is open (records handed over, not yet committed)."""
        self.stale = False
        """Set when an earlier attempt committed this task's partitions: nothing more is written."""

    def start_batch(self, plan: SourceTaskPlan, batch_id: int | None, result: BatchResult) -> None:
        """The micro-batch `batch_id` of `plan` begins; its commits fill `result`."""
        self.plan, self._batch_id, self._result = plan, batch_id, result

    # --- what a boundary drives (`boundaries.Transactions`) ---------------------------------

    def produce(self, records: list[SourceRecord] | ConvertedRecords) -> None:
        """Hand `records` to the producer in the open transaction (begun if needed)."""
        if not records:
            return
        try:
            if not self.open and self._guarantee.begin(self._producer):
                self._began = self._clock.monotonic()
            self.open = True
            self._sender.send(records)
        except (*PRODUCER_ERRORS, SystemError) as error:
            raise self.kafka_failure(error) from error

    def commit(self) -> None:
        """Commit what is open: records, then their offsets, in one transaction."""
        if not self.open:
            return
        plan, producer, guarantee = self.plan, self._producer, self._guarantee
        offsets = self._submitted.pending()
        if self._stale_at_first_commit(offsets):
            return
        self._await_deliveries()
        rows = self._submitted.rows()
        OffsetsWriter(plan.offsets_topic, plan.offsets_topic_partitions, plan.connector).write(
            producer,
            offsets,
            on_delivery=self._submitted.offsets_delivered,
            first_headers=guarantee.offsets_headers(plan, self._batch_id, rows),
        )
        guarantee.before_end(plan, self._batch_id)
        try:
            guarantee.end(producer, lambda _: self._await_deliveries())
        except PRODUCER_ERRORS as error:
            if txn_requires_abort(error):  # the producer stays usable
                with contextlib.suppress(*PRODUCER_ERRORS, SystemError, EosConnectError):
                    self._abort(counted=False)
            self.open = False
            raise self._failures.explained(error, self._submitted.take_refusals()) from error
        self.open = False
        self._committed_now(offsets, rows)
        guarantee.after_end(plan, self._batch_id)

    def abort(self) -> None:
        """The open transaction's records and offsets are dropped; the task polls on."""
        self._abort(counted=True)

    def open_for_ms(self) -> float | None:
        """How long the open transaction has been open, None if none is."""
        if not self.open:
            return None
        return (self._clock.monotonic() - self._began) * 1000

    # --- for the task loop ------------------------------------------------------------------

    def take_rows(self) -> Iterator[pa.RecordBatch]:
        """The rows of the records committed since last asked."""
        ready, self._ready_rows = self._ready_rows, []
        yield from ready

    def flush_mirror(self) -> None:
        """Wait a little for the offsets mirrored to the global offsets topic."""
        self._mirror.flush(self.plan)

    def abandon(self) -> None:
        """Drop what is open as the task goes away (its failure or its generation's end)."""
        if self.open:
            self._guarantee.abandon(self._producer)
        self.open = False

    def kafka_failure(self, error: ProducerClientError | SystemError) -> Exception:
        """What a producer call's `error` means for the task (`TaskFailures`)."""
        return self._failures.kafka_failure(error, self._submitted.take_refusals())

    # --- inside a commit --------------------------------------------------------------------

    def _stale_at_first_commit(self, offsets: list[OffsetPair]) -> bool:
        """Whether, at the first commit behind a replay guard, an earlier attempt turns out to
        have committed these partitions since planning (then this attempt aborts and writes
        nothing, handing on that attempt's rows if they are its micro-batch's)."""
        guard = self._guard
        if guard is None or guard.verified:
            return False
        stale, earlier = guard.first_commit(offsets, self.plan, self._batch_id)
        if not stale:
            return False
        self._producer.flush(COMMIT_TIMEOUT_S)
        self._result.stale_rows_skipped += self._submitted.acknowledged_rows()
        self.stale = True
        self._abort(counted=False)
        if earlier is not None:  # this micro-batch's: its rows are this attempt's
            self._ready_rows.extend(earlier.rows)
            self._result.records += sum(rows.num_rows for rows in earlier.rows)
            self._result.replayed = True
        return True

    def _await_deliveries(self) -> None:
        """Wait until Kafka acknowledged everything produced; fail on any record it refused."""
        try:
            remaining = self._producer.flush(COMMIT_TIMEOUT_S)
        except (*PRODUCER_ERRORS, SystemError) as error:
            raise self.kafka_failure(error) from error
        if remaining:
            raise DeliveryFailedError(
                f"{remaining} records were not acknowledged by Kafka within "
                f"{COMMIT_TIMEOUT_S:.0f}s; their offsets are not committed"
            )
        if self._submitted.refusals:
            raise self._failures.refused_deliveries(self._submitted.take_refusals())

    def _committed_now(self, offsets: list[OffsetPair], rows: pa.RecordBatch) -> None:
        """Bookkeeping and the task's hooks once a transaction is committed."""
        acknowledged = self._submitted.committed(offsets)
        result = self._result
        result.records += rows.num_rows
        result.transactions += 1
        result.offsets_committed += len(offsets)
        if rows.num_rows:
            self._ready_rows.append(rows)
        self._mirror.write(self.plan, offsets)
        for record, metadata in acknowledged:
            self._task.commit_record(record, metadata)
        self._task.commit()

    def _abort(self, counted: bool) -> None:
        if self.open:
            try:
                self._guarantee.abort(self._producer)
            except (*PRODUCER_ERRORS, SystemError) as error:
                raise self.kafka_failure(error) from error
        self.open = False
        self._submitted.discard()
        if counted:
            self._result.aborted_transactions += 1
