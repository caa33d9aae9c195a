"""`docs/connectors/postgres-sink.md`'s Kafka -> PostgreSQL example, run as the page shows it on
the test broker and the test PostgreSQL server (only the addresses, names and login replaced)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer

from spark_eos_connect.testing import wait_for
from spark_eos_connect.testing.postgres import PostgresDatabase

from .readme import replace_literals

pytestmark = pytest.mark.integration

PAGE = Path(__file__).resolve().parents[3] / "docs" / "connectors" / "postgres-sink.md"
SCHEMA = {
    "type": "struct",
    "optional": False,
    "fields": [
        {"field": "id", "type": "int64", "optional": False},
        {"field": "item", "type": "string", "optional": True},
    ],
}


def python_block(markdown: str) -> str:
    """The page's (only) Python block."""
    [block] = re.findall(r"```python\n(.*?)```", markdown, re.DOTALL)
    return block


def test_the_kafka_to_postgres_example_writes_each_record_once(
    spark: Any,
    bootstrap_servers: str,
    kafka_config: dict[str, Any],
    topic_factory: Callable[..., str],
    unique_name: Callable[[str], str],
    postgres_db: PostgresDatabase,
    tmp_path: Path,
) -> None:
    topic, name = topic_factory("orders", partitions=2), unique_name("orders-to-postgres")
    producer = Producer(kafka_config)
    for n in range(50):
        value = {"schema": SCHEMA, "payload": {"id": n, "item": f"item-{n}"}}
        producer.produce(topic, json.dumps(value).encode(), partition=n % 2)
    producer.flush(30)
    code = replace_literals(
        python_block(PAGE.read_text()),
        {
            "orders-to-postgres": name,
            "orders": topic,
            "127.0.0.1:9092": bootstrap_servers,
            "jdbc:postgresql://127.0.0.1:5432/shop": (
                f"jdbc:postgresql://{postgres_db.host}:{postgres_db.port}/{postgres_db.dbname}"
            ),
            "eosconnect": postgres_db.user,
            "change-me": postgres_db.password,
            "/tmp/checkpoints/orders-to-postgres": str(tmp_path / "ck"),
        },
    )
    namespace: dict[str, Any] = {"spark": spark}
    exec(compile(code, str(PAGE), "exec"), namespace)
    query = namespace["query"]

    def rows() -> list[tuple[Any, ...]]:
        table = f'"{topic}"'  # the table is named after the topic
        with postgres_db.connect() as connection:
            if connection.execute("SELECT to_regclass(%s)", (table,)).fetchone() == (None,):
                return []
            return list(connection.execute(f"SELECT id, item FROM {table} ORDER BY id").fetchall())

    try:
        wait_for(lambda: len(rows()) >= 50, 120, "the example's 50 rows")
    finally:
        query.stop()
    assert rows() == [(n, f"item-{n}") for n in range(50)]
