"""PostgresSinkTask driven through the SinkTask API against the real PostgreSQL server: insert,
upsert, update and delete modes end row for row equal to the records; a retried put, a second
task instance (zombie) and two concurrent instances write once; `open` continues from the offsets
table; auto.create/auto.evolve; bad records fail naming the record, leaving nothing written."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from spark_eos_connect.api.data import Schema, SchemaBuilder, Struct
from spark_eos_connect.api.sink import SinkRecord, SinkTaskContext, TopicPartition
from spark_eos_connect.connectors.postgres.sink.connector import (
    PostgresSinkConnector,
    PostgresSinkTask,
)
from spark_eos_connect.connectors.postgres.sink.schema import RecordError
from spark_eos_connect.testing.postgres import PostgresDatabase

pytestmark = pytest.mark.integration

TOPIC = "orders"
TP0, TP1 = TopicPartition(TOPIC, 0), TopicPartition(TOPIC, 1)
KEY = SchemaBuilder.struct().field("id", Schema.INT64).build()
VALUE = (
    SchemaBuilder.struct()
    .field("id", Schema.INT64)
    .field("item", Schema.STRING)
    .field("qty", Schema.OPTIONAL_INT32)
    .build()
)
VALUE_V2 = (
    SchemaBuilder.struct()
    .field("id", Schema.INT64)
    .field("item", Schema.STRING)
    .field("qty", Schema.OPTIONAL_INT32)
    .field("note", Schema.OPTIONAL_STRING)
    .build()
)


def options(db: PostgresDatabase, **extra: str) -> dict[str, str]:
    return {
        "name": "pg-sink",
        "connection.url": f"jdbc:postgresql://{db.host}:{db.port}/{db.dbname}",
        "connection.user": db.user,
        "connection.password": db.password,
        "auto.create": "true",
        **extra,
    }


def order(
    offset: int,
    id_: int,
    item: str | None = "x",
    partition: int = 0,
    schema: Schema = VALUE,
    **fields: Any,
) -> SinkRecord:
    """A record keyed by `id_` (a struct key); `item=None` makes a tombstone."""
    value = None if item is None else Struct(schema, {"id": id_, "item": item, **fields})
    key = Struct(KEY, {"id": id_})
    return SinkRecord(
        TOPIC, partition, offset, key, value, None, (), KEY, None if value is None else schema
    )


@pytest.fixture
def start_task() -> Any:
    tasks: list[PostgresSinkTask] = []

    def start(props: dict[str, str], partitions: Sequence[TopicPartition] = (TP0, TP1)) -> Any:
        task = PostgresSinkTask()
        context = SinkTaskContext(props, partitions)
        task.initialize(context)
        task.start(dict(props))
        task.open(list(partitions))
        tasks.append(task)
        return task

    yield start
    for task in tasks:
        task.stop()


def rows(db: PostgresDatabase, sql: str) -> list[tuple[Any, ...]]:
    with db.connect() as connection:
        return list(connection.execute(sql).fetchall())


def stored(db: PostgresDatabase) -> dict[tuple[str, int], int]:
    found = rows(db, 'SELECT topic, "partition", next_offset FROM __eosconnect_sink_offsets')
    return {(t, p): o for t, p, o in found}


def test_insert_mode_writes_every_record_once_with_its_offsets(
    postgres_db: PostgresDatabase, start_task: Callable[..., Any]
) -> None:
    task = start_task(options(postgres_db, **{"pk.mode": "kafka"}))
    records = [order(i, i, f"item-{i}", partition=i % 2, qty=i) for i in range(40)]
    task.put(records[:25])
    task.put(records[25:])

    got = rows(
        postgres_db,
        "SELECT __connect_partition, __connect_offset, id, item, qty FROM orders ORDER BY 2",
    )
    assert got == [(i % 2, i, i, f"item-{i}", i) for i in range(40)]
    assert stored(postgres_db) == {(TOPIC, 0): 39, (TOPIC, 1): 40}
    committed = task.pre_commit({TP0: 40, TP1: 40})
    # partition 0's last record is 38: the table holds 39, raised to what was consumed
    assert committed == {TP0: 40, TP1: 40}
    assert stored(postgres_db) == {(TOPIC, 0): 40, (TOPIC, 1): 40}


def final_state(records: Sequence[SinkRecord]) -> dict[int, tuple[str, int | None]]:
    state: dict[int, tuple[str, int | None]] = {}
    for record in records:
        key = record.key.get("id")
        if record.value is None:
            state.pop(key, None)
        else:
            state[key] = (record.value.get("item"), record.value.get("qty"))
    return state


def test_upsert_with_deletes_ends_equal_to_the_last_record_per_key(
    postgres_db: PostgresDatabase, start_task: Callable[..., Any]
) -> None:
    props = options(
        postgres_db,
        **{
            "insert.mode": "upsert",
            "pk.mode": "record_key",
            "delete.enabled": "true",
            "fields.whitelist": "item,qty",
            "batch.size": "7",
        },
    )
    task = start_task(props)
    records = []
    for offset in range(300):
        id_ = (offset * 7) % 23
        if offset % 11 == 5:
            records.append(order(offset, id_, None))
        else:
            records.append(order(offset, id_, f"v{offset}", qty=offset))
    for start in range(0, 300, 64):
        task.put(records[start : start + 64])

    table = {i: (item, qty) for i, item, qty in rows(postgres_db, "SELECT * FROM orders")}
    assert table == final_state(records)
    assert stored(postgres_db) == {(TOPIC, 0): 300}


def test_update_mode_changes_existing_rows_only(
    postgres_db: PostgresDatabase, start_task: Callable[..., Any]
) -> None:
    postgres_db.execute(
        "CREATE TABLE orders (id BIGINT PRIMARY KEY, item TEXT, qty INTEGER)",
        "INSERT INTO orders VALUES (1, 'old', 1), (2, 'old', 2)",
    )
    props = options(postgres_db, **{"insert.mode": "update", "pk.mode": "record_value"})
    task = start_task({**props, "pk.fields": "id"})
    task.put([order(0, 1, "new", qty=10), order(1, 3, "none", qty=30), order(2, 1, "newer")])

    assert rows(postgres_db, "SELECT * FROM orders ORDER BY id") == [
        (1, "newer", None),
        (2, "old", 2),
    ]


def test_a_retried_put_and_a_second_task_write_nothing_twice_and_open_rewinds(
    postgres_db: PostgresDatabase, start_task: Callable[..., Any]
) -> None:
    props = options(postgres_db)
    first = start_task(props)
    records = [order(i, i) for i in range(10)]
    first.put(records[:6])
    first.put(records[:6])  # the same records again (a retried batch)

    zombie = start_task(props)
    # a new task is asked to continue where the table is
    assert zombie.context.take_offset_resets() == {TP0: 6}
    zombie.put(records)  # an older attempt delivering everything: only 6..9 are new
    first.put(records[4:])

    assert rows(postgres_db, "SELECT id FROM orders ORDER BY id") == [(i,) for i in range(10)]
    assert stored(postgres_db) == {(TOPIC, 0): 10}


@pytest.mark.parametrize("table_exists", [True, False])
def test_two_concurrent_task_instances_write_each_record_once(
    postgres_db: PostgresDatabase, start_task: Callable[..., Any], table_exists: bool
) -> None:
    props = options(postgres_db, **{"pk.mode": "none"})
    if table_exists:
        start_task(props).put([order(0, 0)])
    else:  # both create it (auto.create), one after the other under an advisory lock
        props["offsets.table.name"] = "eos.sink_offsets"
        postgres_db.execute("CREATE SCHEMA eos")
    tasks = [start_task(props), start_task(props)]
    first = 1 if table_exists else 0
    records = [order(i, i, partition=i % 2) for i in range(first, 2001)]
    errors: list[BaseException] = []

    def run(task: Any) -> None:
        try:
            for start in range(0, len(records), 100):
                task.put(records[start : start + 100])
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=run, args=(t,)) for t in tasks]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)

    assert not errors
    ids = [i for (i,) in rows(postgres_db, "SELECT id FROM orders ORDER BY id")]
    assert ids == list(range(2001))


def test_auto_evolve_adds_a_nullable_column(
    postgres_db: PostgresDatabase, start_task: Callable[..., Any]
) -> None:
    task = start_task(options(postgres_db, **{"auto.evolve": "true", "pk.mode": "kafka"}))
    task.put([order(0, 1)])
    task.put([order(1, 2, schema=VALUE_V2, note="hello")])

    got = rows(postgres_db, "SELECT id, note FROM orders ORDER BY id")
    assert got == [(1, None), (2, "hello")]
    nullable = rows(
        postgres_db,
        "SELECT is_nullable FROM information_schema.columns "
        "WHERE table_name = 'orders' AND column_name = 'note'",
    )
    assert nullable == [("YES",)]


def test_without_auto_evolve_a_new_field_fails_naming_the_record_and_writes_nothing(
    postgres_db: PostgresDatabase, start_task: Callable[..., Any]
) -> None:
    task = start_task(options(postgres_db))
    task.put([order(0, 1)])
    with pytest.raises(RecordError, match=r"orders-0@2: table orders has no column note"):
        task.put([order(1, 2), order(2, 3, schema=VALUE_V2, note="n")])

    assert rows(postgres_db, "SELECT id FROM orders") == [(1,)]
    assert stored(postgres_db) == {(TOPIC, 0): 1}


def test_a_type_mismatch_fails_naming_the_record_and_writes_nothing(
    postgres_db: PostgresDatabase, start_task: Callable[..., Any]
) -> None:
    postgres_db.execute("CREATE TABLE orders (id BIGINT, item INTEGER, qty INTEGER)")
    task = start_task(options(postgres_db))
    with pytest.raises(RecordError, match=r"orders-0@0: field 'item' is STRING .* integer"):
        task.put([order(0, 1)])
    assert stored(postgres_db) == {}


def test_a_value_the_database_refuses_names_its_record_and_the_put_rolls_back(
    postgres_db: PostgresDatabase, start_task: Callable[..., Any]
) -> None:
    postgres_db.execute("CREATE TABLE orders (id BIGINT, item VARCHAR(3), qty INTEGER)")
    task = start_task(options(postgres_db))
    with pytest.raises(RecordError, match=r"orders-0@12 to table orders: .*too long"):
        task.put([order(10, 1, "ok"), order(11, 2, "ok"), order(12, 3, "far too long")])
    assert rows(postgres_db, "SELECT count(*) FROM orders") == [(0,)]
    assert stored(postgres_db) == {}
    task.put([order(10, 1, "ok")])  # the task goes on after a failed put
    assert rows(postgres_db, "SELECT id FROM orders") == [(1,)]


def test_a_missing_key_and_a_missing_schema_are_named(
    postgres_db: PostgresDatabase, start_task: Callable[..., Any]
) -> None:
    task = start_task(options(postgres_db, **{"pk.mode": "record_key", "insert.mode": "upsert"}))
    no_key = SinkRecord(
        TOPIC, 0, 4, None, Struct(VALUE, {"id": 1, "item": "a"}), None, (), KEY, VALUE
    )
    with pytest.raises(RecordError, match="orders-0@4: its key is null"):
        task.put([no_key])
    no_schema = SinkRecord(TOPIC, 1, 9, Struct(KEY, {"id": 1}), {"id": 1}, None, (), KEY, None)
    with pytest.raises(RecordError, match="orders-1@9: the value has no schema"):
        task.put([no_schema])
    assert stored(postgres_db) == {}


def test_altered_offsets_reach_the_offsets_table(postgres_db: PostgresDatabase) -> None:
    connector = PostgresSinkConnector()
    props = options(postgres_db)
    assert connector.alter_offsets(props, {TP0: 5, TP1: 7}) is True
    assert stored(postgres_db) == {(TOPIC, 0): 5, (TOPIC, 1): 7}
    connector.alter_offsets(props, {TP0: 2, TP1: None})
    assert stored(postgres_db) == {(TOPIC, 0): 2}


def test_a_wrong_password_fails_start_without_showing_it(postgres_db: PostgresDatabase) -> None:
    task = PostgresSinkTask()
    props = {**options(postgres_db), "connection.password": "wrong-secret"}
    task.initialize(SinkTaskContext(props))
    with pytest.raises(Exception, match="cannot connect") as caught:
        task.start(props)
    assert "wrong-secret" not in str(caught.value)
