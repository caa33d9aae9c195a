"""`docs/connectors/postgres-cdc-source.md`'s examples, PostgreSQL -> Kafka, then Kafka -> Delta
and Kafka -> PostgreSQL from the same topic, run as the page shows them on the test broker and
the test PostgreSQL server (only addresses, names, paths and login replaced)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from spark_eos_connect.kafka.clients import admin_client, ensure_topic
from spark_eos_connect.testing import wait_for
from spark_eos_connect.testing.postgres import PostgresCluster, PostgresDatabase

from .readme import replace_literals

pytestmark = pytest.mark.integration

PAGE = Path(__file__).resolve().parents[3] / "docs" / "connectors" / "postgres-cdc-source.md"


def python_blocks(markdown: str) -> list[str]:
    """The page's Python blocks: the CDC query, then the Delta and PostgreSQL mirrors of its
    topic."""
    blocks = re.findall(r"```python\n(.*?)```", markdown, re.DOTALL)
    assert len(blocks) == 3, f"expected the page's three Python blocks, found {len(blocks)}"
    return blocks


def cdc_code(database: PostgresDatabase, name: str, bootstrap: str, checkpoint: Path) -> str:
    """The first block for this test's database, broker, connector name and checkpoint."""
    prefix = name.replace("-", "_")
    return replace_literals(
        python_blocks(PAGE.read_text())[0],
        {
            "shop-cdc": name,
            "127.0.0.1": database.host,
            "5432": str(database.port),
            "eosconnect": database.user,
            "change-me": database.password,
            "shop": prefix,
            "shop_cdc": prefix,
            "127.0.0.1:9092": bootstrap,
            "/tmp/checkpoints/shop-cdc": str(checkpoint),
        },
    ).replace(f'"database.dbname", "{prefix}"', f'"database.dbname", "{database.dbname}"')


def orders_table(
    database: PostgresDatabase,
    rows: int,
    kafka_config: dict[str, Any],
    unique_name: Callable[[str], str],
) -> tuple[str, str]:
    """The page's `orders` table with `rows` rows, a connector name and its topic (created)."""
    database.execute(
        "CREATE TABLE orders (id int PRIMARY KEY, item text)",
        f"INSERT INTO orders SELECT g, 'item-' || g FROM generate_series(1, {rows}) g",
    )
    name = unique_name("shop-cdc")
    topic = f"{name.replace('-', '_')}.public.orders"
    ensure_topic(admin_client(kafka_config), topic, partitions=1)
    return name, topic


def run_cdc_example(
    spark: Any, database: PostgresDatabase, name: str, bootstrap: str, tmp_path: Path
) -> dict[str, Any]:
    """The page's PostgreSQL -> Kafka block, run: the names it defined (its `query`)."""
    namespace: dict[str, Any] = {"spark": spark}
    code = cdc_code(database, name, bootstrap, tmp_path / "ck")
    exec(compile(code, str(PAGE), "exec"), namespace)
    return namespace


def test_the_postgres_to_kafka_example_delivers_each_change_once(
    spark: Any,
    bootstrap_servers: str,
    kafka_config: dict[str, Any],
    read_committed: Callable[..., list[Any]],
    unique_name: Callable[[str], str],
    postgres_db: PostgresDatabase,
    tmp_path: Path,
) -> None:
    name, topic = orders_table(postgres_db, 20, kafka_config, unique_name)
    query = run_cdc_example(spark, postgres_db, name, bootstrap_servers, tmp_path)["query"]
    try:
        wait_for(lambda: len(read_committed(topic)) >= 20, 120, "the snapshot's 20 rows")
        postgres_db.execute(
            "UPDATE orders SET item = 'changed' WHERE id = 1", "DELETE FROM orders WHERE id = 2"
        )
        wait_for(lambda: len(read_committed(topic)) >= 23, 120, "the update, delete, tombstone")
    finally:
        query.stop()
    records = read_committed(topic)
    values = [None if r.value is None else json.loads(r.value)["payload"] for r in records]
    assert [v["op"] for v in values[:20] if v] == ["r"] * 20
    assert [None if v is None else v["op"] for v in values[20:]] == ["u", "d", None]
    assert values[20]["after"] == {"id": 1, "item": "changed"}
    assert json.loads(records[22].key)["payload"] == {"id": 2}


