"""Restarts (KIP-745 answers, KIP-618's 500/404/409 checks) through the REST API (real broker)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from fastapi.testclient import TestClient

from spark_eos_connect.herder import Herder, WorkerSettings
from spark_eos_connect.kafka.producers import transactional_producer
from spark_eos_connect.protocol.config_records import RestartRequest
from spark_eos_connect.rest import create_app

pytestmark = pytest.mark.integration


def test_connector_only_restart_answers_204_and_writes_the_request(
    client: TestClient, herder: Herder, file_source: Callable[..., str]
) -> None:
    name = file_source()
    response = client.post(f"/connectors/{name}/restart")
    assert response.status_code == 204
    assert response.content == b""
    assert herder.configs.read_to_end().restart_requests[name] == RestartRequest(name, False, False)


def test_restart_with_tasks_answers_202_with_what_will_restart(
    client: TestClient,
    herder: Herder,
    file_source: Callable[..., str],
    run_tasks: Callable[..., None],
) -> None:
    name = file_source()
    run_tasks(name, 2, states=["RUNNING", "FAILED"])

    only_failed = client.post(
        f"/connectors/{name}/restart", params={"includeTasks": "true", "onlyFailed": "true"}
    )
    assert only_failed.status_code == 202
    assert only_failed.json() == {
        "name": name,
        "connector": {"state": "RUNNING", "worker_id": "driver-1"},
        "tasks": [
            {"id": 0, "state": "RUNNING", "worker_id": "driver-1"},
            {"id": 1, "state": "RESTARTING", "worker_id": "driver-1"},
        ],
        "type": "source",
    }
    everything = client.post(f"/connectors/{name}/restart", params={"includeTasks": "true"})
    assert everything.status_code == 202
    body = everything.json()
    assert body["connector"]["state"] == "RESTARTING"
    assert [t["state"] for t in body["tasks"]] == ["RESTARTING", "RESTARTING"]
    request = herder.configs.read_to_end().restart_requests[name]
    assert request == RestartRequest(name, include_tasks=True, only_failed=False)


def test_task_restart_404_for_a_task_that_does_not_exist(
    client: TestClient, file_source: Callable[..., str], run_tasks: Callable[..., None]
) -> None:
    name = file_source()
    run_tasks(name, 1)
    assert client.post(f"/connectors/{name}/tasks/0/restart").status_code == 204
    gone = client.post(f"/connectors/{name}/tasks/1/restart")
    assert gone.status_code == 404
    assert gone.json()["message"] == f"Task {name}-1 not found"
    client.put(f"/connectors/{name}/stop")  # a stopped connector has no tasks at all
    assert client.post(f"/connectors/{name}/tasks/0/restart").status_code == 404


def test_restart_409_while_task_configs_are_inconsistent(
    client: TestClient,
    kafka_config: dict[str, Any],
    settings: WorkerSettings,
    file_source: Callable[..., str],
) -> None:
    name = file_source()
    # A commit naming two tasks after only one task config: Connect marks this inconsistent.
    writer = transactional_producer(kafka_config, f"raw-{settings.config_topic}")
    writer.begin_transaction()
    writer.produce(settings.config_topic, b'{"properties":{}}', f"task-{name}-0".encode())
    writer.produce(settings.config_topic, b'{"tasks":2}', f"commit-{name}".encode())
    writer.commit_transaction(30)
    response = client.post(f"/connectors/{name}/restart")
    assert response.status_code == 409
    assert "incomplete" in response.json()["message"]


def test_restart_409_while_fencing_is_pending_then_accepted(
    client: TestClient,
    herder: Herder,
    file_source: Callable[..., str],
    run_tasks: Callable[..., None],
) -> None:
    name = file_source()
    run_tasks(name, 2, fenced=False)  # new task configs, no task-count record after them yet
    pending = client.post(f"/connectors/{name}/restart", params={"includeTasks": "true"})
    assert pending.status_code == 409
    assert "task-count record" in pending.json()["message"]

    leader = herder.configs.leader()
    leader.put_task_count(name, 2)
    assert client.post(f"/connectors/{name}/restart").status_code == 204


def test_restart_500_when_the_config_topic_cannot_be_read_to_its_end(
    kafka_config: dict[str, Any], settings: WorkerSettings, file_source: Callable[..., str]
) -> None:
    name = file_source()
    stuck = transactional_producer(kafka_config, f"stuck-{settings.config_topic}")
    stuck.begin_transaction()
    stuck.produce(settings.config_topic, b'{"tasks":0}', f"commit-{name}".encode(), partition=0)
    stuck.flush()
    impatient = Herder(kafka_config, settings, timeout_s=3.0)
    try:
        response = TestClient(create_app(impatient)).post(f"/connectors/{name}/restart")
        assert response.status_code == 500
        assert response.json()["error_code"] == 500
        assert settings.config_topic in response.json()["message"]
        assert "to its end" in response.json()["message"]
    finally:
        stuck.abort_transaction(30)
        impatient.close()
    assert name not in impatient.configs.read_to_end().restart_requests
