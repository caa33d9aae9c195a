"""Issue 47: a connector that no Spark query runs, driven through the herder and the CLI on the
in-memory twins. Created, it says in its status and in the 201 body that no query runs it;
pause, resume and stop move the status it shows; the offsets change exactly when the status is
STOPPED (GET answers in every state, as in Connect); the CLI prints the same states and
refusals. The real-broker version is in tests/integration/rest/test_connector_states_api.py."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from spark_eos_connect.apps import cli
from spark_eos_connect.herder import BadRequestError, Herder
from spark_eos_connect.protocol.config_records import TargetState
from spark_eos_connect.protocol.status_records import StatusState
from tests.unit.herder.memory_cluster import SINK, SOURCE, STOP_FIRST, WORKER, Cluster

NO_QUERY = "No Spark query runs connector"
EXPECTED = {"pause": "PAUSED", "resume": "UNASSIGNED", "stop": "STOPPED"}
"""The connector state each action leaves a connector no query runs in."""


def _connector(herder: Herder, name: str) -> dict[str, Any]:
    return dict(herder.status(name)["connector"])


def _source_body(position: int) -> dict[str, Any]:
    return {"offsets": [{"partition": {"f": "a"}, "offset": {"pos": position}}]}


def _sink_body(position: int) -> dict[str, Any]:
    partition = {"kafka_topic": "in", "kafka_partition": 0}
    return {"offsets": [{"partition": partition, "offset": {"kafka_offset": position}}]}


def _offsets_changeable(herder: Herder, name: str, body: dict[str, Any]) -> bool:
    """Whether PATCH and DELETE of the offsets are accepted (both or neither); GET always is."""
    herder.offsets(name)
    try:
        herder.alter_offsets(name, body)
    except BadRequestError as refused:
        assert STOP_FIRST in str(refused)
        with pytest.raises(BadRequestError, match=STOP_FIRST):
            herder.reset_offsets(name)
        return False
    herder.reset_offsets(name)
    return True


def test_a_connector_created_without_a_query_says_so_in_its_status_and_201_body(
    cluster: Cluster,
) -> None:
    herder = cluster.herder
    created = herder.create("src", {"connector.class": SOURCE})

    connector = _connector(herder, "src")
    assert created["status"] == connector
    assert (connector["state"], connector["worker_id"]) == ("UNASSIGNED", WORKER)
    assert connector["trace"].startswith(f"{NO_QUERY} src")
    assert '.option("name", "src")' in connector["trace"]
    assert cluster.driver_statuses.read_to_end().connector_status("src") is not None  # written


@pytest.mark.parametrize(
    ("initial", "state", "noted"),
    [("RUNNING", "UNASSIGNED", True), ("PAUSED", "PAUSED", True), ("STOPPED", "STOPPED", False)],
)
def test_a_connector_created_in_a_state_shows_that_state(
    cluster: Cluster, initial: str, state: str, noted: bool
) -> None:
    created = cluster.herder.create("src", {"connector.class": SOURCE}, initial_state=initial)

    assert created["status"] == _connector(cluster.herder, "src")
    assert created["status"]["state"] == state
    assert ("trace" in created["status"]) is noted


def test_put_config_creating_a_connector_says_so_too(cluster: Cluster) -> None:
    created, info = cluster.herder.put_config("src", {"connector.class": SOURCE})
    replaced, again = cluster.herder.put_config("src", {"connector.class": SOURCE, "a": "b"})

    assert created and info["status"]["trace"].startswith(f"{NO_QUERY} src")
    assert not replaced and "status" not in again  # an update answers Connect's ConnectorInfo


@pytest.mark.parametrize("kind", ["source", "sink"])
def test_each_action_without_a_query_moves_the_status_and_offsets_follow_it(
    cluster: Cluster, kind: str
) -> None:
    herder = cluster.herder
    if kind == "source":
        herder.create("c", {"connector.class": SOURCE})
        body = _source_body(7)
    else:
        herder.create("c", {"connector.class": SINK, "topics": "in"})
        body = _sink_body(3)
    assert not _offsets_changeable(herder, "c", body)
    actions: dict[str, Callable[[str], None]] = {
        "pause": herder.pause,
        "resume": herder.resume,
        "stop": herder.stop,
    }

    for action in ("pause", "resume", "stop", "resume", "stop", "pause", "stop", "stop"):
        actions[action]("c")
        connector = _connector(herder, "c")
        assert connector["state"] == EXPECTED[action], action
        assert ("trace" in connector) is (action != "stop"), action
        assert _offsets_changeable(herder, "c", body) is (action == "stop"), action


def test_a_query_that_ended_leaves_unassigned_saying_why_and_actions_move_it(
    cluster: Cluster,
) -> None:
    herder = cluster.herder
    herder.create("src", {"connector.class": SOURCE})
    cluster.run_tasks("src", 1)
    cluster.driver_statuses.put_connector_status("src", StatusState.UNASSIGNED, "driver-1", 1)

    ended = _connector(herder, "src")
    assert (ended["state"], ended["worker_id"]) == ("UNASSIGNED", "driver-1")
    assert ended["trace"].startswith(f"{NO_QUERY} src")
    herder.pause("src")
    assert _connector(herder, "src")["state"] == "PAUSED"


def test_a_running_query_reports_the_states_itself(cluster: Cluster) -> None:
    herder = cluster.herder
    herder.create("src", {"connector.class": SOURCE})
    cluster.run_tasks("src", 1)  # driver-1 reports RUNNING

    herder.pause("src")  # the query reports PAUSED once it sees the target state

    assert cluster.snapshot().target_state("src") is TargetState.PAUSED
    assert _connector(herder, "src") == {"state": "RUNNING", "worker_id": "driver-1"}


def test_a_failed_connector_stays_failed_until_stopped_as_in_connect(cluster: Cluster) -> None:
    herder = cluster.herder
    herder.create("src", {"connector.class": SOURCE})
    cluster.run_tasks("src", 1)
    cluster.driver_statuses.put_connector_status("src", "FAILED", "driver-1", 1, "boom")

    herder.pause("src")
    herder.resume("src")
    assert _connector(herder, "src") == {
        "state": "FAILED",
        "worker_id": "driver-1",
        "trace": "boom",
    }
    herder.stop("src")
    assert _connector(herder, "src")["state"] == "STOPPED"


# --- the same through the CLI ------------------------------------------------------------------


@pytest.fixture
def eosconnect(
    cluster: Cluster, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Callable[..., tuple[int, Any, str]]:
    """Runs `eosconnect ARGS` on the cluster's herder: (exit code, JSON printed, stderr)."""
    monkeypatch.setattr(cli, "_herder", lambda args: cluster.herder)

    def run(*args: str) -> tuple[int, Any, str]:
        code = cli.main(list(args))
        out, err = capsys.readouterr()
        return code, json.loads(out) if out else None, err

    return run


