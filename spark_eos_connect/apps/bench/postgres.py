"""Rows -> PostgreSQL: PostgresSink's task against a plain COPY of the same rows (the limit) and
against an at-least-once upsert (Confluent's JDBC sink's shape: executemany of INSERT ... ON
CONFLICT DO UPDATE, one transaction per put), on a throwaway PostgreSQL cluster, no Spark.

The `records` rows (`id` BIGINT, `item` TEXT of `value_size` characters, `qty` INTEGER) are made
once as Connect records (struct key and value) and rows. The sink modes call `put` with chunks of
`PUT_RECORDS` (the runtime's default `consumer.override.max.poll.records`), each one transaction
with its offsets, then `pre_commit`; the upsert peer writes the same chunks; the limit COPYs
`LIMIT_BATCH` rows per transaction. Each mode writes a fresh table, counted afterwards. Both sink
modes are compared with the at-least-once upsert (`config.PEERS`), and with the limit.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Final

from spark_eos_connect.api.data import Schema, SchemaBuilder, Struct
from spark_eos_connect.api.sink import SinkRecord, SinkTaskContext, TopicPartition
from spark_eos_connect.apps.bench.config import (
    LIMIT,
    PG_ALOS_UPSERT,
    PG_SINK_INSERT,
    PG_SINK_UPSERT,
    BenchConfig,
)
from spark_eos_connect.apps.bench.results import ModeResult, Verification

__all__ = ["PUT_RECORDS", "run_postgres"]

PUT_RECORDS: Final = 500
LIMIT_BATCH: Final = 10_000
TOPIC: Final = "bench"

KEY = SchemaBuilder.struct().field("id", Schema.INT64).build()
VALUE = (
    SchemaBuilder.struct()
    .field("id", Schema.INT64)
    .field("item", Schema.STRING)
    .field("qty", Schema.INT32)
    .build()
)
TABLE_SQL: Final = "CREATE TABLE {} (id BIGINT PRIMARY KEY, item TEXT NOT NULL, qty INTEGER)"


def make_records(count: int, value_size: int) -> list[SinkRecord]:
    """`count` records of one partition, offsets 0.., ids 0.."""
    item = "x" * value_size
    return [
        SinkRecord(
            TOPIC,
            0,
            n,
            Struct(KEY, {"id": n}),
            Struct(VALUE, {"id": n, "item": item, "qty": n % 1000}),
            None,
            (),
            KEY,
            VALUE,
        )
        for n in range(count)
    ]


def _chunks(items: list[Any], size: int) -> list[list[Any]]:
    return [items[i : i + size] for i in range(0, len(items), size)]


def _timed(work: str, mode: str, records: int, body: Callable[[], None]) -> ModeResult:
    started = time.perf_counter()
    body()
    seconds = time.perf_counter() - started
    return ModeResult(work, mode, records, seconds, timing="first write to last commit")


def copy_limit(db: Any, table: str, rows: list[tuple[Any, ...]]) -> None:
    """COPY the rows, `LIMIT_BATCH` per transaction."""
    with db.connect() as connection:
        for chunk in _chunks(rows, LIMIT_BATCH):
            with (
                connection.transaction(),
                connection.cursor() as cursor,
                cursor.copy(f"COPY {table} (id, item, qty) FROM STDIN") as copy,
            ):
                for row in chunk:
                    copy.write_row(row)


def alos_upsert(db: Any, table: str, rows: list[tuple[Any, ...]]) -> None:
    """executemany upserts, one transaction per `PUT_RECORDS` rows."""
    sql = (
        f"INSERT INTO {table} (id, item, qty) VALUES (%s, %s, %s) "
        "ON CONFLICT (id) DO UPDATE SET item = EXCLUDED.item, qty = EXCLUDED.qty"
    )
    with db.connect() as connection:
        for chunk in _chunks(rows, PUT_RECORDS):
            with connection.transaction(), connection.cursor() as cursor:
                cursor.executemany(sql, chunk)


def sink_props(db: Any, table: str, mode: str) -> dict[str, str]:
    """PostgresSink's options for `table`."""
    props = {
        "name": f"bench-{table}",
        "connection.url": f"postgresql://{db.host}:{db.port}/{db.dbname}",
        "connection.user": db.user,
        "connection.password": db.password,
        "table.name.format": table,
        "insert.mode": mode,
    }
    if mode == "upsert":
        props["pk.mode"] = "record_key"
    return props


def run_sink(db: Any, table: str, mode: str, records: list[SinkRecord]) -> None:
    """The task's lifecycle over the records, `PUT_RECORDS` per put."""
    from spark_eos_connect.connectors.postgres.sink.connector import PostgresSinkTask

    props = sink_props(db, table, mode)
    task = PostgresSinkTask()
    task.initialize(SinkTaskContext(props, [TopicPartition(TOPIC, 0)]))
    task.start(props)
    try:
        task.open([TopicPartition(TOPIC, 0)])
        for chunk in _chunks(records, PUT_RECORDS):
            task.put(chunk)
        task.pre_commit({TopicPartition(TOPIC, 0): len(records)})
    finally:
        task.stop()


def verify(db: Any, work: str, mode: str, table: str, expected: int) -> Verification:
    """Rows and distinct ids of `table`."""
    with db.connect() as connection:
        found, distinct = connection.execute(
            f"SELECT count(*), count(DISTINCT id) FROM {table}"
        ).fetchone()
    return Verification(work, mode, expected, found, distinct, where=f"table {table}")


def run_postgres(
    config: BenchConfig, work: str, log: Callable[[str], None]
) -> tuple[list[ModeResult], list[Verification]]:
    """Every mode on a throwaway cluster, each into a fresh table."""
    from spark_eos_connect.testing.postgres import PostgresCluster

    records = make_records(config.records, config.value_size)
    rows = [(r.value.get("id"), r.value.get("item"), r.value.get("qty")) for r in records]
    bodies: dict[str, Callable[[Any, str], None]] = {
        LIMIT: lambda db, table: copy_limit(db, table, rows),
        PG_ALOS_UPSERT: lambda db, table: alos_upsert(db, table, rows),
        PG_SINK_INSERT: lambda db, table: run_sink(db, table, "insert", records),
        PG_SINK_UPSERT: lambda db, table: run_sink(db, table, "upsert", records),
    }
    results: list[ModeResult] = []
    verifications: list[Verification] = []
    with PostgresCluster() as cluster:
        log(f"  PostgreSQL at port {cluster.port}")
        db = cluster.create_database("bench")
        for number, (mode, body) in enumerate(bodies.items()):
            table = f"rows_{number}"
            db.execute(TABLE_SQL.format(table))
            results.append(
                _timed(work, mode, len(records), lambda: body(db, table))  # noqa: B023
            )
            verifications.append(verify(db, work, mode, table, len(records)))
    return results, verifications
