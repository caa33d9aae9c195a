"""The exactly-once source loop on the in-memory twins (`storage.memory_log`), without a broker:
records and source offsets committed in one transaction and invisible until then, aborted
transactions leaving nothing, a zombie fenced by a newer attempt with the same transactional id,
a re-run of a committed micro-batch replaying its rows, the stale-offsets check, the interval
boundary driven by an injected clock, and a stopped connector writing nothing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from spark_eos_connect.api.source import SourceRecord, SourceTask
from spark_eos_connect.kafka.producers import ProducerFencedError
from spark_eos_connect.protocol.generations import TaskStartupError
from spark_eos_connect.source import task_loop
from spark_eos_connect.source.plan import SourceTaskPlan
from spark_eos_connect.source.replay import ROWS_HEADER
from spark_eos_connect.source.task_loop import BatchResult, LiveSourceTask, run_task_once
from spark_eos_connect.storage.memory import MemoryConfigStore
from spark_eos_connect.storage.memory_log import (
    ManualClock,
    MemoryLog,
    MemoryOffsetsLog,
    MemoryTaskClients,
)
from spark_eos_connect.testing import example_plan, fibonacci_transactions

OFFSETS = "eosconnect-offsets"
STREAM = {"stream": 0}
COUNTER = "spark_eos_connect.testing.CounterSourceTask"
SCRIPTED = "spark_eos_connect.testing.ScriptedTransactionsTask"


def twin_plan(committed: list[tuple[dict[str, Any], Any]] | None = None, **changes: Any) -> Any:
    """One task of connector `c` writing stream 0 of the counter to topic `data`, 10 records a
    micro-batch, 4 a poll; read from the start of the offsets topic; no config topic."""
    settings: dict[str, Any] = {
        "task_class": COUNTER,
        "task_config": {
            "topic": "data",
            "streams": "1",
            "streams.assigned": "0",
            "records.per.poll": "5",  # two polls fill a micro-batch of 10
        },
        "offsets_positions": {},
        "offsets_topic_partitions": 5,
        "config_topic": "",
        "max_records": 10,
        "max_poll_duration_ms": 600_000,
        **changes,
    }
    return example_plan(committed or [], **settings)


def new_log() -> MemoryLog:
    log = MemoryLog()
    log.create_topic(OFFSETS, 5)
    return log


def run(
    live: LiveSourceTask, plan: SourceTaskPlan, batch_id: int = 0
) -> tuple[BatchResult, list[dict[str, Any]]]:
    result = BatchResult()
    rows = [row for batch in live.run_batch(plan, batch_id, result) for row in batch.to_pylist()]
    return result, rows


def data(log: MemoryLog, committed: bool = True) -> list[str]:
    records = log.read_committed("data") if committed else log.read_uncommitted("data")
    return [record.value.decode() for record in records if record.value is not None]


def offsets(log: MemoryLog) -> MemoryOffsetsLog:
    view = MemoryOffsetsLog(log, OFFSETS)
    view.read_new()
    return view


class At:
    """Commit hooks running `action` when `point` is reached."""

    def __init__(self, point: str, action: Callable[[], None]) -> None:
        self.point, self.action = point, action

    def reached(self, point: str, batch_id: int | None) -> None:
        if point == self.point:
            self.action()

    def armed(self, point: str) -> bool:
        return point == self.point


# -- commit ---------------------------------------------------------------------------------------


def test_records_and_offsets_commit_in_one_transaction_invisible_until_committed() -> None:
    log = new_log()
    seen_before_commit: list[tuple[list[str], list[str], int]] = []

    def look() -> None:
        seen_before_commit.append(
            (data(log), data(log, committed=False), len(log.read_uncommitted(OFFSETS)))
        )

    plan = twin_plan(hooks=At("before_commit", look))
    live = LiveSourceTask({}, plan, clients=MemoryTaskClients(log))

    result, rows = run(live, plan)

    expected = [f"0:{n}" for n in range(10)]
    assert seen_before_commit == [([], expected, 1)]  # produced, not yet read_committed
    assert data(log) == expected
    assert rows == [{"topic": "data", "partition": 0, "offset": n} for n in range(10)]
    assert (result.records, result.transactions, result.offsets_committed) == (10, 1, 1)
    view = offsets(log)
    assert view.snapshot.offset("c", STREAM) == {"position": 10}
    [offsets_record] = log.read_committed(OFFSETS)
    assert [name for name, _ in offsets_record.headers] == [ROWS_HEADER]
    live.close()


def test_a_kept_task_continues_with_the_same_producer_in_the_next_micro_batch() -> None:
    log = new_log()
    clients = MemoryTaskClients(log)
    first = twin_plan()
    live = LiveSourceTask({}, first, clients=clients)
    run(live, first, 0)
    second = twin_plan([(STREAM, {"position": 10})])

    assert live.matches(second)
    result, _ = run(live, second, 1)

    assert result.reused and result.records == 10
    assert len(clients.producers) == 1
    assert data(log) == [f"0:{n}" for n in range(20)]
    assert offsets(log).snapshot.offset("c", STREAM) == {"position": 20}
    assert not live.matches(first)  # its partition moved on since that plan
    live.close()


def test_at_least_once_writes_without_transactions() -> None:
    log = new_log()
    plan = twin_plan(exactly_once=False)

    result = run_task_once({}, plan, clients=MemoryTaskClients(log))

    assert (result.records, result.transactions, result.exactly_once) == (10, 1, False)
    assert data(log) == [f"0:{n}" for n in range(10)]
    assert log.read_committed(OFFSETS)[0].headers == ()  # no replay header without transactions


# -- one poll, one transaction -------------------------------------------------------------------

CHUNKED = "spark_eos_connect.testing.connectors.ChunkedPollsTask"


@pytest.mark.parametrize("chunk", [None, 2])  # 2: batches asked two records at a time
def test_a_converted_batch_that_stops_inside_a_poll_is_followed_by_the_rest_of_that_poll(
    chunk: int | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    if chunk is not None:
        monkeypatch.setattr(task_loop, "CONVERTED_BATCH_MAX", chunk)
    log = new_log()
    plan = twin_plan(
        task_class=CHUNKED,
        task_config={"topic": "data", "records.total": "9", "records.per.poll": "3"},
        max_records=4,
    )
    live = LiveSourceTask({}, plan, clients=MemoryTaskClients(log))

    result, rows = run(live, plan)

    # 0-2, then 3 fills the limit inside the second poll: 4 and 5 share its offset and come too
    assert data(log) == ["0", "1", "2", "3", "4", "5"] and len(rows) == 6
    assert result.transactions == 1
    assert offsets(log).snapshot.offset("c", {"chunked": 0}) == {"poll.end": 6}
    live.close()


@pytest.mark.parametrize("boundary", ["poll", "interval"])
def test_a_python_tasks_poll_past_the_budget_is_taken_whole(boundary: str) -> None:
    log = new_log()
    plan = twin_plan(max_records=7, transaction_boundary=boundary)  # polls of 5

    result, rows = run(LiveSourceTask({}, plan, clients=MemoryTaskClients(log)), plan)

    # 0-4, then 5 and 6 fill the budget inside the second poll: 7-9 come with them
    assert data(log) == [f"0:{n}" for n in range(10)] and len(rows) == 10
    assert result.records == 10 and result.transactions == 1
    assert offsets(log).snapshot.offset("c", STREAM) == {"position": 10}


def test_an_interval_transaction_commits_only_where_a_poll_ends() -> None:
    log = new_log()
    plan = twin_plan(
        task_class=CHUNKED,
        task_config={"topic": "data", "records.total": "6", "records.per.poll": "3"},
        transaction_boundary="interval",
        transaction_interval_ms=0,
        max_records=2,
    )
    live = LiveSourceTask({}, plan, clients=MemoryTaskClients(log))

    result, _ = run(live, plan)

    assert data(log) == ["0", "1", "2"] and result.transactions == 1
    live.close()


# -- abort (connector-defined boundaries) ---------------------------------------------------------


def scripted_plan(
    total: int,
    max_records: int = 100,
    committed: list[tuple[dict[str, Any], Any]] | None = None,
    per_poll: int = 7,
) -> Any:
    return twin_plan(
        committed,
        task_class=SCRIPTED,
        task_config={
            "topic": "data",
            "records.total": str(total),
            "records.per.poll": str(per_poll),
        },
        transaction_boundary="connector",
        max_records=max_records,
    )


def test_transactions_the_task_aborts_leave_neither_records_nor_offsets() -> None:
    log = new_log()
    plan = scripted_plan(12)
    live = LiveSourceTask({}, plan, clients=MemoryTaskClients(log))

    result, rows = run(live, plan)

    committed = [
        str(n)
        for first, size, kept in fibonacci_transactions(12)
        if kept
        for n in range(first, first + size)
    ]
    assert committed == ["0", "1", "4", "5", "6", "7", "8", "9", "10", "11"]
    assert data(log) == committed
    assert data(log, committed=False) == [str(n) for n in range(12)]
    assert (result.transactions, result.aborted_transactions) == (4, 1)
    assert [row["offset"] for row in rows] == [
        record.offset for record in log.read_committed("data")
    ]
    assert offsets(log).snapshot.offset("c", {"script": "fibonacci"}) == {"position": 12}
    live.close()


def test_a_connector_defined_transaction_stays_open_into_the_next_micro_batch() -> None:
    log = new_log()
    # polls of 3 fill the micro-batch with 0..8: the transaction of 7..11 is cut at 8
    plan = scripted_plan(12, max_records=9, per_poll=3)
    live = LiveSourceTask({}, plan, clients=MemoryTaskClients(log))

    first, _ = run(live, plan, 0)

    assert first.open_transaction
    assert "7" not in data(log) and "8" in data(log, committed=False)
    assert offsets(log).snapshot.offset("c", {"script": "fibonacci"}) == {"position": 7}
    later = scripted_plan(
        12, max_records=9, committed=[({"script": "fibonacci"}, {"position": 7})], per_poll=3
    )
    assert live.matches(later)

    second, rows = run(live, later, 1)

    assert not second.open_transaction and second.transactions == 1
    assert data(log)[-5:] == ["7", "8", "9", "10", "11"]
    assert len(rows) == 5  # the whole transaction's rows, 7 and 8 included
    live.close()


class CommitsWhenIdle(SourceTask):
    """Five records in its first poll, no request; asks to commit in its next poll(), which
    returns nothing (a source gone idle)."""

    def start(self, props: dict[str, str]) -> None:
        self.polls = 0

    def stop(self) -> None:
        """Nothing to release."""

    def poll(self) -> list[SourceRecord] | None:
        self.polls += 1
        if self.polls == 1:
            return [SourceRecord(STREAM, {"n": n}, "data", str(n)) for n in range(5)]
        if self.polls == 2:
            context = self.context.transaction_context
            assert context is not None
            context.commit_transaction()
        return None


def test_a_commit_asked_in_a_poll_that_returned_nothing_commits_at_once() -> None:
    log = new_log()
    plan = twin_plan(task_class=f"{__name__}.CommitsWhenIdle", transaction_boundary="connector")
    live = LiveSourceTask({}, plan, clients=MemoryTaskClients(log))

    result, rows = run(live, plan)

    assert not result.open_transaction and result.transactions == 1
    assert data(log) == ["0", "1", "2", "3", "4"]  # visible now, not after records to come
    assert offsets(log).snapshot.offset("c", STREAM) == {"n": 4}
    assert len(rows) == 5
    live.close()


def test_closing_a_task_aborts_its_open_transaction() -> None:
    log = new_log()
    plan = scripted_plan(12, max_records=9, per_poll=3)
    live = LiveSourceTask({}, plan, clients=MemoryTaskClients(log))
    run(live, plan)

    live.close()

    assert log.last_stable_offset("data", 0) == log.high_watermark("data", 0)
    assert "8" not in data(log)


# -- fencing --------------------------------------------------------------------------------------


def test_a_newer_attempt_fences_the_older_whose_commit_fails_and_leaves_nothing() -> None:
    log = new_log()
    newer: list[BatchResult] = []

    def newer_attempt_elsewhere() -> None:
        newer.append(run_task_once({}, twin_plan(), 0, clients=MemoryTaskClients(log)))

    plan = twin_plan(hooks=At("before_commit", newer_attempt_elsewhere))
    zombie = LiveSourceTask({}, plan, clients=MemoryTaskClients(log))

    with pytest.raises(ProducerFencedError, match="fenced by a newer producer"):
        run(zombie, plan)
    zombie.close()

    assert newer[0].records == 10
    assert data(log) == [f"0:{n}" for n in range(10)]  # the newer attempt's, once
    assert len(data(log, committed=False)) == 20  # the zombie's records, aborted
    assert len(log.read_committed(OFFSETS)) == 1
    assert offsets(log).snapshot.offset("c", STREAM) == {"position": 10}


def test_a_kept_producer_fenced_between_micro_batches_fails_the_next_one() -> None:
    log = new_log()
    plan = twin_plan()
    kept = LiveSourceTask({}, plan, clients=MemoryTaskClients(log))
    run(kept, plan, 0)
    later = twin_plan([(STREAM, {"position": 10})])
    assert run_task_once({}, later, 1, clients=MemoryTaskClients(log)).records == 10

    with pytest.raises(ProducerFencedError):
        run(kept, later, 1)

    assert data(log) == [f"0:{n}" for n in range(20)]


# -- replay and the stale-offsets check -----------------------------------------------------------


def test_a_rerun_of_a_committed_micro_batch_emits_its_rows_and_runs_nothing() -> None:
    log = new_log()
    plan = twin_plan()
    _, first_rows = run(LiveSourceTask({}, plan, clients=MemoryTaskClients(log)), plan, 5)
    clients = MemoryTaskClients(log)
    retry = LiveSourceTask({}, plan, clients=clients)

    result, rows = run(retry, plan, 5)

    assert result.replayed and rows == first_rows
    assert (result.records, result.transactions) == (10, 1)
    assert retry.task is None and retry.stale  # no task ran; the next batch starts afresh
    assert len(clients.producers) == 1  # its producer fenced every earlier attempt first
    assert data(log) == [f"0:{n}" for n in range(10)]


def test_another_micro_batch_planned_on_stale_offsets_writes_nothing() -> None:
    log = new_log()
    plan = twin_plan()
    run(LiveSourceTask({}, plan, clients=MemoryTaskClients(log)), plan, 5)
    stale = LiveSourceTask({}, plan, clients=MemoryTaskClients(log))

    result, rows = run(stale, plan, 6)  # another batch id: not a replay, planned before batch 5

    assert rows == [] and not result.replayed
    assert (result.records, result.stale_rows_skipped, result.transactions) == (0, 10, 0)
    assert stale.stale
    assert data(log) == [f"0:{n}" for n in range(10)]
    assert offsets(log).snapshot.offset("c", STREAM) == {"position": 10}


# -- the interval boundary, on an injected clock --------------------------------------------------


CLOCKS: dict[str, ManualClock] = {}


class TickingTask(SourceTask):
    """Two records a poll; each poll takes `seconds.per.poll` of the clock named `clock`."""

    def version(self) -> str:
        return "1"

    def start(self, props: dict[str, str]) -> None:
        self.clock = CLOCKS[props["clock"]]
        self.step = float(props["seconds.per.poll"])
        self.next = 0

    def poll(self) -> list[SourceRecord] | None:
        self.clock.advance(self.step)
        records = [
            SourceRecord(STREAM, {"position": n + 1}, "data", str(n))
            for n in range(self.next, self.next + 2)
        ]
        self.next += 2
        return records

    def stop(self) -> None:
        pass


@pytest.mark.parametrize(
    ("boundary", "transactions"),
    [("interval", [8, 8, 4]), ("poll", [20])],
)
def test_the_interval_boundary_commits_when_the_injected_clock_says_so(
    boundary: str, transactions: list[int]
) -> None:
    """Polls at t = 0.4, 0.8, ... s; a transaction begun at 0.4 s is 1.2 s old after the fourth
    poll (>= 1 s): committed with 8 records; likewise the next; the last 4 at the batch's end."""
    log, clock = new_log(), ManualClock()
    CLOCKS[boundary] = clock
    plan = twin_plan(
        task_class=f"{__name__}.TickingTask",
        task_config={"clock": boundary, "seconds.per.poll": "0.4"},
        transaction_boundary=boundary,
        transaction_interval_ms=1000,
        max_records=20,
    )
    live = LiveSourceTask({}, plan, clients=MemoryTaskClients(log, clock=clock))

    result, _ = run(live, plan)

    assert result.transactions == len(transactions)
    positions = [record.value for record in log.read_committed(OFFSETS)]  # one per transaction
    assert positions == [
        f'{{"position":{sum(transactions[: i + 1])}}}'.encode() for i in range(len(transactions))
    ]
    live.close()


