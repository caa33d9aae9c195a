"""`docs/connectors/postgres-cdc-source.md` run as a reader runs it: every block in page order in
one namespace (the setup SQL, PostgreSQL -> Kafka, Kafka -> Delta, Kafka -> PostgreSQL, the
changes, the look at the Delta table, the script form's wait, the stop and the slot's removal),
on the test broker and the test PostgreSQL server; only hosts, ports, paths and names are
replaced. Between two blocks the test waits only where the page says to ("a moment later")."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from spark_eos_connect.testing import wait_for
from spark_eos_connect.testing.postgres import PostgresCluster

from .page_order import PageRun, slot_and_publications_left

pytestmark = pytest.mark.integration

PAGE = Path(__file__).resolve().parents[3] / "docs" / "connectors" / "postgres-cdc-source.md"
EXPECTED = [(1, "apple pie"), (3, "plum"), (4, "fig")]
"""`public.orders` after the page's changes."""


def test_the_cdc_page_runs_in_page_order(
    spark: Any,
    bootstrap_servers: str,
    read_committed: Callable[..., list[Any]],
    unique_name: Callable[[str], str],
    postgres: PostgresCluster,
    tmp_path: Path,
) -> None:
    shop = unique_name("shop").replace("-", "_")  # the database and the topic prefix
    warehouse, role = f"{shop}_warehouse", f"{shop}_user"
    slot = f"{shop}_cdc"
    topic, table = f"{shop}.public.orders", tmp_path / "orders"
    page = PageRun(
        PAGE,
        python={
            "shop-cdc": unique_name("shop-cdc"),
            "127.0.0.1": postgres.host,
            "5432": str(postgres.port),
            "eos_user": role,
            "shop": shop,
            "shop_cdc": slot,
            "127.0.0.1:9092": bootstrap_servers,
            "/tmp/checkpoints/shop-cdc": str(tmp_path / "ck-cdc"),
            "orders-to-delta": unique_name("orders-to-delta"),
            "shop.public.orders": topic,
            "/tmp/tables/orders": str(table),
            "/tmp/checkpoints/orders-to-delta": str(tmp_path / "ck-delta"),
            "orders-to-postgres": unique_name("orders-to-postgres"),
            "jdbc:postgresql://127.0.0.1:5432/warehouse": (
                f"jdbc:postgresql://{postgres.host}:{postgres.port}/{warehouse}"
            ),
            "/tmp/checkpoints/orders-to-postgres": str(tmp_path / "ck-postgres"),
        },
        sql={"eos_user": role, "shop": shop, "warehouse": warehouse, "shop_cdc": slot},
        postgres=postgres,
    )
    # the session is shared: a query of an earlier test that failed would end the page's
    # awaitAnyTermination() at once (as in a notebook that ran such a query before)
    spark.streams.resetTerminated()
    try:
        page.setup_shell()
        page.sql_block()  # the role, the databases, public.orders and its publication
        postgres.created += [shop, warehouse]  # dropped with their slots when the test ends
        page.python_block()  # spark: the session's own (a running session is reused)
        page.python_block()  # PostgreSQL -> Kafka
        page.python_block()  # Kafka -> Delta: the topic may not exist yet
        page.python_block()  # Kafka -> PostgreSQL
        queries = [page.namespace[name] for name in ("query", "to_delta", "mirror_query")]
        page.sql_block(default_database=shop)  # the changes

        def in_warehouse() -> list[tuple[Any, ...]]:
            with postgres.database(warehouse).connect() as connection:
                if connection.execute("SELECT to_regclass('orders_mirror')").fetchone() == (None,):
                    return []
                rows = connection.execute("SELECT id, item FROM orders_mirror ORDER BY id")
                return [tuple(row) for row in rows.fetchall()]

        commits_seen = [0]

        def in_delta() -> list[tuple[Any, ...]]:
            """The Delta table's rows, read again only when it has a new commit."""
            commits = len(list((table / "_delta_log").glob("*.json")))
            if commits == commits_seen[0]:
                return []
            commits_seen[0] = commits
            rows = spark.read.format("delta").load(str(table)).select("payload.after.*")
            return sorted(tuple(row) for row in rows.collect())

        def caught_up() -> bool:  # "a moment later both copies show the table as it is now"
            for running in queries:
                assert running.exception() is None, running.exception()
            return in_warehouse() == EXPECTED and in_delta() == EXPECTED

        wait_for(caught_up, 240, "the snapshot and the changes in PostgreSQL and in Delta")
        shown = page.python_block()  # .show() of the Delta table
        assert "apple pie" in shown and "fig" in shown and "pear" not in shown, shown
        joined = page.python_block_in_background()  # spark.streams.awaitAnyTermination()
        page.python_block()  # stop the three queries
        joined(60)
        assert not any(running.isActive for running in queries)
        page.sql_block()  # drop the slot and the publication
        page.finished()

        assert slot_and_publications_left(postgres, shop, slot) == (0, 0)
        assert replayed(read_committed(topic)) == EXPECTED  # each change once, in order
    finally:
        for name in ("query", "to_delta", "mirror_query"):
            if name in page.namespace:
                page.namespace[name].stop()
        for database in (shop, warehouse):
            postgres.drop_database(database)
        postgres.database().execute(f'DROP ROLE IF EXISTS "{role}"')


def replayed(records: list[Any]) -> list[tuple[Any, ...]]:
    """The table the topic's change events describe, applied in order."""
    rows: dict[int, str] = {}
    for record in records:
        if record.value is None:  # a tombstone
            continue
        event = json.loads(record.value)["payload"]
        if event["op"] == "d":
            del rows[event["before"]["id"]]
        else:
            rows[event["after"]["id"]] = event["after"]["item"]
    return sorted(rows.items())
