"""KIP-618's cluster protocol with the Spark driver as leader ("the Spark driver plays the Connect
leader for its connectors", the project's design), against the real
broker: Connect's config-topic formats, zombie leaders and drivers, the seed's "worker lag
before producer creation" scenario, reconfiguration, and the task start-up refusal."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from spark_eos_connect.protocol.config_records import parse_config_key
from spark_eos_connect.protocol.generations import TaskStartupError
from spark_eos_connect.protocol.status_records import StatusState
from spark_eos_connect.source.config import parse_source_pipeline
from spark_eos_connect.source.coordinator import ConnectorTakenOverError, SourceCoordinator
from spark_eos_connect.source.plan import SourceTaskPlan
from spark_eos_connect.source.task_loop import BatchResult, run_task_once
from spark_eos_connect.storage.config_store import KafkaConfigStore, LeaderFencedError

pytestmark = pytest.mark.integration

COUNTER = "spark_eos_connect.testing.CounterSourceConnector"
STREAMS = 4
PER_STREAM = 300


@pytest.fixture
def connector(
    bootstrap_servers: str, topic_factory: Callable[..., str], unique_name: Callable[[str], str]
) -> Callable[..., SourceCoordinator]:
    topic = topic_factory("coord", partitions=2)
    name = unique_name("coord")

    def start(tasks: int = 2, **extra: str) -> SourceCoordinator:
        return SourceCoordinator.open(
            parse_source_pipeline(
                {
                    "name": name,
                    "connector.class": COUNTER,
                    "tasks.max": str(tasks),
                    "topic": topic,
                    "streams": str(STREAMS),
                    "records.per.stream": str(PER_STREAM),
                    "maxRecordsPerTrigger": "400",
                    "kafka.bootstrap.servers": bootstrap_servers,
                    **extra,
                }
            )
        )

    return start


def run_task(bootstrap: str, plan: SourceTaskPlan, **hooks: Any) -> BatchResult:
    return run_task_once({"bootstrap.servers": bootstrap}, plan, 0, **hooks)


def run_batch(bootstrap: str, coordinator: SourceCoordinator) -> int:
    return sum(run_task(bootstrap, plan).records for plan in coordinator.plan())


def counter_values(records: list[Any]) -> Counter[tuple[int, int]]:
    pairs = (r.value.decode().split(":") for r in records)
    return Counter((int(stream), int(n)) for stream, n in pairs)


def config_records(read_committed: Callable[..., list[Any]], name: str) -> list[tuple[str, Any]]:
    return [
        (r.key.decode(), r.value)
        for r in read_committed("eosconnect-configs")
        if r.key is not None and parse_config_key(r.key.decode()).connector == name
    ]


def test_config_topic_records_have_connects_keys_and_values(
    connector: Callable[..., SourceCoordinator], read_committed: Callable[..., list[Any]]
) -> None:
    coordinator = connector(tasks=2)
    name = coordinator.config.name

    records = config_records(read_committed, name)

    keys = [key for key, _ in records]
    assert keys == [
        f"connector-{name}",
        f"task-{name}-0",
        f"task-{name}-1",
        f"commit-{name}",
        f"tasks-fencing-{name}",
    ]
    values = dict(records)
    assert values[f"commit-{name}"] == b'{"tasks":2}'
    assert values[f"tasks-fencing-{name}"] == b'{"task-count":2}'
    connector_config = json.loads(values[f"connector-{name}"])
    assert list(connector_config) == ["properties"]
    assert connector_config["properties"]["connector.class"] == COUNTER
    task0 = json.loads(values[f"task-{name}-0"])
    assert task0["properties"]["streams.assigned"] == "0,2"
    assert b" " not in values[f"task-{name}-0"]  # compact separators, as Connect writes


def test_zombie_leader_cannot_write_after_a_new_driver_starts(
    connector: Callable[..., SourceCoordinator],
    bootstrap_servers: str,
) -> None:
    driver_a = connector(tasks=2)
    driver_b = connector(tasks=2)
    name = driver_a.config.name

    assert driver_a.leader is not None
    with pytest.raises(LeaderFencedError):
        driver_a.leader.put_target_state(name, "PAUSED")

    snapshot = KafkaConfigStore(
        {"bootstrap.servers": bootstrap_servers}, "eosconnect-configs", "eosconnect"
    ).read_to_end()
    assert snapshot.skipped == 0
    assert not snapshot.is_inconsistent(name)
    assert snapshot.task_count_record_follows_latest_task_configs(name)
    assert snapshot.target_state(name) == "STARTED"
    assert snapshot.latest_commit_offset(name) == driver_b.generation_commit_offset


def test_tasks_of_a_zombie_driver_abort_start_up(
    connector: Callable[..., SourceCoordinator],
    bootstrap_servers: str,
    read_committed: Callable[..., list[Any]],
) -> None:
    driver_a = connector(tasks=2)
    zombie_plans = driver_a.plan()
    driver_b = connector(tasks=2)

    with pytest.raises(TaskStartupError, match="newer generation"):
        run_task(bootstrap_servers, zombie_plans[0])
    with pytest.raises(ConnectorTakenOverError, match="another driver"):
        driver_a.plan()
    run_batch(bootstrap_servers, driver_b)

    counts = counter_values(read_committed(driver_b.config.connector_props["topic"]))
    assert set(counts.values()) == {1}
    assert sum(counts.values()) == 400


def test_worker_lag_before_producer_creation_never_duplicates(
    connector: Callable[..., SourceCoordinator],
    bootstrap_servers: str,
    read_committed: Callable[..., list[Any]],
) -> None:
    # Steps 1-3: generation 1; worker F reads the task-count record for task 0 ...
    generation_1 = connector(tasks=2)
    late_plan = generation_1.plan()[0]
    topic = generation_1.config.connector_props["topic"]
    progress = {}

    def block_before_producer() -> None:
        # Step 4: F blocks before creating its producer. Steps 5-7: the connector is
        # reconfigured (streams move between tasks), the leader fences generation 1 and writes a
        # task-count record, and worker O runs the new generation's tasks.
        generation_2 = connector(tasks=3)
        progress["records"] = run_batch(bootstrap_servers, generation_2)

    # Step 8: F unblocks, creates its producer, reads the config topic again and aborts.
    with pytest.raises(TaskStartupError, match="newer generation"):
        run_task(bootstrap_servers, late_plan, before_producer=block_before_producer)

    counts = counter_values(read_committed(topic))
    assert progress["records"] == sum(counts.values()) > 0
    assert set(counts.values()) == {1}


def test_reconfiguration_fences_the_old_generation_no_duplicates_no_loss(
    connector: Callable[..., SourceCoordinator],
    bootstrap_servers: str,
    read_committed: Callable[..., list[Any]],
) -> None:
    first = connector(tasks=2)
    topic = first.config.connector_props["topic"]
    written = run_batch(bootstrap_servers, first) + run_batch(bootstrap_servers, first)
    stale_plans = first.plan()

    second = connector(tasks=3)
    with pytest.raises(TaskStartupError):
        run_task(bootstrap_servers, stale_plans[1])
    while (batch := run_batch(bootstrap_servers, second)) > 0:
        written += batch

    counts = counter_values(read_committed(topic))
    assert written == STREAMS * PER_STREAM
    assert set(counts) == {(s, n) for s in range(STREAMS) for n in range(PER_STREAM)}
    assert set(counts.values()) == {1}


def test_task_refuses_to_start_without_a_task_count_record_after_its_configs(
    connector: Callable[..., SourceCoordinator],
    bootstrap_servers: str,
    read_committed: Callable[..., list[Any]],
) -> None:
    coordinator = connector(tasks=1)
    name = coordinator.config.name
    [plan] = coordinator.plan()
    # New task configs written without the fencing round and its task-count record.
    assert coordinator.leader is not None
    coordinator.leader.put_task_configs(name, coordinator.task_configs)
    store = KafkaConfigStore(
        {"bootstrap.servers": bootstrap_servers}, "eosconnect-configs", "eosconnect"
    )
    commit_offset = store.read_to_end().latest_commit_offset(name)
    unfenced = SourceTaskPlan(**{**plan.__dict__, "generation_commit_offset": commit_offset})

    with pytest.raises(TaskStartupError) as refused:
        run_task(bootstrap_servers, unfenced)

    assert "no task-count record follows the latest task configs" in str(refused.value)
    assert read_committed(coordinator.config.connector_props["topic"]) == []


def test_status_topic_shows_the_running_connector_and_a_failed_task_until_it_runs_again(
    connector: Callable[..., SourceCoordinator],
    bootstrap_servers: str,
    read_committed: Callable[..., list[Any]],
) -> None:
    from spark_eos_connect.source.host import status_reporter

    coordinator = connector(tasks=2)
    name = coordinator.config.name
    [plan, _] = coordinator.plan()

    def latest() -> dict[str, Any]:
        return {
            r.key.decode(): json.loads(r.value)
            for r in read_committed("eosconnect-status")
            if r.key is not None and r.value is not None and name in r.key.decode()
        }

    kafka = {"bootstrap.servers": bootstrap_servers}
    status_reporter(kafka, plan).report(plan.task, StatusState.FAILED, "Traceback: boom")

    failed = latest()
    assert failed[f"status-connector-{name}"]["state"] == "RUNNING"
    assert failed[f"status-task-{name}-1"]["state"] == "RUNNING"
    assert failed[f"status-task-{name}-0"] == {
        "state": "FAILED",
        "trace": "Traceback: boom",
        "worker_id": failed[f"status-task-{name}-0"]["worker_id"],
        "generation": coordinator.generation,
    }
    assert list(failed[f"status-connector-{name}"]) == ["state", "trace", "worker_id", "generation"]

    # a Spark retry of the task succeeded
    status_reporter(kafka, plan).report(plan.task, StatusState.RUNNING)

    running = latest()[f"status-task-{name}-0"]
    assert (running["state"], running["trace"]) == ("RUNNING", None)
    assert running["generation"] == coordinator.generation