# -- start-up checks ------------------------------------------------------------------------------


def config_topic() -> tuple[MemoryConfigStore, int]:
    """A config topic where connector `c` runs one task; the offset of its task commit."""
    store = MemoryConfigStore()
    leader = store.leader()
    leader.put_connector_config("c", {"connector.class": "Counter"})
    leader.put_task_configs("c", [{"topic": "data"}])
    leader.put_task_count("c", 1)
    return store, 2  # connector config at 0, task config at 1, its commit at 2


def test_a_task_of_the_running_generation_runs() -> None:
    log, (store, commit_offset) = new_log(), config_topic()
    plan = twin_plan(config_topic="eosconnect-configs", generation_commit_offset=commit_offset)

    result = run_task_once({}, plan, clients=MemoryTaskClients(log, config_store=store))

    assert result.records == 10


def test_a_stopped_connector_writes_nothing_and_builds_no_producer() -> None:
    log, (store, commit_offset) = new_log(), config_topic()
    store.leader().stop_connector("c")
    clients = MemoryTaskClients(log, config_store=store)
    plan = twin_plan(config_topic="eosconnect-configs", generation_commit_offset=commit_offset)

    result = run_task_once({}, plan, clients=clients)

    assert (result.records, result.transactions) == (0, 0)
    assert clients.producers == []
    assert data(log, committed=False) == []


def test_a_task_of_an_earlier_generation_refuses_to_start() -> None:
    log, (store, commit_offset) = new_log(), config_topic()
    clients = MemoryTaskClients(log, config_store=store)
    plan = twin_plan(config_topic="eosconnect-configs", generation_commit_offset=commit_offset - 1)

    with pytest.raises(TaskStartupError, match="zombie of an earlier generation"):
        run_task_once({}, plan, clients=clients)

    assert clients.producers == []
