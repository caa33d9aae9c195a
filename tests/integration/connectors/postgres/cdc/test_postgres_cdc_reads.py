"""PostgresCdcSource reads each transaction from its slot once in a task's life: slot reads past
a cursor keep transactions whole (even one whose changes precede the cursor in the WAL), and the
task's polls hand every change out once, in commit order, while the slot stays where Kafka's
commits put it."""

from __future__ import annotations

import pytest

from spark_eos_connect.api.source import InMemoryOffsetStorageReader, SourceTaskContext
from spark_eos_connect.connectors.postgres.cdc import database as db
from spark_eos_connect.connectors.postgres.cdc.pgoutput import (
    Begin,
    Commit,
    Insert,
    decode,
    parse_lsn,
)
from spark_eos_connect.connectors.postgres.cdc.task import PostgresCdcSourceTask
from spark_eos_connect.testing.postgres import PostgresDatabase

pytestmark = pytest.mark.integration


def inserted_ids(rows: list[tuple[int, bytes]]) -> list[str | None]:
    return [m.new[0] for m in map(decode, (data for _, data in rows)) if isinstance(m, Insert)]


def confirmed(database: PostgresDatabase, slot: str) -> int:
    with database.connect() as connection:
        state = db.slot_state(connection, slot)
    assert state is not None and state.confirmed_flush_lsn is not None
    return state.confirmed_flush_lsn


def test_a_read_past_a_cursor_keeps_an_interleaved_transaction_whole(
    postgres_db: PostgresDatabase,
) -> None:
    postgres_db.execute(
        "CREATE TABLE t (id int PRIMARY KEY)",
        "CREATE PUBLICATION reads_pub FOR TABLE t",
        "SELECT pg_create_logical_replication_slot('reads_slot', 'pgoutput')",
    )
    with postgres_db.connect(autocommit=False) as late, postgres_db.connect() as early:
        late.execute("INSERT INTO t VALUES (2)")  # before the other commit in the WAL
        early.execute("INSERT INTO t VALUES (1)")
        late.execute("INSERT INTO t VALUES (3)")
        late.commit()
    with postgres_db.connect() as connection:
        everything, decoded = db.peek_changes(connection, "reads_slot", "reads_pub", 1000)
        first = [decode(data) for _, data in everything]
        first_end = next(m.end_lsn for m in first if isinstance(m, Commit))
        after, decoded_after = db.peek_changes(
            connection, "reads_slot", "reads_pub", 1000, first_end
        )
        nothing, _ = db.peek_changes(connection, "reads_slot", "reads_pub", 1000, 2**63)
    assert inserted_ids(everything) == ["1", "2", "3"]
    assert decoded == decoded_after == len(everything)
    messages = [decode(data) for _, data in after]
    assert isinstance(messages[0], Begin) and isinstance(messages[-1], Commit)
    assert inserted_ids(after) == ["2", "3"]
    assert nothing == []


def test_polls_hand_out_every_change_once_and_the_slot_moves_only_on_commit(
    postgres_db: PostgresDatabase,
) -> None:
    postgres_db.execute("CREATE TABLE t (id int PRIMARY KEY, v text)")
    config = {
        "database.hostname": postgres_db.host,
        "database.port": str(postgres_db.port),
        "database.user": postgres_db.user,
        "database.password": postgres_db.password,
        "database.dbname": postgres_db.dbname,
        "topic.prefix": "reads",
        "slot.name": f"cdc_{postgres_db.dbname}",
        "snapshot.mode": "no_data",
        "max.batch.size": "4",
    }
    task = PostgresCdcSourceTask()
    task.initialize(SourceTaskContext(config, InMemoryOffsetStorageReader()))
    task.start(config)
    try:
        start = confirmed(postgres_db, config["slot.name"])
        with postgres_db.connect() as connection:
            for first in range(0, 60, 3):  # 20 transactions of 3 changes
                connection.execute(
                    "INSERT INTO t SELECT g, 'x' FROM generate_series(%s::int, %s::int) g",
                    (first, first + 2),
                )
        polled = []
        while batch := task.poll():
            assert len(batch) <= 4  # max.batch.size, transactions split where it falls
            polled.extend(batch)
        assert [r.key.get("id") for r in polled] == list(range(60))
        assert confirmed(postgres_db, config["slot.name"]) == start  # nothing committed yet
        for record in polled[:30]:
            task.commit_record(record, None)
        task.commit()
        assert confirmed(postgres_db, config["slot.name"]) == polled[29].source_offset["lsn"]
        assert task.poll() == []  # what was read stays read: no second copy
        with postgres_db.connect() as connection:
            connection.execute("INSERT INTO t VALUES (60, 'y'), (61, 'y')")
            (end,) = connection.execute("SELECT pg_current_wal_lsn()::text").fetchone()
        assert [r.key.get("id") for r in task.poll()] == [60, 61]
    finally:
        task.stop()
    assert parse_lsn(end) > start
