"""Fixtures for the REST API and herder tests: a herder on fresh internal topics, its app, and
helpers that play a running driver (task configs, task-count record, statuses)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from spark_eos_connect.herder import Herder, WorkerSettings
from spark_eos_connect.rest import create_app

OFFSETS_PARTITIONS = 5


@pytest.fixture
def settings(unique_name: Callable[[str], str]) -> WorkerSettings:
    """Worker settings with a fresh group id and fresh internal topics."""
    return WorkerSettings(
        group_id=unique_name("group"),
        config_topic=unique_name("configs"),
        offsets_topic=unique_name("offsets"),
        status_topic=unique_name("status"),
        offsets_partitions=OFFSETS_PARTITIONS,
        worker_id="test-worker",
    )


@pytest.fixture
def herder(kafka_config: dict[str, Any], settings: WorkerSettings) -> Iterator[Herder]:
    """A started herder (config and status topics created)."""
    cluster = Herder(kafka_config, settings, timeout_s=30.0).start()
    try:
        yield cluster
    finally:
        cluster.close()


@pytest.fixture
def client(herder: Herder) -> TestClient:
    """The REST API over `herder`."""
    return TestClient(create_app(herder))


@pytest.fixture
def file_source(client: TestClient, unique_name: Callable[[str], str]) -> Callable[..., str]:
    """Creates a FileStreamSource connector through the API; returns its name."""

    def create(**extra: str) -> str:
        name = unique_name("src")
        config = {"connector.class": "FileStreamSource", "file": "/tmp/in.txt", "topic": "t"}
        response = client.post("/connectors", json={"name": name, "config": {**config, **extra}})
        assert response.status_code == 201, response.text
        return name

    return create


@pytest.fixture
def run_tasks(herder: Herder) -> Callable[..., None]:
    """Plays the driver of a running connector: task configs, task-count record, statuses."""

    def run(name: str, tasks: int, states: list[str] | None = None, fenced: bool = True) -> None:
        leader = herder.configs.leader()  # a driver claims leadership (fencing the herder's)
        leader.put_task_configs(name, [{"task.id": str(n)} for n in range(tasks)])
        if fenced:
            leader.put_task_count(name, tasks)
        leader.close()
        herder.statuses.put_connector_status(name, "RUNNING", "driver-1", 1)
        for task, state in enumerate(states or ["RUNNING"] * tasks):
            herder.statuses.put_task_status(name, task, state, "driver-1", 1)

    return run
