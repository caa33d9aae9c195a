"""Stop, pause, resume and delete (KIP-875's STOPPED state) through the REST API (real broker)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from fastapi.testclient import TestClient

from spark_eos_connect.herder import Herder
from spark_eos_connect.protocol.config_records import TargetState
from spark_eos_connect.storage.config_store import LeaderFencedError

pytestmark = pytest.mark.integration


def _config_records(read_committed: Callable[..., list[Any]], herder: Herder) -> list[Any]:
    return [(r.key.decode(), r.value) for r in read_committed(herder.settings.config_topic)]


def test_stop_is_idempotent_and_leaves_no_tasks(
    client: TestClient,
    herder: Herder,
    file_source: Callable[..., str],
    run_tasks: Callable[..., None],
    read_committed: Callable[..., list[Any]],
) -> None:
    name = file_source()
    run_tasks(name, 2)
    running = client.get(f"/connectors/{name}/status").json()
    assert [t["state"] for t in running["tasks"]] == ["RUNNING", "RUNNING"]
    assert len(client.get(f"/connectors/{name}/tasks").json()) == 2

    assert client.put(f"/connectors/{name}/stop").status_code == 204
    assert client.put(f"/connectors/{name}/stop").status_code == 204  # idempotent

    tail = _config_records(read_committed, herder)[-2:]
    assert tail == [
        (f"commit-{name}", b'{"tasks":0}'),
        (f"target-state-{name}", b'{"state":"PAUSED","state.v2":"STOPPED"}'),
    ]
    status = client.get(f"/connectors/{name}/status").json()
    assert status["connector"] == {"state": "STOPPED", "worker_id": "test-worker"}
    assert status["tasks"] == []
    assert client.get(f"/connectors/{name}/tasks").json() == []
    assert client.get(f"/connectors/{name}").json()["tasks"] == []
    missing = client.get(f"/connectors/{name}/tasks/0/status")
    assert missing.status_code == 404
    assert missing.json()["message"] == f"No status found for task {name}-0"


def test_pause_a_stopped_connector(
    client: TestClient,
    herder: Herder,
    file_source: Callable[..., str],
    run_tasks: Callable[..., None],
) -> None:
    name = file_source()
    run_tasks(name, 1)
    client.put(f"/connectors/{name}/stop")
    assert client.put(f"/connectors/{name}/pause").status_code == 202
    snapshot = herder.configs.read_to_end()
    assert snapshot.target_state(name) is TargetState.PAUSED
    assert snapshot.task_configs(name) == []
    assert client.get(f"/connectors/{name}/status").json()["tasks"] == []


def test_resume_a_stopped_connector_writes_started(
    client: TestClient,
    herder: Herder,
    file_source: Callable[..., str],
    read_committed: Callable[..., list[Any]],
) -> None:
    name = file_source()
    client.put(f"/connectors/{name}/stop")
    assert client.put(f"/connectors/{name}/resume").status_code == 202
    assert _config_records(read_committed, herder)[-1] == (
        f"target-state-{name}",
        b'{"state":"STARTED","state.v2":"STARTED"}',
    )
    assert herder.configs.read_to_end().target_state(name) is TargetState.STARTED


def test_delete_a_stopped_connector(
    client: TestClient,
    herder: Herder,
    file_source: Callable[..., str],
    run_tasks: Callable[..., None],
    read_committed: Callable[..., list[Any]],
) -> None:
    name = file_source()
    run_tasks(name, 1)
    client.put(f"/connectors/{name}/stop")
    assert client.delete(f"/connectors/{name}").status_code == 204

    assert client.get(f"/connectors/{name}").status_code == 404
    assert name not in client.get("/connectors").json()
    assert _config_records(read_committed, herder)[-2:] == [
        (f"connector-{name}", None),
        (f"target-state-{name}", None),
    ]
    statuses = herder.statuses.read_to_end()
    assert statuses.connector_status(name) is None
    assert statuses.task_statuses(name) == {}


def test_pause_and_resume_a_running_connector(
    client: TestClient, herder: Herder, file_source: Callable[..., str]
) -> None:
    name = file_source()
    assert client.put(f"/connectors/{name}/pause").status_code == 202
    assert herder.configs.read_to_end().target_state(name) is TargetState.PAUSED
    assert client.put(f"/connectors/{name}/resume").status_code == 202
    assert herder.configs.read_to_end().target_state(name) is TargetState.STARTED


def test_herder_writes_survive_a_newer_leader(
    client: TestClient, herder: Herder, file_source: Callable[..., str]
) -> None:
    """Another leader (e.g. a driver starting a generation) fences the herder's producer; the
    herder reads the config topic to its end again and writes with a new leader."""
    name = file_source()
    other = herder.configs.leader()
    other.put_target_state(name, "PAUSED")
    assert client.put(f"/connectors/{name}/resume").status_code == 202
    snapshot = herder.configs.read_to_end()
    assert snapshot.target_state(name) is TargetState.STARTED
    assert snapshot.skipped == 0
    assert other.fenced is False  # it only learns on its next write
    with pytest.raises(LeaderFencedError):
        other.put_target_state(name, "PAUSED")


def test_a_connector_no_query_runs_shows_each_action_in_its_status(
    client: TestClient, unique_name: Callable[[str], str]
) -> None:
    """Issue 47: created through REST with no query, the connector says so (status and 201
    body); pause, resume and stop move the status it shows; PATCH and DELETE of the offsets
    are accepted exactly when it shows STOPPED, GET always."""
    name = unique_name("src")
    config = {"connector.class": "FileStreamSource", "file": "/tmp/in.txt", "topic": "t"}
    created = client.post("/connectors", json={"name": name, "config": config})
    assert created.status_code == 201, created.text
    connector = client.get(f"/connectors/{name}/status").json()["connector"]
    assert created.json()["status"] == connector
    assert connector["state"] == "UNASSIGNED"
    assert connector["trace"].startswith(f"No Spark query runs connector {name}")
    offsets = f"/connectors/{name}/offsets"
    body = {"offsets": [{"partition": {"filename": "/tmp/in.txt"}, "offset": {"position": 3}}]}

    for action, state, method in [
        ("pause", "PAUSED", "put"),
        ("resume", "UNASSIGNED", "put"),
        ("stop", "STOPPED", "put"),
        ("resume", "UNASSIGNED", "put"),
        ("stop", "STOPPED", "put"),
        ("pause", "PAUSED", "put"),
    ]:
        answered = getattr(client, method)(f"/connectors/{name}/{action}")
        assert answered.status_code == (204 if action == "stop" else 202)
        shown = client.get(f"/connectors/{name}/status").json()["connector"]
        assert shown["state"] == state, action
        assert ("trace" in shown) is (state != "STOPPED"), action
        expected = 200 if state == "STOPPED" else 400
        patched, deleted = client.patch(offsets, json=body), client.delete(offsets)
        assert (patched.status_code, deleted.status_code) == (expected, expected), action
        assert client.get(offsets).status_code == 200
        if expected == 400:
            assert patched.json()["message"].startswith("Connectors must be in the STOPPED state")
