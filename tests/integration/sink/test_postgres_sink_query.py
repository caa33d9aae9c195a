"""Kafka -> PostgreSQL through `writeStream.format("eosconnect")` with `connector.class=
PostgresSink`: the table ends equal to the records and the group holds the table's offsets; a
record PostgreSQL refuses goes to the dead letter queue under errors.tolerance=all while the
others are written once; and a driver SIGKILLed at three points of a micro-batch, then restarted
(the last time without its checkpoint), leaves each record in the table exactly once."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from spark_eos_connect.testing.postgres import PostgresDatabase

pytestmark = pytest.mark.integration

ID_SCHEMA = {
    "type": "struct",
    "name": "Order",
    "optional": False,
    "fields": [
        {"field": "id", "type": "int64", "optional": False},
        {"field": "item", "type": "string", "optional": False},
    ],
}
FAST_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


def order(n: int, item: str | None = None) -> bytes:
    """A JsonConverter record with its schema."""
    payload = {"id": n, "item": item if item is not None else f"item-{n}"}
    return json.dumps({"schema": ID_SCHEMA, "payload": payload}).encode()


def sink_options(db: PostgresDatabase, name: str, topic: str, bootstrap: str) -> dict[str, str]:
    return {
        "name": name,
        "connector.class": "PostgresSink",
        "topics": topic,
        "connection.url": f"jdbc:postgresql://{db.host}:{db.port}/{db.dbname}",
        "connection.user": db.user,
        "connection.password": db.password,
        "table.name.format": "orders",
        "pk.mode": "kafka",
        "auto.create": "true",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "kafka.bootstrap.servers": bootstrap,
    }


def sink_stream(spark: Any, options: dict[str, str]) -> Any:
    stream = spark.readStream.format("eosconnect").options(**options).load()
    return stream.writeStream.format("eosconnect").options(**options)


def table_rows(db: PostgresDatabase, sql: str) -> list[tuple[Any, ...]]:
    with db.connect() as connection:
        return list(connection.execute(sql).fetchall())


def table_offsets(db: PostgresDatabase) -> dict[tuple[str, int], int]:
    found = table_rows(db, 'SELECT topic, "partition", next_offset FROM __eosconnect_sink_offsets')
    return {(t, p): o for t, p, o in found}


def test_a_kafka_to_postgres_query_writes_each_record_once_and_commits_the_tables_offsets(
    spark: Any,
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    produce: Callable[..., None],
    group_offsets: Callable[[str], dict[tuple[str, int], int]],
    run_available_now: Callable[..., Any],
    unique_name: Callable[[str], str],
    postgres_db: PostgresDatabase,
    tmp_path: Path,
) -> None:
    topic = topic_factory("pgsink", partitions=2)
    produce(topic, [(n % 2, None, order(n)) for n in range(200)])
    produce(topic, [(0, None, order(-1))], abort=True)
    name = unique_name("pgsink")
    options = {**sink_options(postgres_db, name, topic, bootstrap_servers), "tasks.max": "2"}

    query = run_available_now(sink_stream(spark, options), tmp_path / "ck")
    assert query.exception() is None
    produce(topic, [(n % 2, None, order(n)) for n in range(200, 300)])
    query = run_available_now(sink_stream(spark, options), tmp_path / "ck")
    assert query.exception() is None

    got = table_rows(postgres_db, "SELECT id, item FROM orders ORDER BY id")
    assert got == [(n, f"item-{n}") for n in range(300)]
    assert group_offsets(name) == table_offsets(postgres_db)
    assert set(table_offsets(postgres_db)) == {(topic, 0), (topic, 1)}


def test_a_record_postgres_refuses_goes_to_the_dlq_and_the_others_are_written_once(
    spark: Any,
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    produce: Callable[..., None],
    read_committed: Callable[..., list[Any]],
    group_offsets: Callable[[str], dict[tuple[str, int], int]],
    run_available_now: Callable[..., Any],
    unique_name: Callable[[str], str],
    postgres_db: PostgresDatabase,
    tmp_path: Path,
) -> None:
    postgres_db.execute(
        "CREATE TABLE orders (__connect_topic TEXT, __connect_partition INT, "
        "__connect_offset BIGINT, id BIGINT, item VARCHAR(8), "
        "PRIMARY KEY (__connect_topic, __connect_partition, __connect_offset))"
    )
    topic, dlq = topic_factory("pgpoison"), unique_name("pgdlq")
    produce(topic, [(0, None, order(n, "far too long" if n == 3 else None)) for n in range(6)])
    name = unique_name("pgpoison")
    options = {
        **sink_options(postgres_db, name, topic, bootstrap_servers),
        "errors.tolerance": "all",
        "errors.deadletterqueue.topic.name": dlq,
        "errors.deadletterqueue.context.headers.enable": "true",
    }

    query = run_available_now(sink_stream(spark, options), tmp_path / "ck")

    assert query.exception() is None
    assert table_rows(postgres_db, "SELECT id FROM orders ORDER BY id") == [
        (n,) for n in (0, 1, 2, 4, 5)
    ]
    [dead] = read_committed(dlq)
    headers = dict(dead.headers)
    assert headers["__connect.errors.offset"] == b"3"
    assert headers["__connect.errors.stage"] == b"TASK_PUT"
    assert f"{topic}-0@3".encode() in headers["__connect.errors.exception.message"]
    assert group_offsets(name) == {(topic, 0): 6} == table_offsets(postgres_db)


RECORDS = 600
PER_TRIGGER = 150


def assert_each_id_once(db: PostgresDatabase, expected: int) -> None:
    counts = Counter(i for (i,) in table_rows(db, "SELECT id FROM orders"))
    duplicates = {i: n for i, n in counts.items() if n > 1}
    missing = set(range(expected)) - set(counts)
    assert not duplicates, f"{len(duplicates)} duplicated ids, e.g. {list(duplicates)[:5]}"
    assert not missing, f"{len(missing)} missing ids, e.g. {sorted(missing)[:5]}"
    assert set(counts) == set(range(expected))


def test_killed_kafka_to_postgres_restarts_with_each_record_exactly_once(
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    produce: Callable[..., None],
    group_offsets: Callable[[str], dict[tuple[str, int], int]],
    run_job: Callable[..., Any],
    unique_name: Callable[[str], str],
    postgres_db: PostgresDatabase,
    tmp_path: Path,
) -> None:
    topic = topic_factory("pgcrash", partitions=2)
    for start in range(0, RECORDS, 100):
        produce(topic, [(n % 2, None, order(n)) for n in range(start, start + 100)])
    name = unique_name("pgcrash")
    checkpoint = tmp_path / "checkpoint"
    options = sink_options(postgres_db, name, topic, bootstrap_servers)
    options.pop("connector.class"), options.pop("name"), options.pop("topics")
    options.pop("kafka.bootstrap.servers")
    args = [
        "--name", name, "--connector-class", "PostgresSink", "--topics", topic,
        "--max-records-per-trigger", str(PER_TRIGGER), "--bootstrap-servers", bootstrap_servers,
        "--checkpoint", str(checkpoint), "--until-idle", "--timeout", "240",
        "--conf", f"spark.driver.extraJavaOptions={FAST_JVM}",
        *(f"--option={key}={value}" for key, value in options.items()),
    ]  # fmt: skip

    for point in ("put@0", "before_group_commit@1", "during_group_commit@2"):
        marker = tmp_path / f"fired-{point}"
        crashed = run_job("kafka_to_sink.py", *args, fault=point, marker=marker)

        assert crashed.returncode == -9, crashed.stderr[-3000:]
        assert marker.read_text().strip() == point

    # Spark's checkpoint is gone: the job goes on from the group's offsets, and the table's
    # offsets drop whatever the group is behind on
    shutil.rmtree(checkpoint)
    for start in range(RECORDS, RECORDS + 100, 100):
        produce(topic, [(n % 2, None, order(n)) for n in range(start, start + 100)])
    resumed = run_job("kafka_to_sink.py", *args)

    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert_each_id_once(postgres_db, RECORDS + 100)
    assert group_offsets(name) == table_offsets(postgres_db)
