"""Kafka -> PostgreSQL through `writeStream.format("eosconnect")` with `connector.class=
PostgresSink`: the table ends equal to the records (a field added to their schema reaches it
through auto.evolve) and the group holds the table's offsets; a record PostgreSQL refuses goes
to the dead letter queue under errors.tolerance=all while the others are written once; and a
driver SIGKILLed at three points of a micro-batch, then its task hosts SIGKILLed mid-put, then a
restart without its checkpoints, leaves each record in the table exactly once, in insert mode
and in upsert mode with deletes (one job runs both sinks)."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from spark_eos_connect.testing.campaigns import full_run
from spark_eos_connect.testing.job_output import job_report
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
NOTE_SCHEMA = {
    **ID_SCHEMA,
    "fields": [*ID_SCHEMA["fields"], {"field": "note", "type": "string", "optional": True}],
}
QUICK_IDLE = "spark.sql.streaming.noDataProgressEventInterval=1000"
"""Spark reports a trigger without new data after 1 s, not 10: `--until-idle` ends sooner."""


def order(n: int, item: str | None = None) -> bytes:
    """A JsonConverter record with its schema."""
    payload = {"id": n, "item": item if item is not None else f"item-{n}"}
    return json.dumps({"schema": ID_SCHEMA, "payload": payload}).encode()


def noted(n: int) -> bytes:
    """Order `n` with the schema's new optional field `note`."""
    payload = {"id": n, "item": f"item-{n}", "note": f"note-{n}"}
    return json.dumps({"schema": NOTE_SCHEMA, "payload": payload}).encode()


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
    options = {
        **sink_options(postgres_db, name, topic, bootstrap_servers),
        "tasks.max": "2",
        "auto.evolve": "true",
    }

    query = run_available_now(sink_stream(spark, options), tmp_path / "ck")
    assert query.exception() is None
    # the record schema gains an optional field: auto.evolve adds its column
    produce(topic, [(n % 2, None, noted(n)) for n in range(200, 300)])
    query = run_available_now(sink_stream(spark, options), tmp_path / "ck")
    assert query.exception() is None

    got = table_rows(postgres_db, "SELECT id, item, note FROM orders ORDER BY id")
    assert got == [(n, f"item-{n}", None if n < 200 else f"note-{n}") for n in range(300)]
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
CRASHES = (
    ("put@0", "before_group_commit@1", "during_group_commit@2")
    if full_run()
    else ("during_group_commit@2",)
)
"""Short form: the driver killed mid group commit, after both tables' transactions committed
(the Delta crash test kills mid-put; the task host loss below is a kill mid-put too)."""
TWO_SINKS_JOB = str(Path(__file__).with_name("two_sinks_job.py"))
KEYS = 40
UPSERT_TABLE = "orders_upsert"


def assert_each_id_once(db: PostgresDatabase, expected: int) -> None:
    counts = Counter(i for (i,) in table_rows(db, "SELECT id FROM orders"))
    duplicates = {i: n for i, n in counts.items() if n > 1}
    missing = set(range(expected)) - set(counts)
    assert not duplicates, f"{len(duplicates)} duplicated ids, e.g. {list(duplicates)[:5]}"
    assert not missing, f"{len(missing)} missing ids, e.g. {sorted(missing)[:5]}"
    assert set(counts) == set(range(expected))


def keyed(n: int) -> tuple[int, bytes, bytes | None]:
    """Record `n` of the upsert topic: key `n % KEYS` (a JsonConverter int64 with its schema,
    each key on one partition), a tombstone when `n % 7 == 3`, else order `n`."""
    key = n % KEYS
    schema = {"type": "int64", "optional": False}
    value = None if n % 7 == 3 else order(n)
    return key % 2, json.dumps({"schema": schema, "payload": key}).encode(), value


def upsert_options(name: str, topic: str) -> dict[str, str]:
    """The second sink of a two-mode run: upserts by record key, tombstones delete."""
    return {
        "name": name,
        "topics": topic,
        "table.name.format": UPSERT_TABLE,
        "insert.mode": "upsert",
        "pk.mode": "record_key",
        "pk.fields": "k",
        "delete.enabled": "true",
        "key.converter": "org.apache.kafka.connect.json.JsonConverter",
    }


def second_sink_args(name: str, topic: str, checkpoint: Path) -> list[str]:
    """`two_sinks_job.py`'s arguments for the upsert sink."""
    options = upsert_options(name, topic)
    return [
        "--second-checkpoint", str(checkpoint),
        *(f"--second={key}={value}" for key, value in options.items()),
    ]  # fmt: skip


