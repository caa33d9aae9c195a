"""`docs/connectors/postgres-cdc-source.md`'s PostgreSQL -> Kafka example, run as the page shows
it on the test broker and the test PostgreSQL server (only addresses, names and login
replaced)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from spark_eos_connect.kafka.clients import admin_client, ensure_topic
from spark_eos_connect.testing import wait_for
from spark_eos_connect.testing.postgres import PostgresDatabase

from .readme import replace_literals

pytestmark = pytest.mark.integration

PAGE = Path(__file__).resolve().parents[3] / "docs" / "connectors" / "postgres-cdc-source.md"


def python_block(markdown: str) -> str:
    """The page's (only) Python block."""
    [block] = re.findall(r"```python\n(.*?)```", markdown, re.DOTALL)
    return block


def test_the_postgres_to_kafka_example_delivers_each_change_once(
    spark: Any,
    bootstrap_servers: str,
    kafka_config: dict[str, Any],
    read_committed: Callable[..., list[Any]],
    unique_name: Callable[[str], str],
    postgres_db: PostgresDatabase,
    tmp_path: Path,
) -> None:
    postgres_db.execute(
        "CREATE TABLE orders (id int PRIMARY KEY, item text)",
        "INSERT INTO orders SELECT g, 'item-' || g FROM generate_series(1, 20) g",
    )
    name = unique_name("shop-cdc")
    prefix = name.replace("-", "_")
    topic = f"{prefix}.public.orders"
    ensure_topic(admin_client(kafka_config), topic, partitions=1)
    code = replace_literals(
        python_block(PAGE.read_text()),
        {
            "shop-cdc": name,
            "127.0.0.1": postgres_db.host,
            "5432": str(postgres_db.port),
            "eosconnect": postgres_db.user,
            "change-me": postgres_db.password,
            "shop": prefix,
            "127.0.0.1:9092": bootstrap_servers,
            "/tmp/checkpoints/shop-cdc": str(tmp_path / "ck"),
        },
    ).replace(f'"database.dbname", "{prefix}"', f'"database.dbname", "{postgres_db.dbname}"')
    namespace: dict[str, Any] = {"spark": spark}
    exec(compile(code, str(PAGE), "exec"), namespace)
    query = namespace["query"]
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