def test_the_cli_creates_and_answers_each_action_with_the_state_status_shows(
    cluster: Cluster, eosconnect: Callable[..., tuple[int, Any, str]]
) -> None:
    config = json.dumps({"connector.class": SOURCE})
    code, created, _ = eosconnect("create", "src", "--config", config)
    assert code == 0
    assert created == cluster.herder.info("src") | {"status": created["status"]}
    assert created["status"] == _connector(cluster.herder, "src")
    assert created["status"]["trace"].startswith(f"{NO_QUERY} src")
    targets = {"pause": "PAUSED", "resume": "STARTED", "stop": "STOPPED"}

    for action in ("pause", "resume", "stop", "resume", "stop", "pause"):
        code, answer, _ = eosconnect(action, "src")
        assert code == 0
        assert answer["target_state"] == targets[action]
        assert answer["connector"]["state"] == EXPECTED[action], action
        assert eosconnect("status", "src")[1]["connector"] == answer["connector"]
        body = json.dumps(_source_body(5))
        altered = eosconnect("offsets", "alter", "src", "--offsets", body)
        reset = eosconnect("offsets", "reset", "src")
        assert eosconnect("offsets", "get", "src")[0] == 0
        expected = 0 if action == "stop" else 1
        assert (altered[0], reset[0]) == (expected, expected), action
        if expected:
            assert STOP_FIRST in altered[2] and "(HTTP 400)" in reset[2]


def test_the_cli_refuses_as_rest_does(eosconnect: Callable[..., tuple[int, Any, str]]) -> None:
    config = json.dumps({"connector.class": SOURCE})
    assert eosconnect("create", "src", "--config", config)[0] == 0

    code, _, err = eosconnect("create", "src", "--config", config)
    assert code == 1 and "Connector src already exists (HTTP 409)" in err
    code, _, err = eosconnect("create", "x", "--config", "{", "--initial-state", "PAUSED")
    assert code == 1 and "The config is not valid JSON" in err
    code, _, err = eosconnect("pause", "nope")
    assert code == 1 and "Connector nope not found (HTTP 404)" in err
    code, created, _ = eosconnect("create", "s", "--config", config, "--initial-state", "STOPPED")
    assert created["status"] == {"state": "STOPPED", "worker_id": WORKER}