def test_the_postgres_to_kafka_to_delta_and_postgres_examples_mirror_the_table(
    spark: Any,
    bootstrap_servers: str,
    kafka_config: dict[str, Any],
    read_committed: Callable[..., list[Any]],
    unique_name: Callable[[str], str],
    postgres: PostgresCluster,
    postgres_db: PostgresDatabase,
    tmp_path: Path,
) -> None:
    name, topic = orders_table(postgres_db, 5, kafka_config, unique_name)
    table = tmp_path / "orders"
    mirror = replace_literals(
        python_blocks(PAGE.read_text())[1],
        {
            "orders-to-delta": unique_name("orders-to-delta"),
            "shop.public.orders": topic,
            "/tmp/tables/orders": str(table),
            "127.0.0.1:9092": bootstrap_servers,
            "/tmp/checkpoints/orders-to-delta": str(tmp_path / "ck-delta"),
        },
    )
    warehouse = postgres.create_database("warehouse")
    to_postgres = replace_literals(
        python_blocks(PAGE.read_text())[2],
        {
            "orders-to-postgres": unique_name("orders-to-postgres"),
            "shop.public.orders": topic,
            "127.0.0.1:9092": bootstrap_servers,
            "jdbc:postgresql://127.0.0.1:5432/warehouse": (
                f"jdbc:postgresql://{warehouse.host}:{warehouse.port}/{warehouse.dbname}"
            ),
            "eosconnect": warehouse.user,
            "change-me": warehouse.password,
            "/tmp/checkpoints/orders-to-postgres": str(tmp_path / "ck-postgres"),
        },
    )
    namespace = run_cdc_example(spark, postgres_db, name, bootstrap_servers, tmp_path)
    queries = [namespace["query"]]
    try:
        exec(compile(to_postgres, str(PAGE), "exec"), namespace)  # follows the topic as it fills
        queries.append(namespace["mirror_query"])
        wait_for(lambda: len(read_committed(topic)) >= 5, 90, "the snapshot's rows in Kafka")
        postgres_db.execute(
            "UPDATE orders SET item = 'changed' WHERE id = 1",
            "DELETE FROM orders WHERE id = 2",
            "UPDATE orders SET id = 30 WHERE id = 3",
            "INSERT INTO orders VALUES (6, 'item-6')",
        )
        # u, d + tombstone, d + tombstone + c (the key change), c
        wait_for(lambda: len(read_committed(topic)) >= 5 + 7, 90, "the changes in Kafka")
        exec(compile(mirror, str(PAGE), "exec"), namespace)
        queries.append(namespace["to_delta"])
        with postgres_db.connect() as connection:
            wanted = connection.execute("SELECT id, item FROM orders ORDER BY id").fetchall()
        commits_read = [0]

        def in_postgres() -> list[tuple[Any, ...]]:
            with warehouse.connect() as connection:
                if connection.execute("SELECT to_regclass('orders_mirror')").fetchone() == (None,):
                    return []
                query = "SELECT id, item FROM orders_mirror ORDER BY id"
                return [tuple(row) for row in connection.execute(query).fetchall()]

        def mirrored() -> bool:
            """Whether the PostgreSQL mirror, and Delta's latest commit, show the table as it is
            (Delta read once per commit)."""
            for query in queries:
                assert query.exception() is None, query.exception()
            if in_postgres() != [tuple(r) for r in wanted]:
                return False
            commits = len(list((table / "_delta_log").glob("*.json")))
            if commits == commits_read[0]:
                return False
            commits_read[0] = commits
            rows = spark.read.format("delta").load(str(table)).select("payload.after.*")
            return sorted(tuple(r) for r in rows.collect()) == [tuple(r) for r in wanted]

        wait_for(mirrored, 90, "the snapshot and the changes in Delta and in PostgreSQL")
    finally:
        for query in queries:
            query.stop()
    expected = [(1, "changed"), (4, "item-4"), (5, "item-5"), (6, "item-6"), (30, "item-3")]
    rows = spark.read.format("delta").load(str(table)).select("payload.after.*").collect()
    assert sorted(tuple(r) for r in rows) == expected
    assert in_postgres() == expected
    with warehouse.connect() as connection:  # the mirror's key is the source's
        key = connection.execute(
            "SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid "
            "AND a.attnum = ANY(i.indkey) WHERE i.indrelid = 'orders_mirror'::regclass "
            "AND i.indisprimary"
        ).fetchall()
    assert key == [("id",)]


def test_the_slot_removal_block_drops_the_connectors_slot_and_publication(
    postgres_db: PostgresDatabase, unique_name: Callable[[str], str]
) -> None:
    from spark_eos_connect.api.source import InMemoryOffsetStorageReader, SourceTaskContext
    from spark_eos_connect.connectors.postgres.task import PostgresCdcSourceTask

    postgres_db.execute("CREATE TABLE orders (id int PRIMARY KEY)")
    slot = unique_name("slot").replace("-", "_")
    config = {
        "database.hostname": postgres_db.host,
        "database.port": str(postgres_db.port),
        "database.user": postgres_db.user,
        "database.password": postgres_db.password,
        "database.dbname": postgres_db.dbname,
        "topic.prefix": "shop",
        "slot.name": slot,
    }
    task = PostgresCdcSourceTask()
    task.initialize(SourceTaskContext(config, InMemoryOffsetStorageReader()))
    task.start(config)
    task.stop()
    (sql,) = re.findall(r"```sql\n(.*?)```", PAGE.read_text(), re.DOTALL)
    postgres_db.execute(*[s for s in sql.replace("shop_cdc", slot).split(";") if s.strip()])
    with postgres_db.connect() as connection:
        slots = connection.execute(
            "SELECT count(*) FROM pg_replication_slots WHERE slot_name = %s", (slot,)
        ).fetchone()
        publications = connection.execute("SELECT count(*) FROM pg_publication").fetchone()
    assert slots == (0,) and publications == (0,)
