"""PostgresCdcSource against what real databases do (issue 45), a task on a real PostgreSQL 15
each time: schema changes while streaming (and a restart with changes of both shapes pending),
partitioned tables, tables created later, generated columns, TOASTed values, `char(n)`, keyless
tables, exclude lists and the slot kept by `snapshot.mode=no_data`. Each behaviour either
works as Debezium's or fails naming what it could not do; none loses a change silently."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from spark_eos_connect.api.source import (
    InMemoryOffsetStorageReader,
    SourceRecord,
    SourceTaskContext,
    TransactionContext,
)
from spark_eos_connect.connectors.postgres.cdc.envelope import UNAVAILABLE
from spark_eos_connect.connectors.postgres.cdc.task import PostgresCdcSourceTask
from spark_eos_connect.errors import DataError
from spark_eos_connect.testing.postgres import PostgresDatabase

pytestmark = pytest.mark.integration


def props(database: PostgresDatabase, **extra: str) -> dict[str, str]:
    return {
        "database.hostname": database.host,
        "database.port": str(database.port),
        "database.user": database.user,
        "database.password": database.password,
        "database.dbname": database.dbname,
        "topic.prefix": "shop",
        "slot.name": f"cdc_{database.dbname}",
        "publication.name": f"pub_{database.dbname}",
        **extra,
    }


class Runner:
    """Tasks of one connector started one after the other on the same committed offsets."""

    def __init__(self, config: dict[str, str]) -> None:
        self.config = config
        self.offsets = InMemoryOffsetStorageReader()
        self.task: PostgresCdcSourceTask | None = None
        self.transactions = TransactionContext()

    def start(self) -> PostgresCdcSourceTask:
        self.stop()
        task = PostgresCdcSourceTask()
        task.initialize(SourceTaskContext(self.config, self.offsets, self.transactions))
        task.start(self.config)
        self.task = task
        return task

    def drain(self, commit: bool = True) -> list[SourceRecord]:
        """Poll until two polls in a row return nothing (the end of an empty snapshot gives
        one); with `commit`, every record is committed as Kafka would (commit_record, the
        offset stored, then commit)."""
        assert self.task is not None
        polled: list[SourceRecord] = []
        empty = 0
        while empty < 2:
            batch = self.task.poll() or []
            polled.extend(batch)
            empty = 0 if batch else empty + 1
        if commit and polled:
            for record in polled:
                self.task.commit_record(record, None)
            self.offsets.set(polled[-1].source_partition, polled[-1].source_offset)
            self.task.commit()
        return polled

    def stop(self) -> None:
        if self.task is not None:
            self.task.stop()
            self.task = None


@pytest.fixture
def runner(postgres_db: PostgresDatabase) -> Iterator[Any]:
    made: list[Runner] = []

    def make(**extra: str) -> Runner:
        made.append(Runner(props(postgres_db, **extra)))
        return made[-1]

    yield make
    for each in made:
        each.stop()


def after(record: SourceRecord) -> dict[str, Any]:
    assert record.value is not None
    row = record.value.get("after")
    return {name: value for name, value in row} if row is not None else {}


def before(record: SourceRecord) -> dict[str, Any]:
    assert record.value is not None
    row = record.value.get("before")
    return {name: value for name, value in row} if row is not None else {}


def fields(record: SourceRecord) -> list[str]:
    assert record.value_schema is not None
    row = record.value_schema.field("after").schema
    return [field.name for field in row.fields]


def op(record: SourceRecord) -> str | None:
    return None if record.value is None else record.value.get("op")


def test_add_drop_and_retype_columns_while_streaming(
    postgres_db: PostgresDatabase, runner: Any
) -> None:
    postgres_db.execute("CREATE TABLE t (id int PRIMARY KEY, a text)")
    source = runner(**{"snapshot.mode": "no_data"})
    source.start()
    postgres_db.execute(
        "INSERT INTO t VALUES (1, 'one')",
        "ALTER TABLE t ADD COLUMN b int",
        "INSERT INTO t VALUES (2, 'two', 22)",
        "ALTER TABLE t DROP COLUMN a",
        "INSERT INTO t VALUES (3, 33)",
        "ALTER TABLE t ALTER COLUMN b TYPE bigint",
        "UPDATE t SET b = 9000000000 WHERE id = 3",
    )
    records = source.drain()
    assert [fields(r) for r in records] == [["id", "a"], ["id", "a", "b"], ["id", "b"], ["id", "b"]]
    assert [after(r) for r in records] == [
        {"id": 1, "a": "one"},
        {"id": 2, "a": "two", "b": 22},
        {"id": 3, "b": 33},
        {"id": 3, "b": 9000000000},
    ]
    assert records[3].value_schema is not None
    assert records[3].value_schema.field("after").schema.field("b").schema.type.name == "INT64"
    assert records[2].value_schema.field("after").schema.field("b").schema.type.name == "INT32"


def test_a_restart_with_changes_of_both_shapes_pending_resumes(
    postgres_db: PostgresDatabase, runner: Any
) -> None:
    postgres_db.execute("CREATE TABLE t (id int PRIMARY KEY, a text NOT NULL)")
    source = runner(**{"snapshot.mode": "no_data"})
    source.start()
    postgres_db.execute("INSERT INTO t VALUES (1, 'one')")
    assert [after(r) for r in source.drain()] == [{"id": 1, "a": "one"}]
    postgres_db.execute(
        "INSERT INTO t VALUES (2, 'two')",
        "ALTER TABLE t DROP COLUMN a, ADD COLUMN c numeric(5,1)",
        "INSERT INTO t VALUES (3, 3.5)",
    )
    source.stop()  # nothing of the last two transactions committed
    source.start()
    records = source.drain()
    assert [(fields(r), after(r)["id"]) for r in records] == [(["id", "a"], 2), (["id", "c"], 3)]
    assert str(after(records[1])["c"]) == "3.5"
    # the old shape's column `a` is gone from the catalog: optional now, as Debezium has it
    schema = records[0].value_schema
    assert schema is not None and schema.field("after").schema.field("a").schema.optional


@pytest.mark.parametrize("via_root", [True, False])
def test_a_partitioned_table_is_snapshotted_and_streamed(
    postgres_db: PostgresDatabase, runner: Any, via_root: bool
) -> None:
    postgres_db.execute(
        "CREATE TABLE events (id int, day date, note text, PRIMARY KEY (id, day)) "
        "PARTITION BY RANGE (day)",
        "CREATE TABLE events_a PARTITION OF events FOR VALUES FROM ('2024-01-01') TO "
        "('2024-07-01')",
        "CREATE TABLE events_b PARTITION OF events FOR VALUES FROM ('2024-07-01') TO "
        "('2025-01-01')",
        "INSERT INTO events VALUES (1, '2024-02-01', 'snap'), (2, '2024-08-01', 'snap')",
    )
    source = runner(**{"publish.via.partition.root": str(via_root).lower()})
    source.start()
    snapshot = source.drain()
    postgres_db.execute(
        "INSERT INTO events VALUES (3, '2024-03-01', 'new'), (4, '2024-09-01', 'new')",
        "UPDATE events SET note = 'changed' WHERE id = 1",
        "DELETE FROM events WHERE id = 2",
        "CREATE TABLE events_c PARTITION OF events FOR VALUES FROM ('2025-01-01') TO "
        "('2026-01-01')",
        "INSERT INTO events VALUES (5, '2025-02-01', 'later partition')",
    )
    streamed = [r for r in source.drain() if r.value is not None]
    if via_root:
        assert {r.topic for r in snapshot + streamed} == {"shop.public.events"}
    else:
        assert {r.topic for r in snapshot} == {"shop.public.events_a", "shop.public.events_b"}
        assert [r.topic for r in streamed] == [
            "shop.public.events_a",
            "shop.public.events_b",
            "shop.public.events_a",
            "shop.public.events_b",
            "shop.public.events_c",
        ]
    assert sorted(after(r)["id"] for r in snapshot) == [1, 2]
    assert [(op(r), (after(r) or before(r))["id"]) for r in streamed] == [
        ("c", 3),
        ("c", 4),
        ("u", 1),
        ("d", 2),
        ("c", 5),
    ]


def test_a_table_created_later_is_captured_from_its_first_change_also_after_a_restart(
    postgres_db: PostgresDatabase, runner: Any
) -> None:
    postgres_db.execute("CREATE TABLE orders (id int PRIMARY KEY)")
    source = runner(**{"table.include.list": r"public\.(orders|refunds.*)"})
    source.start()
    source.drain()
    postgres_db.execute(
        "CREATE TABLE refunds (id int PRIMARY KEY, amount int)",
        "INSERT INTO refunds VALUES (1, 10)",
        "CREATE TABLE ignored (id int PRIMARY KEY)",
        "INSERT INTO ignored VALUES (1)",
    )
    records = source.drain()
    assert [(r.topic, after(r)) for r in records] == [
        ("shop.public.refunds", {"id": 1, "amount": 10})
    ]
    source.start()
    postgres_db.execute(
        "CREATE TABLE refunds_2 (id int PRIMARY KEY)", "INSERT INTO refunds_2 VALUES (7)"
    )
    assert [(r.topic, after(r)) for r in source.drain()] == [("shop.public.refunds_2", {"id": 7})]


@pytest.mark.parametrize("mode", ["filtered", "all_tables"])
def test_a_table_added_to_the_include_list_is_snapshotted_then_streamed_at_the_next_start(
    postgres_db: PostgresDatabase, runner: Any, mode: str
) -> None:
    postgres_db.execute(
        "CREATE TABLE a (id int PRIMARY KEY)",
        "CREATE TABLE b (id int PRIMARY KEY, n int)",
        "INSERT INTO a VALUES (1)",
        "INSERT INTO b VALUES (1, 0), (2, 0)",
    )
    first = runner(**{"publication.autocreate.mode": mode, "table.include.list": r"public\.a"})
    first.start()
    assert [r.topic for r in first.drain()] == ["shop.public.a"]
    postgres_db.execute("UPDATE b SET n = 1 WHERE id = 1", "INSERT INTO a VALUES (2)")
    assert [r.topic for r in first.drain()] == ["shop.public.a"]
    postgres_db.execute("UPDATE b SET n = 2 WHERE id = 2")  # in the slot, b not captured yet
    first.stop()
    widened = runner(**{**first.config, "table.include.list": r"public\.(a|b)"})
    widened.offsets = first.offsets
    widened.start()
    snapshot = widened.drain()
    assert [(r.topic, op(r), after(r)) for r in snapshot] == [
        ("shop.public.b", "r", {"id": 1, "n": 1}),
        ("shop.public.b", "r", {"id": 2, "n": 2}),
    ]
    postgres_db.execute("INSERT INTO a VALUES (3)", "UPDATE b SET n = 3 WHERE id = 2")
    assert [(r.topic, op(r)) for r in widened.drain()] == [
        ("shop.public.a", "c"),
        ("shop.public.b", "u"),
    ]
    widened.start()  # b is known now: no second snapshot
    postgres_db.execute("DELETE FROM b WHERE id = 1")
    assert [(r.topic, op(r)) for r in widened.drain()] == [
        ("shop.public.b", "d"),
        ("shop.public.b", None),
    ]


def test_stored_generated_columns_are_left_out_of_snapshot_and_stream(
    postgres_db: PostgresDatabase, runner: Any
) -> None:
    postgres_db.execute(
        "CREATE TABLE t (id int PRIMARY KEY, price int, doubled int GENERATED ALWAYS AS "
        "(price * 2) STORED, note text)",
        "INSERT INTO t (id, price, note) VALUES (1, 5, 'snap')",
    )
    source = runner()
    source.start()
    snapshot = source.drain()
    postgres_db.execute("INSERT INTO t (id, price, note) VALUES (2, 6, 'stream')")
    streamed = source.drain()
    assert [after(r) for r in snapshot + streamed] == [
        {"id": 1, "price": 5, "note": "snap"},
        {"id": 2, "price": 6, "note": "stream"},
    ]


def test_char_n_is_padded_in_snapshot_and_stream_alike(
    postgres_db: PostgresDatabase, runner: Any
) -> None:
    postgres_db.execute(
        "CREATE TABLE t (code char(4) PRIMARY KEY, addr inet)",
        "INSERT INTO t VALUES ('ab', '10.0.0.1')",
    )
    source = runner()
    source.start()
    snapshot = source.drain()
    postgres_db.execute("INSERT INTO t VALUES ('cd', '10.0.0.2')")
    streamed = source.drain()
    assert [after(r) for r in snapshot + streamed] == [
        {"code": "ab  ", "addr": "10.0.0.1"},
        {"code": "cd  ", "addr": "10.0.0.2"},
    ]
    assert [r.key.get("code") for r in snapshot + streamed if r.key is not None] == [
        "ab  ",
        "cd  ",
    ]


BIG = "SELECT string_agg(md5(g::text), '') FROM generate_series(1, 400) g"
"""12,800 characters of hex: stored out of line (TOASTed), not compressed away."""


def test_an_unchanged_toasted_bytea_takes_debeziums_placeholder_not_null(
    postgres_db: PostgresDatabase, runner: Any
) -> None:
    postgres_db.execute(
        "CREATE TABLE t (id int PRIMARY KEY, raw bytea, body text, n int)",
        "ALTER TABLE t ALTER COLUMN raw SET STORAGE EXTERNAL, "
        "ALTER COLUMN body SET STORAGE EXTERNAL",
        f"INSERT INTO t VALUES (1, convert_to(({BIG}), 'UTF8'), ({BIG}), 0)",
    )
    source = runner()
    source.start()
    source.drain()
    postgres_db.execute("UPDATE t SET n = 1 WHERE id = 1")
    (update,) = source.drain()
    assert after(update)["raw"] == UNAVAILABLE.encode()
    assert after(update)["body"] == UNAVAILABLE
    assert after(update)["n"] == 1


def test_an_unchanged_toasted_value_under_replica_identity_full_comes_from_the_old_row(
    postgres_db: PostgresDatabase, runner: Any
) -> None:
    postgres_db.execute(
        "CREATE TABLE t (id int PRIMARY KEY, body text, n int)",
        "ALTER TABLE t ALTER COLUMN body SET STORAGE EXTERNAL, REPLICA IDENTITY FULL",
        f"INSERT INTO t VALUES (1, ({BIG}), 0)",
    )
    source = runner(**{"snapshot.mode": "no_data"})
    source.start()
    postgres_db.execute("UPDATE t SET n = 1 WHERE id = 1")
    (update,) = source.drain()
    assert len(after(update)["body"]) == 12_800
    assert after(update)["body"] == before(update)["body"]


def test_a_keyless_table_is_captured_with_null_keys_or_the_key_columns_given(
    postgres_db: PostgresDatabase, runner: Any
) -> None:
    postgres_db.execute(
        "CREATE TABLE logs (host text, line text)",
        "CREATE TABLE audit (who text, what text)",
        "ALTER TABLE logs REPLICA IDENTITY FULL",
        "INSERT INTO logs VALUES ('a', 'booted')",
        "INSERT INTO audit VALUES ('root', 'login')",
    )
    source = runner(**{"message.key.columns": r"public\.audit:who"})
    source.start()
    snapshot = source.drain()
    postgres_db.execute("INSERT INTO logs VALUES ('b', 'up')", "DELETE FROM logs WHERE host = 'a'")
    streamed = source.drain()
    keys = [(r.topic.rsplit(".", 1)[1], r.key, op(r)) for r in snapshot + streamed]
    audit_key = snapshot[0].key
    assert audit_key is not None and audit_key.get("who") == "root"
    assert keys[1:] == [
        ("logs", None, "r"),
        ("logs", None, "c"),
        ("logs", None, "d"),
        ("logs", None, None),
    ]
    assert before(streamed[1]) == {"host": "a", "line": "booted"}


def test_excluded_tables_and_columns_are_never_published(
    postgres_db: PostgresDatabase, runner: Any
) -> None:
    postgres_db.execute(
        "CREATE TABLE users (id int PRIMARY KEY, name text, password text)",
        "CREATE TABLE secrets (id int PRIMARY KEY)",
        "INSERT INTO users VALUES (1, 'ann', 'hunter2')",
        "INSERT INTO secrets VALUES (1)",
    )
    source = runner(
        **{"table.exclude.list": r"public\.secrets", "column.exclude.list": r".*\.password"}
    )
    source.start()
    snapshot = source.drain()
    postgres_db.execute(
        "INSERT INTO users VALUES (2, 'bob', 'swordfish')", "INSERT INTO secrets VALUES (2)"
    )
    records = snapshot + source.drain()
    assert [r.topic for r in records] == ["shop.public.users"] * 2
    assert [after(r) for r in records] == [{"id": 1, "name": "ann"}, {"id": 2, "name": "bob"}]
    assert not any("hunter2" in repr(r.value) or "swordfish" in repr(r.value) for r in records)


def test_no_data_keeps_its_slot_over_a_crash_before_the_first_commit(
    postgres_db: PostgresDatabase, runner: Any
) -> None:
    postgres_db.execute("CREATE TABLE t (id int PRIMARY KEY)")
    source = runner(**{"snapshot.mode": "no_data"})
    source.start()
    postgres_db.execute("INSERT INTO t VALUES (1)", "INSERT INTO t VALUES (2)")
    assert len(source.drain(commit=False)) == 2
    source.start()  # nothing committed: the slot must still hold both changes
    postgres_db.execute("INSERT INTO t VALUES (3)")
    assert [after(r)["id"] for r in source.drain()] == [1, 2, 3]


def test_skipped_operations_leave_those_changes_out(
    postgres_db: PostgresDatabase, runner: Any
) -> None:
    postgres_db.execute("CREATE TABLE t (id int PRIMARY KEY, n int)")
    source = runner(**{"snapshot.mode": "no_data", "skipped.operations": "u,d,t"})
    source.start()
    postgres_db.execute(
        "INSERT INTO t VALUES (1, 0)",
        "UPDATE t SET n = 1",
        "DELETE FROM t",
        "INSERT INTO t VALUES (2, 0)",
    )
    assert [(op(r), after(r)["id"]) for r in source.drain()] == [("c", 1), ("c", 2)]


def test_initial_only_emits_the_snapshot_and_never_streams(
    postgres_db: PostgresDatabase, runner: Any
) -> None:
    postgres_db.execute("CREATE TABLE t (id int PRIMARY KEY)", "INSERT INTO t VALUES (1)")
    source = runner(**{"snapshot.mode": "initial_only"})
    source.start()
    assert [op(r) for r in source.drain()] == ["r"]
    postgres_db.execute("INSERT INTO t VALUES (2)")
    assert source.drain() == []


def test_always_snapshots_again_at_each_start_then_streams_on_without_a_double(
    postgres_db: PostgresDatabase, runner: Any
) -> None:
    postgres_db.execute("CREATE TABLE t (id int PRIMARY KEY, n int)", "INSERT INTO t VALUES (1, 0)")
    source = runner(**{"snapshot.mode": "always"})
    source.start()
    assert [(op(r), after(r)["id"]) for r in source.drain()] == [("r", 1)]
    postgres_db.execute("INSERT INTO t VALUES (2, 0)")
    source.stop()  # the insert is in the slot, not in Kafka
    source.start()
    records = source.drain()
    # the new snapshot holds row 2; its insert, which that snapshot saw, is not emitted again
    assert [(op(r), after(r)["id"]) for r in records] == [("r", 1), ("r", 2)]
    postgres_db.execute("UPDATE t SET n = 5 WHERE id = 2")
    assert [(op(r), after(r)) for r in source.drain()] == [("u", {"id": 2, "n": 5})]


def test_when_needed_takes_a_new_snapshot_when_the_slot_is_gone(
    postgres_db: PostgresDatabase, runner: Any
) -> None:
    postgres_db.execute("CREATE TABLE t (id int PRIMARY KEY)", "INSERT INTO t VALUES (1)")
    source = runner(**{"snapshot.mode": "when_needed"})
    source.start()
    source.drain()
    source.stop()
    postgres_db.execute(f"SELECT pg_drop_replication_slot('cdc_{postgres_db.dbname}')")
    postgres_db.execute("INSERT INTO t VALUES (2)")
    source.start()
    assert [(op(r), after(r)["id"]) for r in source.drain()] == [("r", 1), ("r", 2)]


def test_a_transaction_larger_than_max_batch_size_comes_in_bounded_polls_and_resumes(
    postgres_db: PostgresDatabase, runner: Any
) -> None:
    """Polls hold at most `max.batch.size` records; only the transaction's last record says
    `complete` (the slot moves past it only then) and asks the runtime to end the Kafka
    transaction (`transaction.boundary=connector`: one Kafka transaction per database one);
    a restart after a part of it was committed emits the rest, once."""
    postgres_db.execute("CREATE TABLE t (id int PRIMARY KEY)")
    source = runner(**{"snapshot.mode": "no_data", "max.batch.size": "100"})
    task = source.start()
    postgres_db.execute("INSERT INTO t SELECT generate_series(1, 1050)")
    polls = [task.poll() for _ in range(4)]
    assert [len(batch) for batch in polls] == [100] * 4
    first = [record for batch in polls for record in batch]
    assert not any(r.source_offset["complete"] for r in first)
    assert not any(source.transactions.should_commit_on(r) for r in first)
    for record in first:
        task.commit_record(record, None)
    source.offsets.set(first[-1].source_partition, first[-1].source_offset)
    task.commit()
    again = source.start()  # the first 400 records are in Kafka, the rest not
    batches = []
    while batch := again.poll():
        batches.append(batch)
    assert [len(batch) for batch in batches] == [100] * 6 + [50]
    rest = [record for batch in batches for record in batch]
    ids = [after(r)["id"] for r in first + rest]
    assert ids == list(range(1, 1051))
    assert [r.source_offset["complete"] for r in rest].count(True) == 1
    assert rest[-1].source_offset["complete"] and source.transactions.should_commit_on(rest[-1])


def test_heartbeats_run_their_action_query_and_let_the_slot_pass_quiet_wal(
    postgres_db: PostgresDatabase, runner: Any
) -> None:
    postgres_db.execute(
        "CREATE TABLE t (id int PRIMARY KEY)",
        "CREATE TABLE beats (n int)",
        "CREATE TABLE other (id int PRIMARY KEY)",
    )
    source = runner(
        **{
            "snapshot.mode": "no_data",
            "table.include.list": r"public\.t",
            "publication.autocreate.mode": "filtered",
            "heartbeat.interval.ms": "1",
            "heartbeat.action.query": "INSERT INTO beats VALUES (1)",
        }
    )
    task = source.start()
    postgres_db.execute("INSERT INTO other SELECT generate_series(1, 100)")  # not captured
    with postgres_db.connect() as connection:
        (written,) = connection.execute("SELECT pg_current_wal_lsn()::text").fetchone()
    beat = task.poll()
    assert [(r.topic, r.key.get("serverName") if r.key else None) for r in beat] == [
        ("__debezium-heartbeat.shop", "shop")
    ]
    assert beat[0].value is not None and beat[0].value.get("ts_ms") > 0
    assert source.transactions.should_commit_on(beat[0])
    task.commit_record(beat[0], None)
    task.commit()
    with postgres_db.connect() as connection:
        (count,) = connection.execute("SELECT count(*) FROM beats").fetchone()
        (moved,) = connection.execute(
            "SELECT confirmed_flush_lsn >= %s::pg_lsn FROM pg_replication_slots "
            "WHERE slot_name = %s",
            (written, source.config["slot.name"]),
        ).fetchone()
    assert count == 1 and moved
    postgres_db.execute("INSERT INTO t VALUES (1)")
    assert [op(r) for r in task.poll()] == ["c"]  # changes still come first


def test_transaction_metadata_brackets_each_transaction_and_numbers_its_events(
    postgres_db: PostgresDatabase, runner: Any
) -> None:
    postgres_db.execute(
        "CREATE TABLE a (id int PRIMARY KEY)",
        "CREATE TABLE b (id int PRIMARY KEY)",
        "CREATE TABLE quiet (id int PRIMARY KEY)",
    )
    source = runner(
        **{
            "snapshot.mode": "no_data",
            "provide.transaction.metadata": "true",
            "table.exclude.list": r"public\.quiet",
        }
    )
    source.start()
    with postgres_db.connect() as connection:
        with connection.transaction():
            connection.execute("INSERT INTO a VALUES (1)")
            connection.execute("INSERT INTO b VALUES (1)")
            connection.execute("INSERT INTO a VALUES (2)")
            (xid,) = connection.execute("SELECT txid_current()::text").fetchone()
        connection.execute("INSERT INTO quiet VALUES (1)")  # no event: no BEGIN or END
    records = source.drain()
    assert [r.topic for r in records] == [
        "shop.transaction",
        "shop.public.a",
        "shop.public.b",
        "shop.public.a",
        "shop.transaction",
    ]
    begin, end = records[0].value, records[-1].value
    assert begin is not None and end is not None
    assert (begin.get("status"), begin.get("id"), begin.get("event_count")) == ("BEGIN", xid, None)
    assert (end.get("status"), end.get("id"), end.get("event_count")) == ("END", xid, 3)
    counts = {c.get("data_collection"): c.get("event_count") for c in end.get("data_collections")}
    assert counts == {"public.a": 2, "public.b": 1}
    assert records[0].key is not None and records[0].key.get("id") == xid
    blocks = [r.value.get("transaction") for r in records[1:-1] if r.value is not None]
    assert [
        (t.get("id"), t.get("total_order"), t.get("data_collection_order")) for t in blocks
    ] == [
        (xid, 1, 1),
        (xid, 2, 1),
        (xid, 3, 2),
    ]
    assert [r.source_offset["complete"] for r in records] == [False] * 4 + [True]


def test_a_value_that_cannot_be_represented_fails_naming_it_and_costs_no_change(
    postgres_db: PostgresDatabase, runner: Any
) -> None:
    postgres_db.execute("CREATE TABLE t (id int PRIMARY KEY, amount numeric)")
    source = runner(**{"snapshot.mode": "no_data"})
    task = source.start()
    postgres_db.execute("INSERT INTO t VALUES (1, 1.5)")
    with postgres_db.connect() as connection, connection.transaction():
        connection.execute("INSERT INTO t VALUES (2, 2)")
        connection.execute("INSERT INTO t VALUES (3, 'NaN')")  # no Decimal holds NaN
    with pytest.raises(DataError) as failure:
        while task.poll():
            pass
    message = str(failure.value)
    assert "table public.t" in message and "column amount" in message and "'NaN'" in message
    assert "commit LSN" in message and "decimal.handling.mode" in message
    source.stop()
    fixed = runner(**{**source.config, "decimal.handling.mode": "string"})
    fixed.offsets = source.offsets  # nothing was committed
    fixed.start()
    assert [(after(r)["id"], after(r)["amount"]) for r in fixed.drain()] == [
        (1, "1.5"),
        (2, "2"),
        (3, "NAN"),  # Debezium's name for it in string mode
    ]


def test_a_column_of_a_type_debezium_cannot_map_is_left_out_with_a_warning(
    postgres_db: PostgresDatabase, runner: Any, caplog: pytest.LogCaptureFixture
) -> None:
    postgres_db.execute(
        "CREATE TABLE shapes (id int PRIMARY KEY, ring circle, note text)",
        "INSERT INTO shapes VALUES (1, '<(0,0),1>', 'round')",
    )
    source = runner()
    with caplog.at_level("WARNING"):
        source.start()
    assert [after(r) for r in source.drain()] == [{"id": 1, "note": "round"}]
    assert any("public.shapes: columns ring are left out" in message for message in caplog.messages)
