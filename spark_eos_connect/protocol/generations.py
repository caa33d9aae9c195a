"""KIP-618's generation rules as plain functions over a `ClusterConfigSnapshot`.

A generation is a set of task configs committed to the config topic; it is identified here by the
config-topic offset of its `commit-<name>` record. A driver that starts a connector always starts
a new generation, so that every task of an older driver (a zombie) notices and stops.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from spark_eos_connect.errors import EosConnectError
from spark_eos_connect.protocol.config_records import ClusterConfigSnapshot


class TaskStartupError(EosConnectError, RuntimeError):
    """A source task must not start (or must abort start-up); Spark may retry it later."""


@dataclass(frozen=True)
class GenerationStart:
    """What the leader writes when a driver starts a connector."""

    write_connector_config: bool
    task_configs: list[dict[str, str]]
    fence_task_count: int


def previous_task_count(snapshot: ClusterConfigSnapshot, name: str) -> int:
    """How many task producers of earlier generations may exist (all of them get fenced)."""
    return max(
        snapshot.task_count(name) or 0,
        snapshot.committed_task_count(name) or 0,
        len(snapshot.task_configs(name)),
    )


def start_generation(
    snapshot: ClusterConfigSnapshot,
    name: str,
    connector_config: dict[str, str],
    task_configs: list[dict[str, str]],
) -> GenerationStart:
    """The leader's writes for a new generation: config if changed, task configs, then fencing."""
    stored: Any = snapshot.connector_config(name)
    return GenerationStart(
        write_connector_config=stored != connector_config,
        task_configs=task_configs,
        fence_task_count=max(previous_task_count(snapshot, name), len(task_configs)),
    )


def connector_running(snapshot: ClusterConfigSnapshot, name: str) -> bool:
    """Whether the connector is meant to run now: target state STARTED and tasks assigned
    (a stop writes an empty task set before the STOPPED target state)."""
    state = snapshot.target_state(name)
    return (state is None or state == "STARTED") and snapshot.committed_task_count(name) != 0


def task_startup_problem(
    snapshot: ClusterConfigSnapshot, name: str, planned_commit_offset: int | None
) -> str | None:
    """Why task start-up must stop now (seed steps 2 and 3.3), or None when it may proceed."""
    latest = snapshot.latest_commit_offset(name)
    if latest != planned_commit_offset:
        return (
            f"a newer generation of task configs for connector {name} exists (task commit at "
            f"config-topic offset {latest}, this task belongs to {planned_commit_offset}); "
            "aborting task start-up: this task is a zombie of an earlier generation"
        )
    if not snapshot.task_count_record_follows_latest_task_configs(name):
        return (
            f"no task-count record follows the latest task configs of connector {name} in the "
            "config topic, so earlier task producers may not have been fenced yet; refusing to "
            "start the task until the leader writes one"
        )
    return None
