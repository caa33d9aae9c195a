"""KIP-875's failure cases with a driver running the connector and the REST API in front: a FAILED
connector can be stopped, a connector that fails while stopping ends STOPPED, and one that failed
both before and during its shutdown can be resumed (or restarted) and continues exactly from its
committed offsets. The driver is a `SourceCoordinator` in this process; its tasks run in-process."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from spark_eos_connect.connectors.generator import parse_generated_value
from spark_eos_connect.source.config import parse_source_pipeline
from spark_eos_connect.source.coordinator import ConnectorFailedError, SourceCoordinator
from spark_eos_connect.source.task_loop import run_task_once
from spark_eos_connect.testing import wait_for

pytestmark = pytest.mark.integration

FAULTY = "spark_eos_connect.testing.FaultyGeneratorConnector"
PER_BATCH = 40


@pytest.fixture
def rest(default_rest_api: TestClient) -> TestClient:
    return default_rest_api


class Driver:
    """A faulty generator connector led by an in-process coordinator; switches are files."""

    def __init__(self, bootstrap: str, topic: str, name: str, faults: Path) -> None:
        self.bootstrap, self.topic, self.name, self.faults = bootstrap, topic, name, faults
        self.coordinator: SourceCoordinator | None = None

    def start(self) -> SourceCoordinator:
        options = {
            "name": self.name,
            "connector.class": FAULTY,
            "faults.dir": str(self.faults),
            "topic": self.topic,
            "tasks.max": "1",
            "maxRecordsPerTrigger": str(PER_BATCH),
            "records.per.poll": str(PER_BATCH),
            "kafka.bootstrap.servers": self.bootstrap,
        }
        self.coordinator = SourceCoordinator.open(parse_source_pipeline(options))
        return self.coordinator

    def batch(self) -> int:
        """Plan and run one micro-batch; the records it committed."""
        assert self.coordinator is not None
        written = 0
        for plan in self.coordinator.plan():
            written += run_task_once({"bootstrap.servers": self.bootstrap}, plan).records
        return written

    def switch(self, name: str, on: bool = True) -> None:
        path = self.faults / name
        path.touch() if on else path.unlink()

    def refresh(self) -> None:
        assert self.coordinator is not None
        self.coordinator.refresh_target_state(force=True)

    def events(self) -> list[str]:
        return (self.faults / "lifecycle.log").read_text().split()


@pytest.fixture
def driver(
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    unique_name: Callable[[str], str],
    tmp_path: Path,
) -> Iterator[Driver]:
    running = Driver(bootstrap_servers, topic_factory("faulty"), unique_name("faulty"), tmp_path)
    yield running
    if running.coordinator is not None:
        running.coordinator.stop()


def state(rest: TestClient, name: str) -> dict[str, Any]:
    response = rest.get(f"/connectors/{name}/status")
    assert response.status_code == 200, response.text
    return response.json()


def fail_in_background(driver: Driver, rest: TestClient) -> None:
    """The connector reports an error from its own thread: FAILED, with the trace."""
    driver.switch("raise-error")
    switch = driver.faults / "raise-error"  # the watcher removes it once it reported
    wait_for(lambda: not switch.exists(), 30, "the connector to report its error")
    driver.refresh()
    status = state(rest, driver.name)
    assert status["connector"]["state"] == "FAILED"
    assert "the connector lost its source" in status["connector"]["trace"]


def positions(read_committed: Callable[..., list[Any]], topic: str) -> list[int]:
    return [parse_generated_value(r.value)[1] for r in read_committed(topic)]


def test_stopping_a_failed_connector_makes_it_stopped(driver: Driver, rest: TestClient) -> None:
    driver.start()
    assert driver.batch() == PER_BATCH
    fail_in_background(driver, rest)
    assert state(rest, driver.name)["tasks"][0]["state"] == "RUNNING"  # as in Connect

    assert rest.put(f"/connectors/{driver.name}/stop").status_code == 204
    driver.refresh()

    status = state(rest, driver.name)
    assert status["connector"]["state"] == "STOPPED"
    assert "trace" not in status["connector"]
    assert status["tasks"] == []
    assert rest.get(f"/connectors/{driver.name}/tasks").json() == []
    assert driver.events() == ["start", "stop"]
    assert driver.batch() == 0


def test_a_connector_that_fails_while_stopping_ends_stopped(
    driver: Driver, rest: TestClient
) -> None:
    driver.start()
    driver.batch()
    driver.switch("fail-on-stop")

    assert rest.put(f"/connectors/{driver.name}/stop").status_code == 204
    driver.refresh()

    status = state(rest, driver.name)
    assert status["connector"]["state"] == "STOPPED"
    assert status["tasks"] == []
    assert driver.events() == ["start", "stop"]
    driver.refresh()  # stays STOPPED; no second stop of the same instance
    assert state(rest, driver.name)["connector"]["state"] == "STOPPED"
    assert driver.events() == ["start", "stop"]


def test_resume_after_failing_before_and_during_shutdown(
    driver: Driver, rest: TestClient, read_committed: Callable[..., list[Any]]
) -> None:
    driver.start()
    driver.batch()
    fail_in_background(driver, rest)
    driver.switch("fail-on-stop")
    assert rest.put(f"/connectors/{driver.name}/stop").status_code == 204
    driver.refresh()
    assert state(rest, driver.name)["connector"]["state"] == "STOPPED"
    stopped_at = positions(read_committed, driver.topic)

    driver.switch("fail-on-stop", on=False)
    assert rest.put(f"/connectors/{driver.name}/resume").status_code == 202
    driver.refresh()

    status = state(rest, driver.name)
    assert status["connector"]["state"] == "RUNNING"
    assert [task["state"] for task in status["tasks"]] == ["RUNNING"]
    assert driver.events() == ["start", "stop", "start"]  # a fresh instance
    assert driver.batch() == PER_BATCH
    assert positions(read_committed, driver.topic) == list(range(len(stopped_at) + PER_BATCH))


def test_a_restart_request_brings_a_failed_connector_back(
    driver: Driver, rest: TestClient, read_committed: Callable[..., list[Any]]
) -> None:
    driver.start()
    driver.batch()
    fail_in_background(driver, rest)

    response = rest.post(f"/connectors/{driver.name}/restart?onlyFailed=true")
    assert response.status_code == 202, response.text
    driver.refresh()

    assert state(rest, driver.name)["connector"]["state"] == "RUNNING"
    assert driver.events() == ["start", "stop", "start"]
    driver.batch()
    assert positions(read_committed, driver.topic) == list(range(2 * PER_BATCH))


def test_a_connector_that_cannot_start_fails_the_query_with_its_trace(
    driver: Driver, rest: TestClient
) -> None:
    driver.switch("fail-on-start")
    with pytest.raises(ConnectorFailedError, match="the connector refuses to start"):
        driver.start()
