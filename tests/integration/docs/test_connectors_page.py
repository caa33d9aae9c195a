"""`docs/connectors/index.md` run as a reader runs it: the two example connectors saved as
module files, the setup block, the session, the countdown into Kafka and the topic into a file
through the sink example, the script form's wait, the stop; on the test session's broker and
Spark. Only the broker's address, names and paths are replaced. The page saves the modules in
the folder Python starts from; the test saves them, under unique names, in another folder on
the Python path of the session's driver and executors (the environment's site-packages, outside
the working tree), and removes them at the end."""

from __future__ import annotations

import importlib
import sysconfig
import uuid
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from spark_eos_connect.testing import wait_for

from .page_order import PageRun
from .readme import REPO

pytestmark = pytest.mark.integration

PAGE = REPO / "docs" / "connectors" / "index.md"
COUNTED = Counter({str(n): 2 for n in range(6)})
"""Two tasks, each from 5 down to 0."""


def test_the_connectors_page_runs_in_page_order(
    spark: Any,
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    read_committed: Callable[..., list[Any]],
    unique_name: Callable[[str], str],
    tmp_path: Path,
) -> None:
    tag, on_path = uuid.uuid4().hex[:10], Path(sysconfig.get_paths()["purelib"])
    source, sink = (
        on_path / f"eosconnect_docs_countdown_{tag}.py",
        on_path / f"eosconnect_docs_lines_{tag}.py",
    )
    topic, lines = topic_factory("countdown"), tmp_path / "countdown.txt"
    page = PageRun(
        PAGE,
        python={
            "127.0.0.1:9092": bootstrap_servers,
            "countdown": topic,  # the source connector's name and its topic
            "countdown.CountdownConnector": f"{source.stem}.CountdownConnector",
            "/tmp/checkpoints/countdown": str(tmp_path / "ck-countdown"),
            "countdown-lines": unique_name("countdown-lines"),
            "lines.LinesConnector": f"{sink.stem}.LinesConnector",
            "/tmp/countdown.txt": str(lines),
            "/tmp/checkpoints/countdown-lines": str(tmp_path / "ck-lines"),
        },
    )
    try:
        page.save_block("python", source)  # "save the source block as countdown.py"
        page.save_block("python", sink)  # "and the sink block as lines.py"
        importlib.invalidate_caches()
        run_the_page(page, spark, lines)
    finally:
        for module in (source, sink):
            module.unlink(missing_ok=True)
            for cached in (module.parent / "__pycache__").glob(f"{module.stem}.*"):
                cached.unlink(missing_ok=True)

    assert Counter(r.value.decode() for r in read_committed(topic)) == COUNTED  # each once


def run_the_page(page: PageRun, spark: Any, lines: Path) -> None:
    """The blocks after the two modules: the setup, the session, the queries, the stop."""
    page.setup_shell()
    # the session is shared: a query of an earlier test that failed would end the page's
    # awaitAnyTermination() at once (as in a notebook that ran such a query before)
    spark.streams.resetTerminated()
    try:
        page.python_block()  # spark: the session's own (a running session is reused)
        page.python_block()  # the countdown into Kafka, the topic into the file
        queries = [page.namespace["countdown"], page.namespace["to_file"]]

        def counted() -> Counter[str]:  # "a moment later /tmp/countdown.txt holds ..."
            for running in queries:
                assert running.exception() is None, running.exception()
            return Counter(lines.read_text().split()) if lines.exists() else Counter()

        wait_for(lambda: counted() == COUNTED, 60, "each task's 5 down to 0 in the file")
        joined = page.python_block_in_background()  # spark.streams.awaitAnyTermination()
        page.python_block()  # stop both
        joined(60)
        page.finished()
    finally:
        for name in ("countdown", "to_file"):
            if name in page.namespace:
                page.namespace[name].stop()

    assert counted() == COUNTED  # each once
