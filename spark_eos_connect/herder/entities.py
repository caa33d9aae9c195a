"""Kafka Connect's REST response shapes, built from config and status snapshots (pure)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from spark_eos_connect.protocol.status_records import StatusRecord, StatusState

RESTARTING = StatusState.RESTARTING.value


def state_entry(record: StatusRecord | None) -> dict[str, Any]:
    """``{"state","worker_id"[,"trace"]}``; UNASSIGNED when no status was ever written."""
    if record is None:
        return {"state": StatusState.UNASSIGNED.value, "worker_id": None}
    entry: dict[str, Any] = {"state": record.state.value, "worker_id": record.worker_id}
    if record.trace is not None:
        entry["trace"] = record.trace
    return entry


def connector_info(
    name: str, config: Mapping[str, Any], task_count: int, kind: str
) -> dict[str, Any]:
    """``ConnectorInfo``: name, config, task ids and type."""
    return {
        "name": name,
        "config": dict(config),
        "tasks": [{"connector": name, "task": task} for task in range(task_count)],
        "type": kind,
    }


def task_infos(name: str, configs: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``[TaskInfo]``: each task's id and config."""
    return [
        {"id": {"connector": name, "task": task}, "config": dict(config)}
        for task, config in enumerate(configs)
    ]


def connector_state(
    name: str,
    connector: StatusRecord | None,
    tasks: Mapping[int, StatusRecord],
    kind: str,
) -> dict[str, Any]:
    """``ConnectorStateInfo``: the connector's and its tasks' states."""
    return {
        "name": name,
        "connector": state_entry(connector),
        "tasks": [{"id": task, **state_entry(record)} for task, record in sorted(tasks.items())],
        "type": kind,
    }


def restart_plan(
    name: str,
    connector: StatusRecord | None,
    tasks: Mapping[int, StatusRecord],
    kind: str,
    include_tasks: bool,
    only_failed: bool,
) -> dict[str, Any]:
    """The 202 body of a restart (KIP-745): what will restart shows RESTARTING."""

    def restarts(record: StatusRecord | None) -> bool:
        return not only_failed or (record is not None and record.state is StatusState.FAILED)

    state = connector_state(name, connector, tasks, kind)
    if restarts(connector):
        state["connector"]["state"] = RESTARTING
    for entry in state["tasks"]:
        if include_tasks and restarts(tasks[entry["id"]]):
            entry["state"] = RESTARTING
    return state


def modified_message(connector_handled: bool, reset: bool) -> str:
    """Connect's answer to PATCH (altered) or DELETE (reset) of a connector's offsets."""
    verb = "reset" if reset else "altered"
    if connector_handled:
        return f"The offsets for this connector have been {verb} successfully"
    return (
        f"The Connect framework-managed offsets for this connector have been {verb} "
        "successfully. However, if this connector manages offsets externally, they will need "
        f"to be manually {verb} in the system that the connector uses."
    )
