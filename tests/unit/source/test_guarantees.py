"""Exactly-once and at-least-once as the two strategies of the source task loop, through their
public methods on the in-memory log: producers, transactions, boundaries, the replay guard, the
replay header, dropped records and the commit hooks."""

from __future__ import annotations

import logging
from dataclasses import replace

import pytest

from spark_eos_connect.api.source import (
    RecordMetadata,
    SourceRecord,
    SourceTask,
    TransactionContext,
)
from spark_eos_connect.ports import TransactionalProducer
from spark_eos_connect.source.boundaries import ConnectorBoundary, IntervalBoundary, PollBoundary
from spark_eos_connect.source.guarantees import AtLeastOnce, ExactlyOnce, guarantee_for
from spark_eos_connect.source.records import committed_rows
from spark_eos_connect.source.replay import ROWS_HEADER, attempt_digest, decode_rows_header
from spark_eos_connect.source.replay_guard import ReplayGuard
from spark_eos_connect.source.submitted import SubmittedOffsets
from spark_eos_connect.storage.memory_log import MemoryLog, MemoryProducer, MemoryTaskClients
from spark_eos_connect.testing import example_plan

PLAN = example_plan([], transaction_boundary="interval", transaction_interval_ms=500)
RECORD = SourceRecord({"s": 0}, {"p": 1}, "data", "v")


class Committing(SourceTask):
    def __init__(self) -> None:
        super().__init__()
        self.committed: list[tuple[SourceRecord, RecordMetadata | None]] = []

    def start(self, props: dict[str, str]) -> None:
        pass

    def poll(self) -> list[SourceRecord] | None:
        return None

    def stop(self) -> None:
        pass

    def commit_record(self, record: SourceRecord, metadata: RecordMetadata | None) -> None:
        self.committed.append((record, metadata))


class Hooks:
    def __init__(self) -> None:
        self.points: list[tuple[str, int | None]] = []

    def reached(self, point: str, batch_id: int | None) -> None:
        self.points.append((point, batch_id))

    def armed(self, point: str) -> bool:
        return True


def test_the_plan_chooses_the_strategy() -> None:
    assert isinstance(guarantee_for(PLAN), ExactlyOnce)
    assert isinstance(guarantee_for(replace(PLAN, exactly_once=False)), AtLeastOnce)


def test_exactly_once_commits_records_in_a_transaction_of_the_tasks_id() -> None:
    log, guarantee = MemoryLog(), ExactlyOnce()
    producer = MemoryProducer(log, guarantee.transactional_id(PLAN))

    assert producer.transactional_id == "eosconnect-c-0"
    assert guarantee.begin(producer)
    producer.produce("data", b"a")
    assert log.read_committed("data") == []
    guarantee.end(producer, lambda p: pytest.fail("a commit settles by itself"))

    assert [record.value for record in log.read_committed("data")] == [b"a"]


def test_exactly_once_aborts_leave_nothing_and_closing_aborts_what_is_open() -> None:
    log, guarantee = MemoryLog(), ExactlyOnce()
    producer = MemoryProducer(log, "tx")
    guarantee.begin(producer)
    producer.produce("data", b"a")
    guarantee.abort(producer)
    guarantee.begin(producer)
    producer.produce("data", b"b")

    guarantee.abandon(producer)

    assert log.read_committed("data") == []
    assert log.last_stable_offset("data", 0) == log.high_watermark("data", 0)  # none open


def test_exactly_once_closing_a_fenced_producer_only_logs(caplog: pytest.LogCaptureFixture) -> None:
    log, guarantee = MemoryLog(), ExactlyOnce()
    producer = MemoryProducer(log, "tx")
    guarantee.begin(producer)
    MemoryProducer(log, "tx")  # a newer attempt fences it

    with caplog.at_level(logging.INFO):
        guarantee.abandon(producer)

    assert "aborting the open transaction on close failed" in caplog.text


def test_at_least_once_writes_at_once_and_settles_by_waiting_for_deliveries() -> None:
    log, guarantee = MemoryLog(), AtLeastOnce()
    producer = MemoryProducer(log, guarantee.transactional_id(PLAN))
    settled: list[TransactionalProducer] = []

    assert producer.transactional_id is None
    assert not guarantee.begin(producer)
    producer.produce("data", b"a")
    guarantee.end(producer, settled.append)
    guarantee.abort(producer)  # nothing to take back
    guarantee.abandon(producer)

    assert settled == [producer]
    assert [record.value for record in log.read_committed("data")] == [b"a"]


def test_boundaries_follow_the_plan_only_with_transactions() -> None:
    context = TransactionContext()

    interval = ExactlyOnce().boundary(PLAN, None)
    assert isinstance(interval, IntervalBoundary) and interval.interval_ms == 500
    connector = replace(PLAN, transaction_boundary="connector")
    assert isinstance(ExactlyOnce().boundary(connector, context), ConnectorBoundary)
    assert type(AtLeastOnce().boundary(PLAN, None)) is PollBoundary
    assert type(AtLeastOnce().boundary(connector, context)) is PollBoundary


def test_only_exactly_once_guards_a_fresh_task_against_replays() -> None:
    clients = MemoryTaskClients(MemoryLog())

    guard = ExactlyOnce().replay_guard(clients, PLAN)

    assert isinstance(guard, ReplayGuard)
    assert [view.topic for view in clients.offsets_logs] == ["eosconnect-offsets"]
    assert AtLeastOnce().replay_guard(clients, PLAN) is None


def test_a_dropped_record_reaches_commit_record_after_the_commit_or_at_once() -> None:
    task, submitted = Committing(), SubmittedOffsets()

    ExactlyOnce().dropped(task, RECORD, submitted)
    assert task.committed == [] and submitted.acknowledged() == [(RECORD, None)]

    AtLeastOnce().dropped(task, RECORD, SubmittedOffsets())
    assert task.committed == [(RECORD, None)]


def test_only_transactions_name_their_attempt_and_rows_and_reach_the_commit_hooks() -> None:
    rows = committed_rows(["data"], [0], [7])
    hooks = Hooks()
    plan = replace(PLAN, hooks=hooks)

    [(name, value)] = ExactlyOnce().offsets_headers(plan, 3, rows) or []
    assert name == ROWS_HEADER
    attempt, decoded = decode_rows_header(value)
    assert attempt == attempt_digest(plan, 3)
    assert decoded is not None and decoded.to_pylist() == rows.to_pylist()
    assert AtLeastOnce().offsets_headers(plan, 3, rows) is None

    AtLeastOnce().before_end(plan, 3)
    AtLeastOnce().after_end(plan, 3)
    assert hooks.points == []
    ExactlyOnce().before_end(plan, 3)
    ExactlyOnce().after_end(plan, 3)
    assert hooks.points == [("before_commit", 3), ("after_commit", 3)]
