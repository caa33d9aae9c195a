"""`docs/rest-and-cli.md` run as a reader runs it, block after block: `eosconnect rest` started
by the page's own line (on a free port), the connector defined with `eosconnect create` and
shown UNASSIGNED, the Getting started query started for it in the test session's Spark, the
curl block and the admin commands block run line by line in a shell of the project's
environment, the script form's wait, the stop, and the page's `eosconnect status` once the
query has ended. Only the broker's address, the port, names and paths are replaced."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from spark_eos_connect.connectors.generator import parse_generated_value
from spark_eos_connect.jvm.broker import free_port
from spark_eos_connect.testing import wait_for

from .page_order import PageRun, ShellLine
from .readme import REPO, snippets

pytestmark = pytest.mark.integration

PAGE = REPO / "docs" / "rest-and-cli.md"
NO_QUERY = "No Spark query runs connector"
PATCHED = 5000
"""The position the page's PATCH body gives task 0."""


def positions(records: list[Any]) -> dict[int, list[int]]:
    """Generator positions per task, in topic order."""
    by_task: dict[int, list[int]] = {}
    for record in records:
        task, position = parse_generated_value(record.value)
        by_task.setdefault(task, []).append(position)
    return by_task


def test_the_rest_and_cli_page_runs_in_page_order(
    spark: Any,
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    read_committed: Callable[..., list[Any]],
    unique_name: Callable[[str], str],
    tmp_path: Path,
) -> None:
    name, topic, port = unique_name("orders-generator"), topic_factory("orders"), free_port()
    api = f"http://127.0.0.1:{port}"
    page = PageRun(
        PAGE,
        python={
            "127.0.0.1:9092": bootstrap_servers,
            "orders-generator": name,
            "orders": topic,
            "/tmp/checkpoints/orders": str(tmp_path / "ck"),
        },
        shell={
            "127.0.0.1:9092": bootstrap_servers,
            "8083": str(port),
            "orders-generator": name,
            "orders": topic,
        },
        cwd=tmp_path,
    )

    def connector_state() -> str:
        answer = httpx.get(f"{api}/connectors/{name}/status", timeout=10)
        return str(answer.json()["connector"]["state"]) if answer.status_code == 200 else ""

    def written() -> dict[int, list[int]]:
        return positions(read_committed(topic, settled=False))

    page.setup_shell()
    try:
        [_, started] = page.shell_block()  # the admin commands' broker, then eosconnect rest &
        server = started.background
        assert server is not None

        def answering() -> bool:
            assert server.poll() is None, (tmp_path / "background-0.log").read_text()
            try:
                return httpx.get(f"{api}/", timeout=2).status_code == 200
            except httpx.TransportError:
                return False

        wait_for(answering, 60, "eosconnect rest to answer")

        created, status = page.shell_block()  # define: create, then status
        assert (created.returncode, status.returncode) == (0, 0), created.stderr + status.stderr
        shown = json.loads(status.stdout)["connector"]
        assert json.loads(created.stdout)["status"] == shown  # the 201 body says it too
        assert shown["state"] == "UNASSIGNED"
        assert shown["trace"].startswith(f"{NO_QUERY} {name}")

        page.python_block()  # then start: the Getting started query with the connector's name
        query = page.namespace["query"]

        def running() -> bool:  # "RUNNING within seconds", both tasks writing
            assert query.exception() is None, query.exception()
            return connector_state() == "RUNNING" and len(written()) == 2

        wait_for(running, 60, "the connector RUNNING and records of both tasks")

        offsets_before: list[Any] = []

        def curl_checks(ran: ShellLine) -> None:
            assert ran.returncode == 0, (ran.line, ran.stderr)
            assert ran.status == int(ran.comment.split(":")[0]), (ran.line, ran.stdout)
            if "expand=status" in ran.line:
                assert json.loads(ran.stdout)[name]["status"]["connector"]["state"] == "RUNNING"
            elif ran.line.endswith("/offsets") and " -X " not in ran.line:  # GET
                offsets_before[:] = json.loads(ran.stdout)["offsets"]
            elif ran.line.endswith("/resume"):  # "the query continues from 5000"
                wait_for(lambda: PATCHED in written().get(0, []), 60, "task 0 from 5000")

        page.shell_block(after=curl_checks)
        assert sorted(o["partition"]["task"] for o in offsets_before) == [0, 1]
        by_task = positions(read_committed(topic))
        for task, task_positions in by_task.items():
            stored = next(o for o in offsets_before if o["partition"]["task"] == task)
            end = stored["offset"]["position"]
            assert task_positions[:end] == list(range(end)), task  # each once, in order
        resumed = by_task[0][by_task[0].index(PATCHED) :]
        assert resumed == list(range(PATCHED, PATCHED + len(resumed)))
        assert httpx.get(f"{api}/connectors/{name}/offsets").json() == {"offsets": []}  # reset

        outputs: dict[str, Any] = {}

        def cli_checks(ran: ShellLine) -> None:
            assert ran.returncode == 0, (ran.line, ran.stderr)
            if ran.line.startswith("eosconnect "):
                outputs[" ".join(ran.line.split()[1:3])] = json.loads(ran.stdout)
            if ran.line.startswith("eosconnect offsets alter"):
                offsets = httpx.get(f"{api}/connectors/{name}/offsets").json()["offsets"]
                assert offsets == [
                    {"partition": {"generator": name, "task": 0}, "offset": {"position": PATCHED}}
                ]

        page.shell_block(after=cli_checks)  # the same with the admin commands
        assert name in outputs["connectors --expand"]  # (keyed by the page's own words)
        assert outputs["status orders-generator"]["connector"]["state"] == "STOPPED"
        assert outputs["pause orders-generator"]["target_state"] == "PAUSED"
        assert outputs["stop orders-generator"]["target_state"] == "STOPPED"
        assert outputs["offsets get"] == {"offsets": []}  # the curl block's reset
        assert outputs["resume orders-generator"]["target_state"] == "STARTED"
        assert httpx.get(f"{api}/connectors/{name}/offsets").json() == {"offsets": []}

        joined = page.python_block_in_background()  # query.awaitTermination()
        page.python_block()  # query.stop()
        joined(60)

        [inline] = [s for s in snippets(PAGE.read_text()) if s.key == "eosconnect status"]

        def unassigned() -> bool:  # "once the query has ended ... UNASSIGNED again"
            [ran] = page.shell_text(inline.text)
            assert ran.returncode == 0, ran.stderr
            return bool(json.loads(ran.stdout)["connector"]["state"] == "UNASSIGNED")

        wait_for(unassigned, 30, "the connector UNASSIGNED once the query ended")
        page.finished()
    finally:
        if "query" in page.namespace:
            page.namespace["query"].stop()
        page.close()
