"""`source.boundaries`: which boundary a plan gets, and where each one ends transactions, seen
through a recording `Transactions` (what the task loop's `TaskTransactions` does for real);
a Java task's requests, which come with its converted batches."""

from __future__ import annotations

from typing import Any, cast

from spark_eos_connect.api.source import SourceRecord, TransactionContext
from spark_eos_connect.jvm_tasks.converted import ConvertedRecords, TransactionRequest
from spark_eos_connect.source.boundaries import (
    ConnectorBoundary,
    IntervalBoundary,
    PollBoundary,
    boundary_for,
)


class Recording:
    """`boundaries.Transactions` writing down each call: ``produce <values>``, ``commit``,
    ``abort``; its open transaction is `age_ms` old once records were produced."""

    def __init__(self, age_ms: float = 0.0) -> None:
        self.calls: list[str] = []
        self.age_ms = age_ms
        self.open = False

    def produce(self, records: list[SourceRecord]) -> None:
        self.calls.append("produce " + ",".join(str(r.value) for r in records))
        self.open = self.open or bool(records)

    def commit(self) -> None:
        self.calls.append("commit")
        self.open = False

    def abort(self) -> None:
        self.calls.append("abort")
        self.open = False

    def open_for_ms(self) -> float | None:
        return self.age_ms if self.open else None


def records(*values: int) -> list[SourceRecord]:
    return [SourceRecord({"s": 0}, {"n": v}, "t", v) for v in values]


def test_the_boundary_is_chosen_once_from_the_plan() -> None:
    context = TransactionContext()

    assert type(boundary_for(True, "poll", 1000, None)) is PollBoundary
    assert type(boundary_for(False, "interval", 1000, None)) is PollBoundary  # at least once
    assert type(boundary_for(False, "connector", 1000, context)) is PollBoundary
    interval = boundary_for(True, "interval", 1000, None)
    assert isinstance(interval, IntervalBoundary) and interval.interval_ms == 1000
    assert isinstance(boundary_for(True, "connector", 1000, context), ConnectorBoundary)


def test_poll_commits_once_when_the_micro_batch_ends() -> None:
    txn, boundary = Recording(age_ms=10**9), PollBoundary()

    boundary.dispatch(records(1, 2), True, txn)
    boundary.dispatch(records(3), True, txn)
    boundary.end_batch(txn)

    assert txn.calls == ["produce 1,2", "produce 3", "commit"]


def test_interval_commits_an_old_enough_transaction_at_a_polls_end_and_at_the_end() -> None:
    txn, boundary = Recording(age_ms=999), IntervalBoundary(1000)

    boundary.dispatch(records(1), True, txn)
    txn.age_ms = 1000
    boundary.dispatch(records(2), False, txn)  # old enough, but its poll goes on
    boundary.dispatch(records(3), True, txn)
    txn.age_ms = 0  # a new transaction
    boundary.dispatch(records(4), True, txn)
    boundary.end_batch(txn)

    assert txn.calls == ["produce 1", "produce 2", "produce 3", "commit", "produce 4", "commit"]


def test_connector_ends_transactions_where_the_task_asks_and_leaves_the_rest_open() -> None:
    context = TransactionContext()
    txn, boundary = Recording(), ConnectorBoundary(context)
    first = records(1, 2, 3, 4)
    context.commit_transaction(first[0])
    context.abort_transaction(first[2])

    boundary.dispatch(first, True, txn)
    context.commit_transaction()  # the whole poll's batch
    boundary.dispatch(records(5), False, txn)  # not the end of a poll: it waits
    boundary.dispatch(records(6), True, txn)
    boundary.dispatch(records(7), True, txn)
    boundary.end_batch(txn)  # open into the next micro-batch

    assert txn.calls == [
        "produce 1",
        "commit",
        "produce 2,3",
        "abort",
        "produce 4",
        "produce 5",
        "produce 6",
        "commit",
        "produce 7",
    ]
    assert txn.open


def converted(
    *values: int, on_last: str | None = None, after_poll: str | None = None
) -> ConvertedRecords:
    """A Java task's batch of `values` (its JVM ended it at the requests given)."""
    return ConvertedRecords(
        first_seq=values[0],
        taken=len(values),
        topics=["t"] * len(values),
        keys=[None] * len(values),
        values=[str(v).encode() for v in values],
        offsets=[({"s": 0}, {"n": values[-1]})],
        on_last=cast("TransactionRequest | None", on_last),
        after_poll=cast("TransactionRequest | None", after_poll),
    )


class RecordingConverted(Recording):
    def produce(self, records: Any) -> None:
        if not records.values:  # as `TaskTransactions.produce`: nothing to hand over
            return
        self.calls.append("produce " + ",".join(v.decode() for v in records.values))
        self.open = True


def test_connector_applies_a_java_tasks_requests_that_come_with_its_batches() -> None:
    txn, boundary = RecordingConverted(), ConnectorBoundary(TransactionContext())
    batches = [
        converted(1, 2, on_last="commit"),
        converted(3, on_last="abort"),
        converted(4),  # no request: stays open, also past a poll's end
        converted(5, after_poll="commit"),
        converted(6, on_last="commit", after_poll="abort"),  # the abort finds nothing open
        converted(7),
    ]

    for batch in batches:
        boundary.dispatch(cast("list[SourceRecord]", batch), True, txn)
    boundary.end_batch(txn)

    assert txn.calls == [
        "produce 1,2",
        "commit",
        "produce 3",
        "abort",
        "produce 4",
        "produce 5",
        "commit",
        "produce 6",
        "commit",
        "abort",
        "produce 7",
    ]
    assert txn.open


def test_a_request_made_in_a_poll_that_returned_nothing_ends_the_transaction_at_once() -> None:
    context = TransactionContext()
    txn, boundary = Recording(), ConnectorBoundary(context)

    boundary.dispatch(records(1, 2), True, txn)
    context.commit_transaction()  # in the next poll(), which returns nothing
    boundary.after_empty_poll([], txn)
    boundary.dispatch(records(3), True, txn)
    context.abort_transaction()
    boundary.after_empty_poll([], txn)
    boundary.after_empty_poll([], txn)  # nothing asked: nothing ends
    boundary.dispatch(records(4), True, txn)
    boundary.after_empty_poll([], txn)

    assert txn.calls == ["produce 1,2", "commit", "produce 3", "abort", "produce 4"]
    assert txn.open  # stays open until the task asks


def test_a_java_tasks_empty_batch_carries_its_empty_polls_request() -> None:
    txn, boundary = RecordingConverted(), ConnectorBoundary(TransactionContext())
    empty = ConvertedRecords(
        first_seq=2, taken=0, topics=[], keys=[], values=[], offsets=[], after_poll="commit"
    )

    boundary.dispatch(cast("list[SourceRecord]", converted(1)), True, txn)
    boundary.after_empty_poll(cast("list[SourceRecord]", empty), txn)

    assert txn.calls == ["produce 1", "commit"]


def test_poll_and_interval_boundaries_end_nothing_after_an_empty_poll() -> None:
    for boundary in (PollBoundary(), IntervalBoundary(0)):
        txn = Recording(age_ms=10**9)
        boundary.dispatch(records(1), False, txn)
        boundary.after_empty_poll([], txn)
        assert txn.calls == ["produce 1"], boundary
