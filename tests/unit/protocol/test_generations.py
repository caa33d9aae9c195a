"""The generation rules: what a new driver writes and when a task may start."""

from __future__ import annotations

from spark_eos_connect.protocol.config_records import (
    ClusterConfigSnapshot,
    commit_key,
    connector_key,
    encode_commit,
    encode_connector_config,
    encode_task_config,
    encode_task_count,
    task_count_key,
    task_key,
)
from spark_eos_connect.protocol.generations import start_generation, task_startup_problem

NAME = "orders"


def replay(*records: tuple[str, bytes]) -> ClusterConfigSnapshot:
    snapshot = ClusterConfigSnapshot()
    for offset, (key, value) in enumerate(records):
        snapshot.apply(key, value, offset)
    return snapshot


def generation(tasks: int) -> list[tuple[str, bytes]]:
    records = [(task_key(NAME, t), encode_task_config({"task": str(t)})) for t in range(tasks)]
    return [*records, (commit_key(NAME), encode_commit(tasks))]


CONFIG = (connector_key(NAME), encode_connector_config({"connector.class": "Generator"}))


def test_first_start_writes_config_and_fences_only_the_new_tasks() -> None:
    start = start_generation(ClusterConfigSnapshot(), NAME, {"a": "1"}, [{"t": "0"}, {"t": "1"}])

    assert start.write_connector_config
    assert start.fence_task_count == 2


def test_restart_with_fewer_tasks_still_fences_every_earlier_task() -> None:
    snapshot = replay(CONFIG, *generation(3), (task_count_key(NAME), encode_task_count(3)))

    start = start_generation(snapshot, NAME, {"connector.class": "Generator"}, [{"t": "0"}])

    assert not start.write_connector_config
    assert start.fence_task_count == 3


def test_task_refuses_to_start_without_task_count_after_latest_configs() -> None:
    snapshot = replay(CONFIG, *generation(1))
    commit = snapshot.latest_commit_offset(NAME)

    problem = task_startup_problem(snapshot, NAME, commit)

    assert problem is not None and "no task-count record" in problem


def test_task_starts_when_task_count_follows_its_generation() -> None:
    snapshot = replay(CONFIG, *generation(1), (task_count_key(NAME), encode_task_count(1)))

    assert task_startup_problem(snapshot, NAME, snapshot.latest_commit_offset(NAME)) is None


def test_task_of_an_older_generation_aborts() -> None:
    snapshot = replay(CONFIG, *generation(1), (task_count_key(NAME), encode_task_count(1)))
    old_commit = snapshot.latest_commit_offset(NAME)
    for offset, (key, value) in enumerate(
        [*generation(2), (task_count_key(NAME), encode_task_count(2))], start=10
    ):
        snapshot.apply(key, value, offset)

    problem = task_startup_problem(snapshot, NAME, old_commit)

    assert problem is not None and "newer generation" in problem


def test_a_stopped_connector_is_not_running_and_a_started_one_is() -> None:
    from spark_eos_connect.protocol.config_records import encode_target_state, target_state_key
    from spark_eos_connect.protocol.generations import connector_running

    running = replay(CONFIG, *generation(1), (task_count_key(NAME), encode_task_count(1)))
    assert connector_running(running, NAME)
    stopped = replay(
        CONFIG,
        *generation(1),
        (commit_key(NAME), encode_commit(0)),
        (target_state_key(NAME), encode_target_state("STOPPED")),
    )
    assert not connector_running(stopped, NAME)
