"""`docs/operations.md` run as a reader runs it: its blocks in page order. The spark-submit block
needs a standalone Spark cluster: the cluster tests run it on theirs. The slot listing runs on
the test session's PostgreSQL server with a slot that no reader holds and WAL written after it,
and shows what the page says it shows."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from spark_eos_connect.testing.postgres import PostgresCluster, PostgresDatabase

from .page_order import PageRun
from .readme import REPO

pytestmark = pytest.mark.integration

PAGE = REPO / "docs" / "operations.md"
CLUSTER_TEST = (
    "tests/integration/cluster/test_jobs_on_cluster.py::test_readme_block_submits_to_the_cluster"
)


def test_the_operations_page_runs_in_page_order(
    postgres: PostgresCluster,
    postgres_db: PostgresDatabase,
    unique_name: Callable[[str], str],
) -> None:
    slot = unique_name("forgotten").replace("-", "_")
    with postgres_db.connect() as connection:  # a retired connector's slot, then WAL after it
        connection.execute("SELECT pg_create_logical_replication_slot(%s, 'pgoutput')", (slot,))
        connection.execute("CREATE TABLE orders (id int PRIMARY KEY, item text)")
        connection.execute(
            "INSERT INTO orders SELECT n, repeat('x', 100) FROM generate_series(1, 2000) n"
        )
    page = PageRun(PAGE, postgres=postgres)

    assert page.covered_elsewhere("bash") == CLUSTER_TEST  # make dist, pip, spark-submit
    rows = page.sql_block()  # every slot, whether a reader holds it, the WAL it keeps
    page.finished()

    [(_, active, held)] = [row for row in rows if row[0] == slot]
    assert active is False
    number, unit = held.split()
    assert unit in ("bytes", "kB", "MB") and int(number) > 0, held  # the WAL written since
