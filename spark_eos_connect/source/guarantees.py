"""Exactly-once and at-least-once delivery as two strategies of the live source task loop
(Kafka Connect's `ExactlyOnceWorkerSourceTask` and `WorkerSourceTask` over one template).

The loop asks its guarantee how to open, end and drop a transaction, where transactions end,
whether a fresh task needs a replay guard, and what becomes of a record the chain dropped:

- `ExactlyOnce` (KIP-618): a transactional producer; records and source offsets go into one
  transaction; its first offsets record names the attempt and its rows (`source.replay`); the
  task's `commit_record` calls wait for the commit; a fresh task starts behind a replay guard.
- `AtLeastOnce`: an idempotent producer; the offsets follow the records once Kafka acknowledged
  them; one "transaction" per micro-batch (`poll`), nothing to abort.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import pyarrow as pa

from spark_eos_connect.api.source import SourceRecord, SourceTask, TransactionContext
from spark_eos_connect.kafka.producers import PRODUCER_ERRORS, commit_transaction
from spark_eos_connect.ports import TransactionalProducer
from spark_eos_connect.source.boundaries import Boundary, PollBoundary, boundary_for
from spark_eos_connect.source.plan import SourceTaskPlan
from spark_eos_connect.source.replay import ROWS_HEADER, attempt_digest, encode_rows_header
from spark_eos_connect.source.replay_guard import ReplayGuard
from spark_eos_connect.source.submitted import SubmittedOffsets
from spark_eos_connect.source.task_clients import SourceTaskClients

log = logging.getLogger(__name__)

COMMIT_TIMEOUT_S = 120.0
CLOSE_ABORT_TIMEOUT_S = 10.0

Headers = list[tuple[str, bytes]]
Settle = Callable[[TransactionalProducer], None]
"""The loop's wait for every delivery report, raising on a refused record."""


class AtLeastOnce:
    """Records first, then their offsets, with an idempotent producer."""

    def transactional_id(self, plan: SourceTaskPlan) -> str | None:
        """None: the task's producer is idempotent."""
        return None

    def boundary(self, plan: SourceTaskPlan, context: TransactionContext | None) -> Boundary:
        """`poll`, whatever the plan says: one batch of writes per micro-batch."""
        return PollBoundary()

    def replay_guard(self, clients: SourceTaskClients, plan: SourceTaskPlan) -> None:
        """None: without transactions there is no earlier attempt to look for."""
        return None

    def begin(self, producer: TransactionalProducer) -> bool:
        """Nothing to open; False (no transaction began)."""
        return False

    def dropped(self, task: SourceTask, record: SourceRecord, submitted: SubmittedOffsets) -> None:
        """A dropped record reaches `commit_record` at once."""
        task.commit_record(record, None)

    def offsets_headers(
        self, plan: SourceTaskPlan, batch_id: int | None, rows: pa.RecordBatch
    ) -> Headers | None:
        """None: the offsets records carry no replay header."""
        return None

    def before_end(self, plan: SourceTaskPlan, batch_id: int | None) -> None:
        """Nothing: the commit hooks mark transactions only."""

    def end(self, producer: TransactionalProducer, settle: Settle) -> None:
        """Nothing to commit: `settle` waits until Kafka acknowledged the offsets (raising if
        it refused any)."""
        settle(producer)

    def after_end(self, plan: SourceTaskPlan, batch_id: int | None) -> None:
        """Nothing: the commit hooks mark transactions only."""

    def abort(self, producer: TransactionalProducer) -> None:
        """Nothing to abort: what was handed over is written."""

    def abandon(self, producer: TransactionalProducer) -> None:
        """Nothing open to abort on close."""


class ExactlyOnce:
    """Records and offsets in one transaction of the task's transactional producer."""

    def transactional_id(self, plan: SourceTaskPlan) -> str | None:
        """The task's transactional id: claiming it fences every earlier attempt."""
        return plan.transactional_id

    def boundary(self, plan: SourceTaskPlan, context: TransactionContext | None) -> Boundary:
        """The plan's `transaction.boundary`."""
        return boundary_for(True, plan.transaction_boundary, plan.transaction_interval_ms, context)

    def replay_guard(self, clients: SourceTaskClients, plan: SourceTaskPlan) -> ReplayGuard:
        """A guard reading the task's offsets topic since planning."""
        return ReplayGuard(clients.offsets_log(plan.offsets_topic))

    def begin(self, producer: TransactionalProducer) -> bool:
        """Begin a transaction; True."""
        producer.begin_transaction()
        return True

    def dropped(self, task: SourceTask, record: SourceRecord, submitted: SubmittedOffsets) -> None:
        """A dropped record reaches `commit_record` once the transaction commits."""
        submitted.dropped(record)

    def offsets_headers(
        self, plan: SourceTaskPlan, batch_id: int | None, rows: pa.RecordBatch
    ) -> Headers | None:
        """The replay header naming this attempt and the transaction's rows."""
        return [(ROWS_HEADER, encode_rows_header(attempt_digest(plan, batch_id), rows))]

    def before_end(self, plan: SourceTaskPlan, batch_id: int | None) -> None:
        """The `before_commit` hook."""
        plan.hooks.reached("before_commit", batch_id)

    def end(self, producer: TransactionalProducer, settle: Settle) -> None:
        """Commit the transaction (retrying what is retriable); raises the client's error.
        The commit itself settles every delivery."""
        commit_transaction(producer, COMMIT_TIMEOUT_S)

    def after_end(self, plan: SourceTaskPlan, batch_id: int | None) -> None:
        """The `after_commit` hook."""
        plan.hooks.reached("after_commit", batch_id)

    def abort(self, producer: TransactionalProducer) -> None:
        """Abort the open transaction; raises the client's error."""
        # Kafka first gets the records, so the transaction's partitions are added: an abort
        # sent while they are still being added (right after the last commit) finds that
        # commit's completed state and is refused as INVALID_TXN_STATE, fatally
        producer.flush(COMMIT_TIMEOUT_S)
        producer.abort_transaction(COMMIT_TIMEOUT_S)
        producer.flush(COMMIT_TIMEOUT_S)  # serve the aborted records' reports

    def abandon(self, producer: TransactionalProducer) -> None:
        """Abort the open transaction on close, logging a failure (the task goes anyway)."""
        try:
            producer.abort_transaction(CLOSE_ABORT_TIMEOUT_S)
        except PRODUCER_ERRORS as error:
            log.info("aborting the open transaction on close failed: %s", error)


DeliveryGuarantee = AtLeastOnce | ExactlyOnce


def guarantee_for(plan: SourceTaskPlan) -> DeliveryGuarantee:
    """The strategy of the task `plan` describes."""
    return ExactlyOnce() if plan.exactly_once else AtLeastOnce()