def assert_upsert_state(db: PostgresDatabase, records: int) -> None:
    """The upsert table holds the last value of each key of records `0 .. records - 1`, the
    deleted keys absent, row for row (and by a checksum PostgreSQL computes over the rows)."""
    last: dict[int, int | None] = {}
    for n in range(records):
        last[n % KEYS] = None if keyed(n)[2] is None else n
    expected = [(k, n, f"item-{n}") for k, n in sorted(last.items()) if n is not None]
    text = ",".join(f"{k}:{n}:{item}" for k, n, item in expected)
    [(checksum,)] = table_rows(
        db,
        "SELECT md5(coalesce(string_agg(k || ':' || id || ':' || item, ',' ORDER BY k), '')) "
        f"FROM {UPSERT_TABLE}",
    )
    assert table_rows(db, f"SELECT k, id, item FROM {UPSERT_TABLE} ORDER BY k") == expected
    assert checksum == hashlib.md5(text.encode()).hexdigest()
    assert 0 < len(expected) < KEYS  # some keys end deleted, some not


def next_batch_id(checkpoint: Path) -> int:
    """The id of the next micro-batch of the query with this checkpoint."""
    return max(int(p.name) for p in (checkpoint / "offsets").iterdir() if p.name.isdigit()) + 1


def produce_both(
    produce: Callable[..., None], topic: str, upsert_topic: str, numbers: range
) -> None:
    for start in range(numbers.start, numbers.stop, 100):
        produce(topic, [(n % 2, None, order(n)) for n in range(start, start + 100)])
        produce(upsert_topic, [keyed(n) for n in range(start, start + 100)])


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
    """One job runs two sinks, so each kill hits both: `insert.mode=insert, pk.mode=kafka` and
    `insert.mode=upsert, pk.mode=record_key, delete.enabled=true` (repeated keys, tombstones)."""
    topic = topic_factory("pgcrash", partitions=2)
    upsert_topic = topic_factory("pgcrash-up", partitions=2)
    produce_both(produce, topic, upsert_topic, range(RECORDS))
    name = unique_name("pgcrash")
    checkpoint, upsert_checkpoint = tmp_path / "checkpoint", tmp_path / "checkpoint-upsert"
    options = sink_options(postgres_db, name, topic, bootstrap_servers)
    options.pop("connector.class"), options.pop("name"), options.pop("topics")
    options.pop("kafka.bootstrap.servers")
    args = [
        "--name", name, "--connector-class", "PostgresSink", "--topics", topic,
        "--max-records-per-trigger", str(PER_TRIGGER), "--bootstrap-servers", bootstrap_servers,
        "--checkpoint", str(checkpoint), "--until-idle", "--timeout", "240",
        "--conf", QUICK_IDLE,
        *(f"--option={key}={value}" for key, value in options.items()),
        *second_sink_args(f"{name}-up", upsert_topic, upsert_checkpoint),
    ]  # fmt: skip

    for point in CRASHES:
        marker = tmp_path / f"fired-{point}"
        crashed = run_job(TWO_SINKS_JOB, *args, fault=point, marker=marker)

        assert crashed.returncode == -9, job_report(crashed)
        assert marker.read_text().strip() == point

    # each task host alone is SIGKILLed mid-put (once per host: both sinks lose theirs): Spark
    # runs the task again on a new host, which opens the partitions at the table's offsets
    produce_both(produce, topic, upsert_topic, range(RECORDS, RECORDS + 400))
    points = {f"lose_host_put@{next_batch_id(ck) + 1}" for ck in (checkpoint, upsert_checkpoint)}
    marker = tmp_path / "fired-host"
    lost = run_job(TWO_SINKS_JOB, *args, fault=",".join(sorted(points)), marker=marker)
    assert lost.returncode == 0, job_report(lost)
    fired = [p.read_text().strip() for p in tmp_path.glob(f"{marker.name}.*")]
    assert len(fired) == 2 and set(fired) <= points, fired

    # Spark's checkpoints are gone: the job goes on from the groups' offsets, and the tables'
    # offsets drop whatever the groups are behind on
    shutil.rmtree(checkpoint), shutil.rmtree(upsert_checkpoint)
    produce_both(produce, topic, upsert_topic, range(RECORDS + 400, RECORDS + 500))
    resumed = run_job(TWO_SINKS_JOB, *args)

    assert resumed.returncode == 0, job_report(resumed)
    assert_each_id_once(postgres_db, RECORDS + 500)
    assert_upsert_state(postgres_db, RECORDS + 500)
    stored = table_offsets(postgres_db)
    assert group_offsets(name) == {tp: o for tp, o in stored.items() if tp[0] == topic}
    assert group_offsets(f"{name}-up") == {
        tp: o for tp, o in stored.items() if tp[0] == upsert_topic
    }
