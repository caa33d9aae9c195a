"""`connector_configs` through the herder on in-memory twins: create, replace, read and delete
connectors' configs (secrets hidden, a query's connector refused, statuses cleared)."""

from __future__ import annotations

from spark_eos_connect.herder import BadRequestError, ConflictError, NotFoundError
from spark_eos_connect.protocol.config_records import TargetState
from tests.unit.herder.memory_cluster import SOURCE, WORKER, Cluster, add_source, refused


def test_create_list_get_and_secrets_hidden(cluster: Cluster) -> None:
    herder = cluster.herder
    created = herder.create(" src ", {"connector.class": SOURCE, "db.password": "s3cret"})
    info = {key: value for key, value in created.items() if key != "status"}

    assert info == {
        "name": "src",
        "config": {"connector.class": SOURCE, "db.password": "[hidden]", "name": "src"},
        "tasks": [],
        "type": "source",
    }
    assert created["status"] == herder.status("src")["connector"]
    assert herder.connectors() == ["src"]
    assert herder.config("src")["db.password"] == "[hidden]"
    assert cluster.snapshot().connector_config("src")["db.password"] == "s3cret"
    assert herder.connectors_expanded(["info", "bogus"]) == {"src": {"info": info}}
    assert herder.server_info()["kafka_cluster_id"] == "cluster-1"
    with refused(ConflictError, 409, "already exists"):
        herder.create("src", {"connector.class": SOURCE})
    with refused(NotFoundError, 404, "Connector nope not found"):
        herder.info("nope")


def test_put_config_creates_then_replaces_and_checks_the_name(cluster: Cluster) -> None:
    herder = cluster.herder
    created, _ = herder.put_config("src", {"connector.class": SOURCE, "tasks.max": 1})
    replaced, info = herder.put_config("src", {"connector.class": SOURCE, "tasks.max": 3})

    assert (created, replaced) == (True, False)
    assert info["config"]["tasks.max"] == "3"  # numbers are stored as strings, as Connect does
    assert cluster.snapshot().connector_config("src")["tasks.max"] == "3"
    with refused(BadRequestError, 400, "doesn't match connector name in the URL"):
        herder.put_config("src", {"connector.class": SOURCE, "name": "other"})


def test_a_config_change_to_a_connector_a_query_runs_isrefused(cluster: Cluster) -> None:
    name = add_source(cluster)
    cluster.run_tasks(name, 1)  # a driver (another worker id) reports RUNNING

    with refused(ConflictError, 409, "driver-1"):
        cluster.herder.put_config(name, {"connector.class": SOURCE, "tasks.max": "5"})
    assert cluster.snapshot().connector_config(name)["tasks.max"] == "2"


def test_a_connector_created_stopped_is_reported_stopped_by_the_herder(cluster: Cluster) -> None:
    cluster.herder.create("src", {"connector.class": SOURCE}, initial_state="STOPPED")

    assert cluster.snapshot().target_state("src") is TargetState.STOPPED
    status = cluster.herder.status("src")
    assert status["connector"] == {"state": "STOPPED", "worker_id": WORKER}


def test_delete_tombstones_the_config_and_statuses(cluster: Cluster) -> None:
    herder = cluster.herder
    name = add_source(cluster)
    cluster.run_tasks(name, 2)

    herder.delete(name)

    assert herder.connectors() == [] and cluster.snapshot().target_state(name) is None
    statuses = cluster.driver_statuses.read_to_end()
    assert statuses.connector_status(name) is None and statuses.task_statuses(name) == {}
    with refused(NotFoundError, 404, f"Connector {name} not found"):
        herder.delete(name)
