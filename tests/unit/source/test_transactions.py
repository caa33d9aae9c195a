"""`source.transactions.TaskTransactions` on the in-memory twins (`storage.memory_log`): what a
boundary drives. Records and source offsets commit in one transaction, the task's
`commit_record`/`commit` hooks follow the commit, an abort leaves nothing and counts, the open
transaction's age comes from the task's clock, and a task going away abandons what is open."""

from __future__ import annotations

import json
from typing import Any

from spark_eos_connect.api.source import RecordMetadata, SourceRecord, SourceTask
from spark_eos_connect.source.batch_result import BatchResult
from spark_eos_connect.source.guarantees import ExactlyOnce
from spark_eos_connect.source.offsets_mirror import OffsetsMirror
from spark_eos_connect.source.plan import SourceTaskPlan
from spark_eos_connect.source.sender import RecordSender
from spark_eos_connect.source.submitted import SubmittedOffsets
from spark_eos_connect.source.task_failures import TaskFailures
from spark_eos_connect.source.transactions import TaskTransactions
from spark_eos_connect.storage.memory_log import ManualClock, MemoryLog, MemoryTaskClients
from spark_eos_connect.testing import example_plan

OFFSETS = "eosconnect-offsets"
STREAM = {"stream": 0}


class HookedTask(SourceTask):
    """Writes down its `commit_record` and `commit` calls."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def start(self, props: dict[str, str]) -> None:
        pass

    def stop(self) -> None:
        pass

    def poll(self) -> list[SourceRecord] | None:
        return None

    def commit_record(self, record: SourceRecord, metadata: RecordMetadata | None) -> None:
        self.calls.append(f"commit_record {record.value}")

    def commit(self) -> None:
        self.calls.append("commit")


class Setup:
    """A `TaskTransactions` of a `HookedTask` on a fresh `MemoryLog`, exactly once."""

    def __init__(self, **changes: Any) -> None:
        self.log = MemoryLog()
        self.log.create_topic(OFFSETS, 25)
        self.clients = MemoryTaskClients(self.log, clock=ManualClock())
        self.plan: SourceTaskPlan = example_plan([], **changes)
        self.task = HookedTask()
        submitted = SubmittedOffsets()
        guarantee = ExactlyOnce()
        producer = self.clients.task_producer(self.plan.transactional_id, submitted.delivered)
        sender = RecordSender(
            self.plan, producer, submitted, None, True, submitted.dropped, _never_refused
        )
        self.result = BatchResult()
        self.txns = TaskTransactions(
            self.task,
            sender,
            guarantee,
            submitted,
            TaskFailures(self.plan, {}),
            None,
            OffsetsMirror(self.clients.mirror_producer),
            self.clients.clock,
        )
        self.txns.start_batch(self.plan, 0, self.result)

    def committed(self, topic: str) -> list[Any]:
        return [
            json.loads(r.value) if r.value is not None else None
            for r in self.log.read_committed(topic)
        ]


def _never_refused(error: Any, topic: str) -> Any:
    raise AssertionError(f"refused: {topic}: {error}")


def records(*values: int) -> list[SourceRecord]:
    return [SourceRecord(STREAM, {"n": v}, "t", v) for v in values]


def test_records_and_offsets_commit_together_then_the_task_hears_of_it() -> None:
    setup = Setup()
    txns = setup.txns

    txns.produce(records(1, 2))
    assert txns.open and setup.committed("t") == [] and setup.task.calls == []
    txns.commit()

    assert not txns.open
    assert setup.committed("t") == [1, 2]
    assert setup.committed(OFFSETS) == [{"n": 2}]  # the last offset of the stream
    assert setup.task.calls == ["commit_record 1", "commit_record 2", "commit"]
    assert (setup.result.records, setup.result.transactions) == (2, 1)
    assert setup.result.offsets_committed == 1
    assert sum(rows.num_rows for rows in txns.take_rows()) == 2
    assert list(txns.take_rows()) == []  # taken once
    txns.commit()  # nothing open: nothing happens
    assert setup.result.transactions == 1


def test_an_abort_leaves_nothing_and_counts() -> None:
    setup = Setup()
    txns = setup.txns

    txns.produce(records(1))
    txns.abort()
    txns.produce(records(2))
    txns.commit()

    assert setup.committed("t") == [2]
    assert setup.committed(OFFSETS) == [{"n": 2}]
    assert setup.result.aborted_transactions == 1
    assert setup.task.calls == ["commit_record 2", "commit"]


def test_the_open_transaction_is_as_old_as_the_clock_says() -> None:
    setup = Setup()
    txns = setup.txns

    assert txns.open_for_ms() is None
    txns.produce([])  # nothing to hand over: nothing begins
    assert txns.open_for_ms() is None
    txns.produce(records(1))
    setup.clients.clock.advance(1.5)
    txns.produce(records(2))  # the same transaction
    assert txns.open_for_ms() == 1500


def test_a_task_going_away_abandons_the_open_transaction() -> None:
    setup = Setup()
    txns = setup.txns

    txns.produce(records(1))
    txns.abandon()

    assert not txns.open and setup.committed("t") == []
    assert setup.task.calls == []


def test_committed_offsets_are_mirrored_to_the_global_topic() -> None:
    setup = Setup(offsets_topic="own-offsets", mirror_offsets_topic=OFFSETS)
    setup.log.create_topic("own-offsets", 25)

    setup.txns.produce(records(7))
    setup.txns.commit()
    setup.txns.flush_mirror()

    assert setup.committed("own-offsets") == [{"n": 7}]
    assert setup.committed(OFFSETS) == [{"n": 7}]
