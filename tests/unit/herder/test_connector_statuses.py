"""`connector_statuses` through the herder on in-memory twins: a driver that stopped
heartbeating shows UNASSIGNED (issue 40 item 2); a failed one stays FAILED."""

from __future__ import annotations

from spark_eos_connect.runtime.lifecycle.liveness import LIVENESS_S
from tests.unit.herder.memory_cluster import SOURCE, Cluster, add_source


def test_a_running_connector_whose_driver_went_silent_shows_unassigned_saying_why(
    cluster: Cluster,
) -> None:
    herder = cluster.herder
    name = add_source(cluster)
    cluster.run_tasks(name, 2)
    written = herder.connector_statuses.now_ms()
    herder.connector_statuses.now_ms = lambda: (
        written + int(LIVENESS_S * 1000) - 1000
    )  # within the bound

    assert herder.status(name)["connector"] == {"state": "RUNNING", "worker_id": "driver-1"}
    herder.connector_statuses.now_ms = lambda: written + int(LIVENESS_S * 1000) + 1000

    status = herder.status(name)
    connector = status["connector"]
    assert connector["state"] == "UNASSIGNED" and connector["worker_id"] == "driver-1"
    assert connector["trace"].startswith("No heartbeat from driver driver-1 for 1")
    assert "its query is not running. Its last status was RUNNING." in connector["trace"]
    assert [task["state"] for task in status["tasks"]] == ["UNASSIGNED", "UNASSIGNED"]
    assert herder.task_status(name, 1)["state"] == "UNASSIGNED"
    assert set(status) == {"name", "connector", "tasks", "type"}  # Connect's shape
    herder.put_config(name, {"connector.class": SOURCE, "tasks.max": "5"})  # no owner now
    assert cluster.snapshot().connector_config(name)["tasks.max"] == "5"


def test_a_failed_connector_stays_failed_however_old(cluster: Cluster) -> None:
    herder = cluster.herder
    name = add_source(cluster)
    cluster.run_tasks(name, 1, states=["FAILED"])
    cluster.driver_statuses.put_connector_status(name, "FAILED", "driver-1", 1, "boom")
    herder.connector_statuses.now_ms = lambda: 10**15

    status = herder.status(name)

    assert status["connector"]["state"] == "FAILED" and status["connector"]["trace"] == "boom"
    assert [task["state"] for task in status["tasks"]] == ["FAILED"]
