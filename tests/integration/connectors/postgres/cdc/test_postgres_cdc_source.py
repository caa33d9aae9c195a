"""PostgresCdcSource through `spark.readStream.format("eosconnect")` into a real broker: the
snapshot and the stream meet with no gap and no overlap while transactions keep committing,
every change is in Kafka exactly once in commit order, and the slot moves only past what Kafka
committed."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from spark_eos_connect.kafka.clients import admin_client, ensure_topic
from spark_eos_connect.testing.postgres import PostgresDatabase
from spark_eos_connect.testing.waiting import wait_for

from .cdc_checks import (
    SCHEMA,
    assert_topic_matches_table,
    events,
    ops,
    run_transactions,
    transaction,
)

pytestmark = pytest.mark.integration


def cdc_options(database: PostgresDatabase, prefix: str, name: str) -> dict[str, str]:
    """Reader options of a PostgresCdcSource query writing schemaless JSON."""
    return {
        "name": name,
        "connector.class": "PostgresCdcSource",
        **database.connector_options(),
        "topic.prefix": prefix,
        "slot.name": f"slot_{name.replace('-', '_')}",
        "key.converter": "JsonConverter",
        "key.converter.schemas.enable": "false",
        "value.converter": "JsonConverter",
        "value.converter.schemas.enable": "false",
        "value.converter.decimal.format": "NUMERIC",
        "max.batch.size": "100",
        "maxRecordsPerTrigger": "250",
    }


@pytest.fixture
def cdc_query(spark: Any, bootstrap_servers: str, tmp_path: Path) -> Iterator[Callable[..., Any]]:
    """`start(options)`: a running PostgresCdcSource query into Kafka, stopped at teardown."""
    started: list[Any] = []

    def start(options: dict[str, str]) -> Any:
        kafka = {"kafka.bootstrap.servers": bootstrap_servers}
        stream = spark.readStream.format("eosconnect").options(**options, **kafka).load()
        query = (
            stream.writeStream.format("eosconnect")
            .options(name=options["name"], **kafka)
            .option("checkpointLocation", str(tmp_path / f"ck-{options['name']}"))
            .trigger(processingTime="300 milliseconds")
            .start()
        )
        started.append(query)
        return query

    yield start
    for query in started:
        query.stop()


def create_topics(kafka_config: dict[str, Any], prefix: str) -> tuple[str, str]:
    admin = admin_client(kafka_config)
    topics = (f"{prefix}.public.accounts", f"{prefix}.public.entries")
    for topic in topics:
        ensure_topic(admin, topic, partitions=1)
    return topics


def slot_position(database: PostgresDatabase, slot: str) -> str | None:
    """The slot's confirmed LSN, None while it does not exist."""
    with database.connect() as connection:
        row = connection.execute(
            "SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = %s",
            (slot,),
        ).fetchone()
    return None if row is None else str(row[0])


def current_lsn(database: PostgresDatabase) -> str:
    with database.connect() as connection:
        return str(connection.execute("SELECT pg_current_wal_lsn()::text").fetchone()[0])


def test_snapshot_and_stream_meet_exactly_while_transactions_commit(
    postgres_db: PostgresDatabase,
    cdc_query: Callable[..., Any],
    kafka_config: dict[str, Any],
    read_committed: Callable[..., list[Any]],
    unique_name: Callable[[str], str],
) -> None:
    postgres_db.execute(*SCHEMA)
    run_transactions(postgres_db, range(1, 401))  # the snapshot's rows
    name = unique_name("pgcdc")
    prefix = name.replace("-", "_")
    accounts, entries = create_topics(kafka_config, prefix)
    slot = cdc_options(postgres_db, prefix, name)["slot.name"]
    stop = threading.Event()
    after_slot: list[int] = []

    def write() -> None:  # keeps committing while the slot is created and the snapshot read
        with postgres_db.connect() as connection:
            for n in range(401, 20000):
                if stop.is_set() or len(after_slot) >= 400:
                    return
                transaction(connection, n)
                if slot_position(postgres_db, slot) is not None:
                    after_slot.append(n)
                else:  # a slow start must not make the snapshot huge
                    stop.wait(0.05)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    query = cdc_query(cdc_options(postgres_db, prefix, name))
    try:
        wait_for(lambda: not writer.is_alive(), 180, "400 transactions after the slot's creation")
    finally:
        stop.set()
        writer.join(60)
    assert query.exception() is None
    assert len(after_slot) == 400
    end = current_lsn(postgres_db)

    def caught_up() -> bool:
        assert query.exception() is None, query.exception()
        position = slot_position(postgres_db, slot)
        return position is not None and lsn_at_least(position, end)

    wait_for(caught_up, 300, "the slot to move past the last transaction")
    records = read_committed(accounts, entries)
    account_events, entry_events = events(records, accounts), events(records, entries)
    assert_topic_matches_table(account_events, postgres_db, "accounts")
    assert_topic_matches_table(entry_events, postgres_db, "entries")
    counts = ops(account_events)
    assert counts.get("r", 0) >= 400 and counts.get("c", 0) > 0 and counts.get("u", 0) > 0
    entry_counts = ops(entry_events)
    assert entry_counts.get("d", 0) == entry_counts.get("tombstone", 0) > 0


def lsn_at_least(lsn: str, target: str) -> bool:
    def value(text: str) -> int:
        high, low = text.split("/")
        return (int(high, 16) << 32) | int(low, 16)

    return value(lsn) >= value(target)


def test_connector_boundaries_make_one_kafka_transaction_per_database_transaction(
    postgres_db: PostgresDatabase,
    cdc_query: Callable[..., Any],
    kafka_config: dict[str, Any],
    read_committed: Callable[..., list[Any]],
    unique_name: Callable[[str], str],
) -> None:
    postgres_db.execute(*SCHEMA)
    run_transactions(postgres_db, range(1, 41))
    name = unique_name("pgtxn")
    prefix = name.replace("-", "_")
    accounts, entries = create_topics(kafka_config, prefix)
    options = {**cdc_options(postgres_db, prefix, name), "transaction.boundary": "connector"}
    query = cdc_query(options)
    wait_for(lambda: slot_position(postgres_db, options["slot.name"]) is not None, 120, "slot")
    run_transactions(postgres_db, range(41, 141))
    end = current_lsn(postgres_db)

    def caught_up() -> bool:
        assert query.exception() is None, query.exception()
        position = slot_position(postgres_db, options["slot.name"])
        return position is not None and lsn_at_least(position, end)

    wait_for(caught_up, 180, "the slot to move past the last transaction")
    records = read_committed(accounts, entries)
    account_events = events(records, accounts)
    assert_topic_matches_table(account_events, postgres_db, "accounts")
    assert_topic_matches_table(events(records, entries), postgres_db, "entries")
    # A commit marker takes an offset: records of one Kafka transaction are contiguous and
    # a gap separates two transactions. Every database transaction is its own.
    streamed = [e for e in account_events if e.value is not None and e.value["op"] != "r"]
    assert len({e.value["source"]["txId"] for e in streamed if e.value}) == 100
    for before, after in itertools.pairwise(streamed):
        assert before.value is not None and after.value is not None
        same = before.value["source"]["txId"] == after.value["source"]["txId"]
        gap = after.offset - before.offset
        assert gap == 1 if same else gap >= 2, (before, after)
