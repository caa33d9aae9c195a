"""`docs/getting-started.md` run as a reader runs it, block after block: the setup block's broker
command started for real (on a free port, then stopped), and the Python blocks in one namespace
on the test session's broker and Spark (the quickstart, the script form's wait, the stop)."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from spark_eos_connect.connectors.generator import parse_generated_value
from spark_eos_connect.jvm.broker import free_port
from spark_eos_connect.testing import wait_for

from .page_order import SETUP_BLOCK, PageRun
from .readme import REPO, covering_test, snippets

pytestmark = pytest.mark.integration

PAGE = REPO / "docs" / "getting-started.md"


def test_the_setup_block_starts_a_broker_that_answers(tmp_path: Path) -> None:
    """The setup block as a shell runs it (`wait` added so that the test owns the broker it
    backgrounds), on a free port instead of 9092."""
    port = free_port()
    script = SETUP_BLOCK.replace("--port 9092", f"--port {port}") + "wait\n"
    log = tmp_path / "broker.log"
    with log.open("w") as out:
        shell = subprocess.Popen(
            ["bash", "-c", script],
            cwd=REPO,
            stdout=out,
            stderr=subprocess.STDOUT,
            env={k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"},
            start_new_session=True,
        )
    try:

        def answering() -> bool:
            assert shell.poll() is None, log.read_text()[-3000:]
            return f"bootstrap.servers=127.0.0.1:{port}" in log.read_text()

        wait_for(answering, 120, "the broker's bootstrap.servers line")
    finally:
        os.killpg(shell.pid, signal.SIGTERM)
        shell.wait(60)


def positions(records: list[Any]) -> dict[int, list[int]]:
    """Generator positions per task, in topic order."""
    by_task: dict[int, list[int]] = {}
    for record in records:
        task, position = parse_generated_value(record.value)
        by_task.setdefault(task, []).append(position)
    return by_task


def test_the_getting_started_page_runs_in_page_order(
    spark: Any,
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    read_committed: Callable[..., list[Any]],
    unique_name: Callable[[str], str],
    tmp_path: Path,
) -> None:
    topic = topic_factory("orders")
    page = PageRun(
        PAGE,
        python={
            "127.0.0.1:9092": bootstrap_servers,
            "orders-generator": unique_name("orders-generator"),
            "orders": topic,
            "/tmp/checkpoints/orders": str(tmp_path / "ck"),
        },
    )
    make_block = page.blocks[0]
    assert covering_test(snippets(f"```bash\n{make_block.text}```\n")[0]), make_block.text
    page.position += 1  # `make demo` and `make test`: CI runs them
    page.setup_shell()  # run for real by the test above
    try:
        page.python_block()  # the quickstart: spark, then the query
        query = page.namespace["query"]

        def both_tasks() -> bool:
            assert query.exception() is None, query.exception()
            return len(positions(read_committed(topic, settled=False))) == 2

        wait_for(both_tasks, 60, "records of both tasks")
        joined = page.python_block_in_background()  # query.awaitTermination()
        page.python_block()  # query.stop()
        joined(60)
        page.finished()
    finally:
        if "query" in page.namespace:
            page.namespace["query"].stop()

    written = positions(read_committed(topic))
    assert sorted(written) == [0, 1]  # tasks.max=2
    for task_positions in written.values():
        assert task_positions == list(range(len(task_positions)))  # each record once, in order
