"""PostgresCdcSource refuses to start, naming the cause, when the server or its slot cannot give
exactly-once change data capture (a real server each time; nothing is mocked)."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator

import pytest

from spark_eos_connect.api.source import InMemoryOffsetStorageReader, SourceTaskContext
from spark_eos_connect.connectors.postgres.cdc.database import CdcSetupError
from spark_eos_connect.connectors.postgres.cdc.task import PostgresCdcSourceTask
from spark_eos_connect.errors import ConfigError
from spark_eos_connect.testing.postgres import PostgresCluster, PostgresDatabase, find_bin_dir
from spark_eos_connect.testing.waiting import wait_for

pytestmark = pytest.mark.integration


def props(database: PostgresDatabase, **extra: str) -> dict[str, str]:
    return {
        "database.hostname": database.host,
        "database.port": str(database.port),
        "database.user": database.user,
        "database.password": database.password,
        "database.dbname": database.dbname,
        "topic.prefix": "shop",
        "slot.name": f"cdc_{database.dbname}",  # slots are the server's, not the database's
        **extra,
    }


def start_task(
    config: dict[str, str], offset: dict[str, object] | None = None
) -> PostgresCdcSourceTask:
    offsets = InMemoryOffsetStorageReader()
    if offset is not None:
        offsets.set({"server": config["topic.prefix"]}, offset)
    task = PostgresCdcSourceTask()
    task.initialize(SourceTaskContext(config, offsets))
    try:
        task.start(config)
    except BaseException:
        task.stop()
        raise
    return task


@pytest.fixture
def shop(postgres_db: PostgresDatabase) -> PostgresDatabase:
    postgres_db.execute("CREATE TABLE orders (id int PRIMARY KEY, item text)")
    return postgres_db


def test_wal_level_must_be_logical() -> None:
    with PostgresCluster(settings={"wal_level": "replica"}) as cluster:
        database = cluster.create_database()
        database.execute("CREATE TABLE orders (id int PRIMARY KEY)")
        with pytest.raises(CdcSetupError, match=r"wal_level is 'replica'.*wal_level=logical"):
            start_task(props(database))


def test_a_user_without_replication_is_told_so(shop: PostgresDatabase) -> None:
    shop.execute(
        "CREATE ROLE reader LOGIN PASSWORD 'pw'",
        "GRANT SELECT ON orders TO reader",
    )
    config = {**props(shop), "database.user": "reader", "database.password": "pw"}
    with pytest.raises(CdcSetupError, match=r"'reader' lacks the REPLICATION privilege"):
        start_task(config)


def test_a_publication_that_leaves_a_captured_table_out_is_named(shop: PostgresDatabase) -> None:
    shop.execute("CREATE TABLE audit (line text)", "CREATE PUBLICATION narrow FOR TABLE orders")
    with pytest.raises(CdcSetupError, match=r"'narrow' does not publish.*public\.audit"):
        start_task(props(shop, **{"publication.name": "narrow"}))
    start_task(
        props(shop, **{"publication.name": "narrow", "table.include.list": "public.orders"})
    ).stop()


def test_a_missing_publication_is_named_when_autocreation_is_disabled(
    shop: PostgresDatabase,
) -> None:
    with pytest.raises(CdcSetupError, match=r"'dbz_publication' does not exist.*disabled"):
        start_task(props(shop, **{"publication.autocreate.mode": "disabled"}))


def test_a_publication_publishing_partitions_the_other_way_is_refused(
    shop: PostgresDatabase,
) -> None:
    shop.execute("CREATE PUBLICATION leaves FOR ALL TABLES")
    with pytest.raises(CdcSetupError, match=r"'leaves' has publish_via_partition_root=false"):
        start_task(
            props(shop, **{"publication.name": "leaves", "publish.via.partition.root": "true"})
        )


def test_a_partitioned_table_whose_partitions_are_all_left_out_is_named(
    shop: PostgresDatabase,
) -> None:
    shop.execute(
        "CREATE TABLE events (id int, day date, PRIMARY KEY (id, day)) PARTITION BY RANGE (day)",
        "CREATE TABLE events_2024 PARTITION OF events FOR VALUES FROM ('2024-01-01') TO "
        "('2025-01-01')",
    )
    with pytest.raises(ConfigError, match=r"public\.events are captured but none of their"):
        start_task(props(shop, **{"table.include.list": "public.events"}))


@pytest.fixture
def slot_reader(shop: PostgresDatabase) -> Iterator[subprocess.Popen[bytes]]:
    """pg_recvlogical streaming from the connector's slot (created by a first start)."""
    start_task(props(shop)).stop()
    reader = subprocess.Popen(
        [
            str(find_bin_dir() / "pg_recvlogical"),
            "-d",
            shop.dsn,
            "--slot",
            f"cdc_{shop.dbname}",
            "--start",
            "-o",
            "proto_version=1",
            "-o",
            "publication_names=dbz_publication",
            "-f",
            "/dev/null",
        ],
        stderr=subprocess.PIPE,
    )

    def active() -> bool:
        with shop.connect() as connection:
            row = connection.execute(
                "SELECT active FROM pg_replication_slots WHERE slot_name = %s",
                (f"cdc_{shop.dbname}",),
            ).fetchone()
        return bool(row and row[0])

    try:
        wait_for(active, 30, "pg_recvlogical to hold the slot")
        yield reader
    finally:
        reader.terminate()
        reader.wait(30)


def test_a_slot_in_use_is_refused(
    shop: PostgresDatabase, slot_reader: subprocess.Popen[bytes]
) -> None:
    offset = {"lsn": 1, "txId": 1, "record": 1, "complete": True}
    with pytest.raises(CdcSetupError, match=r"'cdc_db_[0-9a-f]+' is in use by process"):
        start_task(props(shop), offset)
    with pytest.raises(CdcSetupError, match=r"'cdc_db_[0-9a-f]+' is in use by process"):
        start_task(props(shop))  # starting over would drop it: refused too


def test_a_missing_slot_with_committed_offsets_is_refused(shop: PostgresDatabase) -> None:
    offset = {"lsn": 1, "txId": 1, "record": 1, "complete": True}
    with pytest.raises(CdcSetupError, match=r"'cdc_db_[0-9a-f]+' does not exist.*reset"):
        start_task(props(shop), offset)
