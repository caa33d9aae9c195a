"""`target_states` through the herder on in-memory twins: pause, resume and stop."""

from __future__ import annotations

from spark_eos_connect.herder import NotFoundError
from spark_eos_connect.protocol.config_records import TargetState
from tests.unit.herder.memory_cluster import WORKER, Cluster, add_source, refused


def test_pause_resume_and_stop(cluster: Cluster) -> None:
    herder = cluster.herder
    name = add_source(cluster)
    cluster.run_tasks(name, 2)

    herder.pause(name)
    assert cluster.snapshot().target_state(name) is TargetState.PAUSED
    herder.resume(name)
    assert cluster.snapshot().target_state(name) is TargetState.STARTED
    assert [t["state"] for t in herder.status(name)["tasks"]] == ["RUNNING", "RUNNING"]

    herder.stop(name)
    snapshot = cluster.snapshot()
    assert snapshot.target_state(name) is TargetState.STOPPED
    assert snapshot.task_configs(name) == [] and snapshot.committed_task_count(name) == 0
    assert herder.status(name) == {
        "name": name,
        "connector": {"state": "STOPPED", "worker_id": WORKER},
        "tasks": [],
        "type": "source",
    }
    assert cluster.driver_statuses.read_to_end().task_statuses(name) == {}  # cleared
    with refused(NotFoundError, 404, f"No status found for task {name}-0"):
        herder.task_status(name, 0)
    herder.stop(name)  # idempotent
    herder.pause(name)  # a stopped connector may be paused
    assert cluster.snapshot().target_state(name) is TargetState.PAUSED
    with refused(NotFoundError, 404, "not found"):
        herder.pause("nope")
