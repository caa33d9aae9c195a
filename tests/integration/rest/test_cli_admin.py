"""`eosconnect connectors|status|stop|pause|resume|offsets ...` from a shell (real broker)."""

from __future__ import annotations

import json
import os
import re
import shlex
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from spark_eos_connect.herder import Herder, WorkerSettings
from spark_eos_connect.protocol.config_records import TargetState

pytestmark = pytest.mark.integration


@pytest.fixture
def eosconnect(
    bootstrap_servers: str, settings: WorkerSettings
) -> Callable[..., subprocess.CompletedProcess[str]]:
    """Runs `eosconnect ARGS` against the `settings` fixture's cluster topics."""

    def run(*args: str, cluster: bool = True) -> subprocess.CompletedProcess[str]:
        options = [
            "--bootstrap-servers",
            bootstrap_servers,
            "--group-id",
            settings.group_id,
            "--config-topic",
            settings.config_topic,
            "--offsets-topic",
            settings.offsets_topic,
            "--status-topic",
            settings.status_topic,
        ]
        command = [sys.executable, "-m", "spark_eos_connect.apps.cli", *args]
        command += options if cluster else []
        env = {k: v for k, v in os.environ.items() if k != "EOSCONNECT_BOOTSTRAP_SERVERS"}
        return subprocess.run(
            command, capture_output=True, text=True, timeout=120, check=False, env=env
        )

    return run


def test_admin_commands_drive_a_connector(
    eosconnect: Callable[..., subprocess.CompletedProcess[str]],
    herder: Herder,
    file_source: Callable[..., str],
) -> None:
    name = file_source()
    listed = eosconnect("connectors")
    assert listed.returncode == 0, listed.stderr
    assert json.loads(listed.stdout) == [name]
    expanded = json.loads(eosconnect("connectors", "--expand", "info").stdout)
    assert expanded[name]["info"]["config"]["connector.class"] == "FileStreamSource"

    assert eosconnect("pause", name).returncode == 0
    assert herder.configs.read_to_end().target_state(name) is TargetState.PAUSED
    stopped = eosconnect("stop", name)
    assert stopped.returncode == 0
    assert json.loads(stopped.stdout) == {
        "name": name,
        "target_state": "STOPPED",
        "connector": {"state": "STOPPED", "worker_id": f"{socket.gethostname()}:eosconnect-herder"},
    }
    status = json.loads(eosconnect("status", name).stdout)
    assert status["connector"]["state"] == "STOPPED"
    assert status["tasks"] == []

    body = {"offsets": [{"partition": {"filename": "/tmp/in.txt"}, "offset": {"position": 3}}]}
    altered = eosconnect("offsets", "alter", name, "--offsets", json.dumps(body))
    assert altered.returncode == 0, altered.stderr
    assert "altered successfully" in json.loads(altered.stdout)["message"]
    assert json.loads(eosconnect("offsets", "get", name).stdout) == body
    reset = eosconnect("offsets", "reset", name)
    assert reset.returncode == 0
    assert json.loads(eosconnect("offsets", "get", name).stdout) == {"offsets": []}

    assert eosconnect("resume", name).returncode == 0
    assert herder.configs.read_to_end().target_state(name) is TargetState.STARTED


def test_refusals_exit_1_with_the_message_on_stderr(
    eosconnect: Callable[..., subprocess.CompletedProcess[str]],
    file_source: Callable[..., str],
) -> None:
    missing = eosconnect("status", "ghost")
    assert missing.returncode == 1
    assert "Connector ghost not found" in missing.stderr
    assert missing.stdout == ""

    name = file_source()
    body = json.dumps({"offsets": [{"partition": {"filename": "f"}, "offset": {"position": 1}}]})
    running = eosconnect("offsets", "alter", name, "--offsets", body)
    assert running.returncode == 1
    assert "STOPPED" in running.stderr
    malformed = eosconnect("offsets", "alter", name, "--offsets", "{not json")
    assert malformed.returncode == 1
    assert "not valid JSON" in malformed.stderr


def test_usage_errors_exit_2(eosconnect: Callable[..., subprocess.CompletedProcess[str]]) -> None:
    assert eosconnect("status").returncode == 2  # no connector name
    assert eosconnect("offsets", "alter", "x").returncode == 2  # neither --offsets nor --file
    no_cluster = eosconnect("connectors", cluster=False)
    assert no_cluster.returncode == 2
    assert "--bootstrap-servers" in no_cluster.stderr
    helped = eosconnect("offsets", "--help", cluster=False)
    assert helped.returncode == 0
    assert "STOPPED" in helped.stdout or "stopped" in helped.stdout


def test_an_unknown_connector_points_to_the_list_of_connectors(
    eosconnect: Callable[..., subprocess.CompletedProcess[str]],
) -> None:
    done = eosconnect("status", "no-such-connector")

    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.strip().endswith(
        "(HTTP 404); eosconnect connectors lists the connectors there are"
    ), done.stderr
    assert "no-such-connector" in done.stderr


def _docs_block(first: str) -> list[str]:
    """The command lines of the fenced bash block of docs/rest-and-cli.md starting `first`."""
    page = (Path(__file__).resolve().parents[3] / "docs" / "rest-and-cli.md").read_text()
    block = re.search(r"```bash\n(" + re.escape(first) + r".*?)```", page, re.DOTALL)
    assert block is not None, f"docs/rest-and-cli.md lost its block starting {first!r}"
    return [line for line in block.group(1).splitlines() if line.strip()]


def test_define_then_start_block_and_the_states_it_shows(
    eosconnect: Callable[..., subprocess.CompletedProcess[str]],
    unique_name: Callable[[str], str],
) -> None:
    """Issue 47 through the CLI: the docs' define-then-start block as written (its connector
    renamed); create and status say no query runs the connector; each action prints the state
    `status` shows; offsets reset is refused until it shows STOPPED."""
    name = unique_name("orders-generator")
    outputs = []
    for line in _docs_block("eosconnect create orders-generator"):
        words = shlex.split(line.replace("orders-generator", name), comments=True)
        done = eosconnect(*words[1:])
        assert done.returncode == 0, (line, done.stderr)
        outputs.append(json.loads(done.stdout))
    created, status = outputs
    assert created["status"] == status["connector"]
    assert status["connector"]["state"] == "UNASSIGNED"
    assert status["connector"]["trace"].startswith(f"No Spark query runs connector {name}")

    paused = eosconnect("pause", name)
    assert paused.returncode == 0, paused.stderr
    answer = json.loads(paused.stdout)
    assert (answer["target_state"], answer["connector"]["state"]) == ("PAUSED", "PAUSED")
    assert json.loads(eosconnect("status", name).stdout)["connector"] == answer["connector"]
    refused = eosconnect("offsets", "reset", name)
    assert refused.returncode == 1
    assert "must be in the STOPPED state" in refused.stderr and "(HTTP 400)" in refused.stderr

    assert json.loads(eosconnect("stop", name).stdout)["connector"]["state"] == "STOPPED"
    assert eosconnect("offsets", "reset", name).returncode == 0
    resumed = json.loads(eosconnect("resume", name).stdout)
    assert (resumed["target_state"], resumed["connector"]["state"]) == ("STARTED", "UNASSIGNED")
