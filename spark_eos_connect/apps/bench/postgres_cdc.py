"""`--only postgres-cdc`: PostgresCdcSource's changes/s next to reading its slot alone.

A throwaway PostgreSQL cluster (`testing.postgres`) gets a one-table publication and
`changes` inserts committed 1,000 per transaction. The limit reads them from a slot of its own
with `pg_logical_slot_get_binary_changes` (decoding only: no Kafka, nothing converted). The
eosconnect mode streams the same changes (`snapshot.mode=no_data`, JsonConverter without
schemas) into a topic on a running session: its query first emits one change so that its
offsets exist, is stopped, the changes are committed, and the restarted query is timed from
`start()` until its slot's confirmed position passes the last change (the slot moves only
after Kafka committed). Both runs then count what they delivered.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path
from typing import Any, Final

from spark_eos_connect.apps.bench.config import EXACTLY_ONCE, LIMIT, POSTGRES_CDC
from spark_eos_connect.apps.bench.results import ModeResult, Verification
from spark_eos_connect.kafka.clients import admin_client, ensure_topic, read_to_end
from spark_eos_connect.testing.postgres import PostgresCluster, PostgresDatabase
from spark_eos_connect.testing.waiting import wait_for

MAX_CHANGES: Final = 200_000
"""The run's changes: the configured record count, at most this many."""
PER_TRANSACTION: Final = 1000
PUBLICATION: Final = "bench_pub"
TIMEOUT_S: Final = 900.0


def insert_changes(database: PostgresDatabase, first: int, count: int, size: int) -> None:
    """`count` inserts with ids from `first`, `PER_TRANSACTION` per transaction."""
    with database.connect() as connection:
        for start in range(first, first + count, PER_TRANSACTION):
            end = min(start + PER_TRANSACTION, first + count) - 1
            connection.execute(
                "INSERT INTO bench SELECT g, repeat('x', %s::int) "
                "FROM generate_series(%s::bigint, %s::bigint) g",
                (size, start, end),
            )


def current_lsn(database: PostgresDatabase) -> str:
    """`pg_current_wal_lsn()`."""
    with database.connect() as connection:
        return str(connection.execute("SELECT pg_current_wal_lsn()::text").fetchone()[0])


def slot_passed(database: PostgresDatabase, slot: str, lsn: str) -> bool:
    """Whether `slot` exists and its confirmed position is at or after `lsn`."""
    with database.connect() as connection:
        row = connection.execute(
            "SELECT confirmed_flush_lsn >= %s::pg_lsn FROM pg_replication_slots "
            "WHERE slot_name = %s",
            (lsn, slot),
        ).fetchone()
    return bool(row and row[0])


def slot_alone(database: PostgresDatabase, changes: int, size: int) -> tuple[ModeResult, int]:
    """The limit: the changes decoded from a slot of its own, and how many it returned."""
    database.execute("SELECT pg_create_logical_replication_slot('bench_limit', 'pgoutput')")
    insert_changes(database, 0, changes, size)
    started = time.monotonic()
    with database.connect() as connection:
        (found,) = connection.execute(
            "SELECT count(*) FILTER (WHERE get_byte(data, 0) = ascii('I')) "
            "FROM pg_logical_slot_get_binary_changes('bench_limit', NULL, NULL, "
            "'proto_version', '1', 'publication_names', %s)",
            (PUBLICATION,),
        ).fetchone()
    seconds = time.monotonic() - started
    database.execute("SELECT pg_drop_replication_slot('bench_limit')")
    timing = "pg_logical_slot_get_binary_changes over the whole slot, one query"
    return ModeResult(POSTGRES_CDC, LIMIT, changes, seconds, timing=timing), int(found)


def cdc_options(database: PostgresDatabase, name: str, bootstrap: str) -> dict[str, str]:
    """The eosconnect query's reader options."""
    return {
        "name": name,
        "connector.class": "PostgresCdcSource",
        **database.connector_options(),
        "topic.prefix": name,
        "slot.name": "bench_eos",
        "publication.name": PUBLICATION,
        "table.include.list": r"public\.bench",
        "snapshot.mode": "no_data",
        "key.converter": "JsonConverter",
        "key.converter.schemas.enable": "false",
        "value.converter": "JsonConverter",
        "value.converter.schemas.enable": "false",
        "max.batch.size": "5000",
        "maxRecordsPerTrigger": "50000",
        "kafka.bootstrap.servers": bootstrap,
    }


def start_query(spark: Any, options: dict[str, str], checkpoint: Path) -> Any:
    """The PostgresCdcSource query into Kafka."""
    stream = spark.readStream.format("eosconnect").options(**options).load()
    return (
        stream.writeStream.format("eosconnect")
        .options(
            name=options["name"], **{"kafka.bootstrap.servers": options["kafka.bootstrap.servers"]}
        )
        .option("checkpointLocation", str(checkpoint))
        .trigger(processingTime="200 milliseconds")
        .start()
    )


def eosconnect_mode(
    spark: Any, database: PostgresDatabase, kafka: dict[str, Any], changes: int, size: int
) -> tuple[ModeResult, Verification]:
    """The changes streamed by the connector; verified by counting distinct keys in Kafka."""
    name = f"benchcdc{int(time.time())}"
    topic = f"{name}.public.bench"
    ensure_topic(admin_client(kafka), topic, partitions=1)
    options = cdc_options(database, name, kafka["bootstrap.servers"])
    checkpoint = Path(tempfile.mkdtemp(prefix="eosconnect-bench-cdc-")) / "checkpoint"
    query = start_query(spark, options, checkpoint)
    try:
        wait_for(lambda: slot_passed(database, "bench_eos", "0/0"), TIMEOUT_S, "the slot")
        insert_changes(database, -1, 1, size)  # its offsets now exist: a restart resumes
        first = current_lsn(database)
        wait_for(lambda: slot_passed(database, "bench_eos", first), TIMEOUT_S, "the first change")
    finally:
        query.stop()
    insert_changes(database, changes, changes, size)
    end = current_lsn(database)
    started = time.monotonic()
    query = start_query(spark, options, checkpoint)
    try:
        wait_for(lambda: slot_passed(database, "bench_eos", end), TIMEOUT_S, "the last change")
        seconds = time.monotonic() - started
    finally:
        query.stop()
    records = read_to_end(kafka, [topic], "read_committed", 300.0)
    keys = [json.loads(r.key)["id"] for r in records if r.key is not None]
    measured = {k for k in keys if k >= changes}
    timing = "query start() on a running session until the slot passed the last change"
    result = ModeResult(POSTGRES_CDC, EXACTLY_ONCE, changes, seconds, timing=timing)
    return result, Verification(
        POSTGRES_CDC, EXACTLY_ONCE, changes + 1, len(keys), len(measured) + (-1 in keys)
    )


def run_postgres_cdc(
    spark: Any, records: int, size: int, kafka: dict[str, Any]
) -> tuple[list[ModeResult], list[Verification]]:
    """Both modes on one throwaway cluster."""
    changes = min(records, MAX_CHANGES)
    with PostgresCluster() as cluster:
        database = cluster.create_database("bench")
        database.execute(
            "CREATE TABLE bench (id bigint PRIMARY KEY, payload text)",
            f"CREATE PUBLICATION {PUBLICATION} FOR TABLE bench",
        )
        limit, decoded = slot_alone(database, changes, size)
        limit_check = Verification(POSTGRES_CDC, LIMIT, changes, decoded, decoded, where="slot")
        result, verification = eosconnect_mode(spark, database, kafka, changes, size)
    return [limit, result], [limit_check, verification]
