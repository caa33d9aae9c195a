"""`docs/sinks-and-delta.md` run as a reader runs it: its blocks in page order in one namespace
(the session, ten records into `orders`, the Delta example, which the README shows too), on the
test broker and Spark; only the address, names and paths are replaced. An aborted transaction
added to the topic must not reach the table."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from delta.tables import DeltaTable

from spark_eos_connect.testing import wait_for

from .page_order import PageRun

pytestmark = pytest.mark.integration

PAGE = Path(__file__).resolve().parents[3] / "docs" / "sinks-and-delta.md"


def test_the_sinks_and_delta_page_runs_in_page_order(
    spark: Any,
    bootstrap_servers: str,
    produce: Callable[..., None],
    unique_name: Callable[[str], str],
    tmp_path: Path,
) -> None:
    table, topic = tmp_path / "orders", unique_name("orders")
    page = PageRun(
        PAGE,
        python={
            "127.0.0.1:9092": bootstrap_servers,
            "orders": topic,
            "orders-to-delta": unique_name("orders-to-delta"),
            "/tmp/tables/orders": str(table),
            "/tmp/checkpoints/orders-to-delta": str(tmp_path / "ck"),
        },
    )
    page.setup_shell()
    try:
        page.python_block()  # spark: the session's own (a running session is reused)
        page.python_block()  # ten records into the topic
        produce(topic, [(0, None, b"aborted")] * 3, abort=True)  # read_committed skips these
        page.python_block()  # Kafka -> Delta
        query = page.namespace["query"]

        def rows() -> int:
            assert query.exception() is None, query.exception()
            if not DeltaTable.isDeltaTable(spark, str(table)):
                return 0
            return int(spark.read.format("delta").load(str(table)).count())

        wait_for(lambda: rows() >= 10, 120, "the ten records in Delta")
        page.finished()
    finally:
        if "query" in page.namespace:
            page.namespace["query"].stop()

    values = [r.value for r in spark.read.format("delta").load(str(table)).collect()]
    assert sorted(values) == sorted(f"order-{n}".encode() for n in range(10))
