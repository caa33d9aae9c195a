"""Where a live source task's transactions end (KIP-618's `transaction.boundary`), one small class
per policy (Kafka Connect's `TransactionBoundaryManager`), chosen once from the plan:

- `PollBoundary` (`poll`, and every at-least-once task): one transaction per micro-batch,
  committed at its end;
- `IntervalBoundary` (`interval`): committed once `transaction.boundary.interval.ms` has passed
  since it began, checked after each poll's records, and at the end of the micro-batch;
- `ConnectorBoundary` (`connector`): only the task's `TransactionContext` requests end one, on a
  record or after a poll (one that returned no records too, at once); one left open at the end
  of a micro-batch stays open into the next.
  A Java task's converted records carry its requests (`ConvertedRecords.on_last`, `after_poll`:
  its JVM ends each batch at a request).

A boundary decides; it acts through `Transactions` (`source.transactions.TaskTransactions`).
The task loop calls a boundary with each poll's records (`dispatch`), after a poll that returned
none (`after_empty_poll`), and when the micro-batch ends (`end_batch`).
"""

from __future__ import annotations

from typing import Protocol, cast

from spark_eos_connect.api.source import SourceRecord, TransactionContext
from spark_eos_connect.jvm_tasks.converted import ConvertedRecords, TransactionRequest


class Transactions(Protocol):
    """What a boundary asks of the task loop."""

    def produce(self, records: list[SourceRecord]) -> None:
        """Hand `records` to the producer in the open transaction (begun if needed)."""
        ...

    def commit(self) -> None:
        """Commit the open transaction (records and source offsets), if any."""
        ...

    def abort(self) -> None:
        """Abort the open transaction, if any; the task polls on."""
        ...

    def open_for_ms(self) -> float | None:
        """How long the open transaction has been open; None when none is."""
        ...


class Boundary:
    """Commit at the end of each micro-batch only (`poll`)."""

    def dispatch(self, records: list[SourceRecord], ends_poll: bool, txn: Transactions) -> None:
        """Produce `records` (`ends_poll`: they end what one `poll()` returned), ending
        transactions where the policy says so."""
        txn.produce(records)

    def after_empty_poll(self, records: list[SourceRecord], txn: Transactions) -> None:
        """A `poll()` returned no records (`records`, empty): nothing to end here."""

    def end_batch(self, txn: Transactions) -> None:
        """The micro-batch ends: commit what is open."""
        txn.commit()


class PollBoundary(Boundary):
    """`transaction.boundary=poll`: one transaction per task per micro-batch."""


class IntervalBoundary(Boundary):
    """`transaction.boundary=interval`: commit once `interval_ms` passed since it began."""

    def __init__(self, interval_ms: int) -> None:
        self.interval_ms = interval_ms

    def dispatch(self, records: list[SourceRecord], ends_poll: bool, txn: Transactions) -> None:
        """Produce, then commit if the open transaction is old enough and the records end
        their poll (Connect commits between two polls only)."""
        txn.produce(records)
        age_ms = txn.open_for_ms()
        if ends_poll and age_ms is not None and age_ms >= self.interval_ms:
            txn.commit()


class ConnectorBoundary(Boundary):
    """`transaction.boundary=connector`: the task's `TransactionContext` ends transactions."""

    def __init__(self, context: TransactionContext) -> None:
        self.context = context

    def dispatch(self, records: list[SourceRecord], ends_poll: bool, txn: Transactions) -> None:
        """Produce up to each record the task asked to commit or abort on, end the transaction
        there; after the records of a whole poll, honour a request made for the batch."""
        if isinstance(records, ConvertedRecords):  # a Java task's: its requests come with them
            self._dispatch_converted(records, txn)
            return
        context = self.context
        start = 0
        if context.has_pending_requests():
            for i, record in enumerate(records):
                if context.should_abort_on(record):
                    txn.produce(records[start : i + 1])
                    txn.abort()
                    start = i + 1
                elif context.should_commit_on(record):
                    txn.produce(records[start : i + 1])
                    txn.commit()
                    start = i + 1
        txn.produce(records[start:])
        if ends_poll:
            if context.should_abort_batch():
                txn.abort()
            elif context.should_commit_batch():
                txn.commit()

    @staticmethod
    def _dispatch_converted(records: ConvertedRecords, txn: Transactions) -> None:
        """Produce, then end the transaction as the batch's last record, then its poll, ask."""
        txn.produce(cast("list[SourceRecord]", records))
        request: TransactionRequest | None
        for request in (records.on_last, records.after_poll):
            if request == "abort":
                txn.abort()
            elif request == "commit":
                txn.commit()

    def after_empty_poll(self, records: list[SourceRecord], txn: Transactions) -> None:
        """A request the task made in a `poll()` that returned no records ends the open
        transaction at once, as on a Connect worker (a Java task's comes with its empty
        batch, `after_poll`)."""
        if isinstance(records, ConvertedRecords):
            self._dispatch_converted(records, txn)
        elif self.context.should_abort_batch():
            txn.abort()
        elif self.context.should_commit_batch():
            txn.commit()

    def end_batch(self, txn: Transactions) -> None:
        """Nothing: what is open stays open into the next micro-batch, until the task asks."""


def boundary_for(
    exactly_once: bool,
    policy: str,
    interval_ms: int,
    context: TransactionContext | None,
) -> Boundary:
    """The boundary of a task: `policy` (`interval` or `connector`; anything else is `poll`) in
    exactly-once mode, `poll` otherwise. `connector` takes the task's `context`, which every
    task started with that policy has."""
    if not exactly_once:
        return PollBoundary()
    if policy == "interval":
        return IntervalBoundary(interval_ms)
    if policy == "connector" and context is not None:
        return ConnectorBoundary(context)
    return PollBoundary()
