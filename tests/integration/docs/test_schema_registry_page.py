"""`docs/converters/schema-registry.md` run as a reader runs it: every Python block in page order
in one namespace (the source options, the test double, then the end-to-end example: a file into
Kafka as Avro and on into Delta, the look at the table, the stop), on the test broker and Spark;
only paths and names are replaced."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from delta.tables import DeltaTable

from spark_eos_connect.testing import wait_for

from .page_order import PageRun

pytestmark = pytest.mark.integration

PAGE = Path(__file__).resolve().parents[3] / "docs" / "converters" / "schema-registry.md"


def test_the_schema_registry_page_runs_in_page_order(
    spark: Any,
    bootstrap_servers: str,
    unique_name: Callable[[str], str],
    tmp_path: Path,
) -> None:
    table = tmp_path / "lines"
    page = PageRun(
        PAGE,
        python={
            "/tmp/lines.txt": str(tmp_path / "lines.txt"),
            "lines": unique_name("lines"),
            "127.0.0.1:9092": bootstrap_servers,
            "lines-to-kafka": unique_name("lines-to-kafka"),
            "/tmp/checkpoints/lines-to-kafka": str(tmp_path / "ck-kafka"),
            "lines-to-delta": unique_name("lines-to-delta"),
            "/tmp/tables/lines": str(table),
            "/tmp/checkpoints/lines-to-delta": str(tmp_path / "ck-delta"),
        },
    )
    page.python_block()  # a source's Avro options (a dict)
    page.python_block()  # the test double serving a registry URL
    page.setup_shell()
    page.python_block()  # spark: the session's own (a running session is reused)
    try:
        page.python_block()  # the registry and the file
        page.python_block()  # file -> Kafka as Avro
        page.python_block()  # Kafka -> Delta, columns from the schema
        queries = [page.namespace["query"], page.namespace["to_delta"]]

        def rows() -> int:
            for running in queries:
                assert running.exception() is None, running.exception()
            if not DeltaTable.isDeltaTable(spark, str(table)):
                return 0
            return int(spark.read.format("delta").load(str(table)).count())

        wait_for(lambda: rows() >= 2, 120, "the file's two lines in Delta")  # "a moment later"
        shown = page.python_block()  # .show() of the table
        assert "hello" in shown and "world" in shown, shown
        page.python_block()  # stop the queries and the registry
        page.finished()
        assert page.namespace["registry"].requests  # the converters used it
    finally:
        for name in ("query", "to_delta"):
            if name in page.namespace:
                page.namespace[name].stop()
        if "registry" in page.namespace:
            page.namespace["registry"].stop()
