"""`restarts` through the herder on in-memory twins: restart requests (KIP-745) and the plan,
KIP-618's wait for a new generation's task-count record."""

from __future__ import annotations

from spark_eos_connect.herder import ConflictError, NotFoundError
from spark_eos_connect.protocol.config_records import RestartRequest
from tests.unit.herder.memory_cluster import Cluster, add_source, refused


def test_restarts_write_requests_and_answer_with_the_plan(cluster: Cluster) -> None:
    herder = cluster.herder
    name = add_source(cluster)
    cluster.run_tasks(name, 2, states=["RUNNING", "FAILED"])

    assert herder.restart(name) is None  # 204
    assert cluster.snapshot().restart_requests[name] == RestartRequest(name, False, False)
    assert herder.restart(name, include_tasks=True, only_failed=True) == {
        "name": name,
        "connector": {"state": "RUNNING", "worker_id": "driver-1"},
        "tasks": [
            {"id": 0, "state": "RUNNING", "worker_id": "driver-1"},
            {"id": 1, "state": "RESTARTING", "worker_id": "driver-1"},
        ],
        "type": "source",
    }
    assert cluster.snapshot().restart_requests[name] == RestartRequest(name, True, True)

    herder.restart_task(name, 1)
    assert cluster.snapshot().restart_requests[name] == RestartRequest(name, True, False)
    with refused(NotFoundError, 404, f"Task {name}-2 not found"):
        herder.restart_task(name, 2)


def test_a_restart_waits_for_the_task_count_record_of_a_new_generation(cluster: Cluster) -> None:
    name = add_source(cluster)
    cluster.run_tasks(name, 1)
    leader = cluster.driver_configs.leader()
    leader.put_task_configs(name, [{"t": "0"}, {"t": "1"}])  # no task-count record yet

    with refused(ConflictError, 409, "not \n?yet followed by a task-count record"):
        cluster.herder.restart(name)
    leader.put_task_count(name, 2)
    assert cluster.herder.restart(name) is None
