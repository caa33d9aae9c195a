"""`slot.drop.on.stop` (Debezium's option): the connector drops its replication slot when it
stops, even one a session still reads; by default the slot outlives it. The next start with
the committed offsets never streams past the gap: it takes a new snapshot with
`snapshot.mode=when_needed` and fails naming the dropped slot otherwise."""

from __future__ import annotations

import pytest

from spark_eos_connect.connectors.postgres.cdc import database as db
from spark_eos_connect.connectors.postgres.cdc.connector import PostgresCdcSourceConnector
from spark_eos_connect.connectors.postgres.cdc.database import CdcSetupError
from spark_eos_connect.testing.postgres import PostgresDatabase

from .test_postgres_cdc_errors import props, start_task

pytestmark = pytest.mark.integration


@pytest.fixture
def shop(postgres_db: PostgresDatabase) -> PostgresDatabase:
    postgres_db.execute(
        "CREATE TABLE orders (id int PRIMARY KEY, item text)",
        "INSERT INTO orders VALUES (1, 'apple'), (2, 'pear')",
    )
    return postgres_db


def slot_exists(database: PostgresDatabase, slot: str) -> bool:
    with database.connect() as connection:
        found = connection.execute(
            "SELECT 1 FROM pg_replication_slots WHERE slot_name = %s", (slot,)
        ).fetchone()
    return found is not None


def stopped_connector(config: dict[str, str]) -> None:
    connector = PostgresCdcSourceConnector()
    connector.start(config)
    connector.stop()


def committed_offset_of_a_snapshot(config: dict[str, str]) -> dict[str, object]:
    """Start a task, poll the whole snapshot and return the offset of its last record."""
    task = start_task(config)
    try:
        records = task.poll() or []
    finally:
        task.stop()
    assert [r.value.get("op") for r in records] == ["r", "r"]
    offset = records[-1].source_offset
    assert offset is not None
    return dict(offset)


def test_the_slot_outlives_a_stopped_connector_by_default(shop: PostgresDatabase) -> None:
    config = props(shop)
    committed_offset_of_a_snapshot(config)

    stopped_connector(config)

    assert slot_exists(shop, config["slot.name"])


def test_slot_drop_on_stop_drops_it_and_the_next_start_never_streams_past_the_gap(
    shop: PostgresDatabase,
) -> None:
    config = props(shop, **{"slot.drop.on.stop": "true"})
    offset = committed_offset_of_a_snapshot(config)

    stopped_connector(config)

    assert not slot_exists(shop, config["slot.name"])
    shop.execute("INSERT INTO orders VALUES (3, 'fig')")  # a change no slot holds
    with pytest.raises(CdcSetupError, match=r"does not exist.*slot\.drop\.on\.stop=true"):
        start_task(config, offset)
    again = start_task({**config, "snapshot.mode": "when_needed"}, offset)
    try:
        rows = [(r.value.get("op"), r.value.get("after").get("id")) for r in again.poll() or []]
    finally:
        again.stop()
    assert rows == [("r", 1), ("r", 2), ("r", 3)]  # a new snapshot, the change in it


def test_a_slot_still_being_read_is_dropped_once_its_readers_session_is_ended(
    shop: PostgresDatabase,
) -> None:
    import psycopg

    shop.execute("SELECT pg_create_logical_replication_slot('being_read', 'pgoutput')")
    reader = psycopg.connect(shop.dsn + " replication=database", autocommit=True)
    reader.execute(
        "START_REPLICATION SLOT being_read LOGICAL 0/0 (proto_version '1', "
        "publication_names 'none')"
    )  # holds the slot until its session ends
    with shop.connect() as connection:
        assert db.drop_slot_when_free(connection, "being_read", wait_s=0.2)
        assert not db.drop_slot_when_free(connection, "being_read", wait_s=0.2)  # gone
    assert not slot_exists(shop, "being_read")
    reader.close()
