"""The replay guard of an exactly-once source task on the in-memory log: what an earlier
attempt of the same micro-batch committed since planning (its rows), an open transaction not
holding the start, and the first commit's stale-offsets check."""

from __future__ import annotations

from typing import Any

from spark_eos_connect.source.records import committed_rows
from spark_eos_connect.source.replay import ROWS_HEADER, attempt_digest, encode_rows_header
from spark_eos_connect.source.replay_guard import ReplayGuard
from spark_eos_connect.storage.memory_log import MemoryLog, MemoryOffsetsLog, MemoryProducer
from spark_eos_connect.storage.offsets import OffsetsWriter
from spark_eos_connect.testing import example_plan

OFFSETS = "eosconnect-offsets"
STREAM = {"stream": 0}
PLAN = example_plan([(STREAM, {"position": 3})], offsets_positions={}, offsets_topic_partitions=5)
ROWS = committed_rows(["data", "data"], [0, 0], [3, 4])


def new_log() -> MemoryLog:
    log = MemoryLog()
    log.create_topic(OFFSETS, 5)
    return log


def earlier_attempt(log: MemoryLog, batch_id: int, commit: bool = True) -> MemoryProducer:
    """An attempt of `batch_id` that wrote position 5 and ROWS in a transaction."""
    producer = MemoryProducer(log, f"attempt-{batch_id}")
    producer.begin_transaction()
    header = [(ROWS_HEADER, encode_rows_header(attempt_digest(PLAN, batch_id), ROWS))]
    writer = OffsetsWriter(OFFSETS, 5, "c")
    writer.write(producer, [(STREAM, {"position": 5})], first_headers=header)
    if commit:
        producer.commit_transaction()
    return producer


def guard(log: MemoryLog) -> tuple[ReplayGuard, MemoryOffsetsLog]:
    view = MemoryOffsetsLog(log, OFFSETS)
    return ReplayGuard(view), view


def test_a_committed_earlier_attempt_of_the_micro_batch_is_found_with_its_rows() -> None:
    log = new_log()
    earlier_attempt(log, 7)
    replay, _ = guard(log)

    found = replay.since_planning(PLAN, 7)

    assert found is not None and found.transactions == 1
    assert [rows.to_pylist() for rows in found.rows] == [ROWS.to_pylist()]


def test_another_micro_batchs_commit_is_no_replay_but_makes_the_first_commit_stale() -> None:
    log = new_log()
    earlier_attempt(log, 6)
    replay, view = guard(log)

    assert replay.since_planning(PLAN, 7) is None
    stale, earlier = replay.first_commit([(STREAM, {"position": 9})], PLAN, 7)

    assert stale and earlier is None
    assert not replay.verified and view.closed


def test_an_open_transaction_holds_neither_the_start_nor_escapes_the_first_commit() -> None:
    log = new_log()
    zombie = earlier_attempt(log, 7, commit=False)
    replay, _ = guard(log)

    assert replay.since_planning(PLAN, 7) is None  # up to the last stable offset only
    zombie.commit_transaction()  # the zombie's maybe turned into a commit
    stale, earlier = replay.first_commit([(STREAM, {"position": 9})], PLAN, 7)

    assert stale
    assert earlier is not None and earlier.rows[0].to_pylist() == ROWS.to_pylist()


def test_the_first_commit_passes_when_nothing_was_committed_since_planning() -> None:
    log = new_log()
    replay, view = guard(log)
    assert replay.since_planning(PLAN, 7) is None

    stale, earlier = replay.first_commit([(STREAM, {"position": 9})], PLAN, 7)

    assert (stale, earlier) == (False, None)
    assert replay.verified and view.closed


def test_the_plans_committed_offsets_seed_the_snapshot() -> None:
    log = new_log()
    replay, view = guard(log)
    plan: Any = example_plan([(STREAM, {"position": 3})], offsets_positions={2: 0})

    replay.since_planning(plan, 1)

    assert view.snapshot.offset("c", STREAM) == {"position": 3}
    assert view.positions == {2: 0}
    replay.close()
    replay.close()  # idempotent
    assert view.closed
