"""PUT /connectors/{name}/config answers 409 while a running query owns the connector (its
driver's status is the latest), creates and updates connectors no query runs, and a stop leaves
the last status to the query (real broker; the driver's statuses are played by the test)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from fastapi.testclient import TestClient

from spark_eos_connect.errors import EosConnectError
from spark_eos_connect.herder import Herder
from spark_eos_connect.protocol.status_records import StatusRecord, StatusState
from spark_eos_connect.storage.config_store import ConfigLeader

pytestmark = pytest.mark.integration

SOURCE = {"connector.class": "FileStreamSource", "file": "/tmp/in.txt", "topic": "t"}
CHANGED = {**SOURCE, "topic": "other"}
DRIVER = "spark-host:4242"


def stored_config(client: TestClient, name: str) -> dict[str, Any]:
    return dict(client.get(f"/connectors/{name}/config").json())


def connector_status(herder: Herder, name: str) -> StatusRecord | None:
    return herder.statuses.read_to_end().connector_status(name)


def assert_refused(client: TestClient, name: str, driver: str, state: str) -> None:
    response = client.put(f"/connectors/{name}/config", json=CHANGED)
    assert response.status_code == 409, response.text
    body = response.json()
    assert body["error_code"] == 409
    assert body["message"].startswith(
        f"Connector {name} is run by the Spark query whose driver is {driver} (connector {state}"
    )
    assert "Change the query's options and restart the query" in body["message"]
    assert stored_config(client, name)["topic"] == "t"


@pytest.mark.parametrize("state", ["RUNNING", "PAUSED", "STOPPED", "FAILED"])
def test_changes_to_a_connector_a_query_runs_are_refused(
    client: TestClient, herder: Herder, file_source: Callable[..., str], state: str
) -> None:
    name = file_source()
    herder.statuses.put_connector_status(name, state, DRIVER, 1)
    assert_refused(client, name, DRIVER, state)
    same = client.put(f"/connectors/{name}/config", json=SOURCE)  # no change: nothing to refuse
    assert same.status_code == 200, same.text


@pytest.mark.parametrize(
    "status",
    [
        None,  # created through the API, never run
        StatusRecord(StatusState.UNASSIGNED, DRIVER, 1),  # its query stopped
        StatusRecord(StatusState.STOPPED, "test-worker", 1),  # stopped by the herder
        StatusRecord(StatusState.STOPPED, "rest-2:eosconnect-herder", 1),  # by another herder
    ],
)
def test_connectors_no_query_runs_are_created_and_updated(
    client: TestClient,
    herder: Herder,
    unique_name: Callable[[str], str],
    status: StatusRecord | None,
) -> None:
    name = unique_name("c")
    assert client.put(f"/connectors/{name}/config", json=SOURCE).status_code == 201
    if status is not None:
        herder.statuses.put_connector_status(name, status.state, status.worker_id, 1)
    updated = client.put(f"/connectors/{name}/config", json=CHANGED)
    assert updated.status_code == 200, updated.text
    assert stored_config(client, name) == {**CHANGED, "name": name}


def test_stop_leaves_the_last_status_to_the_running_query(
    client: TestClient,
    herder: Herder,
    file_source: Callable[..., str],
    run_tasks: Callable[..., None],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    name = file_source()
    run_tasks(name, 1)  # driver-1 reports RUNNING
    seen_when_stopping: list[StatusRecord | None] = []
    stop_connector = ConfigLeader.stop_connector

    def spy(leader: ConfigLeader, connector: str) -> None:
        seen_when_stopping.append(connector_status(herder, connector))
        stop_connector(leader, connector)

    monkeypatch.setattr(ConfigLeader, "stop_connector", spy)
    assert client.put(f"/connectors/{name}/stop").status_code == 204
    # The herder's STOPPED is written before the target state a running query reacts to (on
    # each attempt: run_tasks's leader fenced the herder's, which claims again) ...
    assert seen_when_stopping
    assert set(seen_when_stopping) == {StatusRecord(StatusState.STOPPED, "test-worker", 1)}
    # ... so the query's own STOPPED comes last, and the query keeps the connector.
    herder.statuses.put_connector_status(name, "STOPPED", "driver-1", 1)
    assert_refused(client, name, "driver-1", "STOPPED")
    assert client.put(f"/connectors/{name}/stop").status_code == 204  # again: status kept
    assert connector_status(herder, name) == StatusRecord(StatusState.STOPPED, "driver-1", 1)
    assert_refused(client, name, "driver-1", "STOPPED")


def test_a_failed_stop_puts_the_status_back(
    client: TestClient,
    herder: Herder,
    file_source: Callable[..., str],
    run_tasks: Callable[..., None],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    name = file_source()
    run_tasks(name, 1)

    def broken(leader: ConfigLeader, connector: str) -> None:
        raise EosConnectError("config topic unavailable")

    monkeypatch.setattr(ConfigLeader, "stop_connector", broken)
    assert client.put(f"/connectors/{name}/stop").status_code == 500
    assert connector_status(herder, name) == StatusRecord(StatusState.RUNNING, "driver-1", 1)


def test_a_connector_whose_query_is_gone_can_be_stopped_or_recreated_then_changed(
    client: TestClient,
    herder: Herder,
    file_source: Callable[..., str],
    run_tasks: Callable[..., None],
) -> None:
    stopped, deleted = file_source(), file_source()
    for name in (stopped, deleted):
        run_tasks(name, 1)  # driver-1 reports RUNNING, then dies without a word
        assert_refused(client, name, "driver-1", "RUNNING")

    assert client.put(f"/connectors/{stopped}/stop").status_code == 204  # nobody answers
    assert client.put(f"/connectors/{stopped}/config", json=CHANGED).status_code == 200

    assert client.delete(f"/connectors/{deleted}").status_code == 204
    assert client.put(f"/connectors/{deleted}/config", json=CHANGED).status_code == 201
    assert stored_config(client, deleted) == {**CHANGED, "name": deleted}
