"""`docs/connectors/postgres-sink.md` run as a reader runs it: every block in page order in one
namespace (the setup SQL, a few records into Kafka, Kafka -> PostgreSQL, the script form's wait,
the stop), on the test broker and the test PostgreSQL server; only hosts, ports, paths and
names are replaced."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from spark_eos_connect.testing import wait_for
from spark_eos_connect.testing.postgres import PostgresCluster

from .page_order import PageRun

pytestmark = pytest.mark.integration

PAGE = Path(__file__).resolve().parents[3] / "docs" / "connectors" / "postgres-sink.md"


def test_the_sink_page_runs_in_page_order(
    spark: Any,
    bootstrap_servers: str,
    unique_name: Callable[[str], str],
    postgres: PostgresCluster,
    tmp_path: Path,
) -> None:
    shop = unique_name("shop").replace("-", "_")
    role, topic = f"{shop}_user", unique_name("orders")
    page = PageRun(
        PAGE,
        python={
            "127.0.0.1:9092": bootstrap_servers,
            "orders": topic,
            "orders-to-postgres": unique_name("orders-to-postgres"),
            "jdbc:postgresql://127.0.0.1:5432/shop": (
                f"jdbc:postgresql://{postgres.host}:{postgres.port}/{shop}"
            ),
            "eos_user": role,
            "/tmp/checkpoints/orders-to-postgres": str(tmp_path / "ck"),
        },
        sql={"eos_user": role, "shop": shop},
        postgres=postgres,
    )

    def rows() -> list[tuple[Any, ...]]:
        table = f'"{topic}"'  # the table is named after the topic
        with postgres.database(shop).connect() as connection:
            if connection.execute("SELECT to_regclass(%s)", (table,)).fetchone() == (None,):
                return []
            return list(connection.execute(f"SELECT id, item FROM {table} ORDER BY id"))

    try:
        page.setup_shell()
        page.sql_block()  # the role and the database
        postgres.created.append(shop)  # dropped when the test ends
        page.python_block()  # three records into the topic
        page.python_block()  # spark: the session's own (a running session is reused)
        page.python_block()  # Kafka -> PostgreSQL
        query = page.namespace["query"]

        def written() -> bool:  # "a moment later ... shows the three rows"
            assert query.exception() is None, query.exception()
            return len(rows()) >= 3

        wait_for(written, 60, "the page's three rows in PostgreSQL")
        joined = page.python_block_in_background()  # query.awaitTermination()
        page.python_block()  # query.stop()
        joined(60)
        page.finished()
        assert rows() == [(1, "apple"), (2, "pear"), (3, "plum")]
    finally:
        if "query" in page.namespace:
            page.namespace["query"].stop()
        postgres.drop_database(shop)
        postgres.database().execute(f'DROP ROLE IF EXISTS "{role}"')
