"""What a driver reports when its query ends: UNASSIGNED, or FAILED when its tasks failed.

A task that fails reports itself FAILED with its trace (`runtime.task_status`); a
query whose task failed for good ends with that status the latest. The driver leaving keeps
it, and reports the connector FAILED too, naming the failed tasks and quoting the first one's
trace, as Connect's status would show a connector whose work failed; otherwise the connector
and its tasks become UNASSIGNED, as when a Connect worker leaves. Pure: the driver's
`connector_owner` reads the status topic and writes what these functions decide.
"""

from __future__ import annotations

from collections.abc import Mapping

from spark_eos_connect.protocol.status_records import StatusRecord, StatusState


def failed_tasks(
    tasks: Mapping[int, StatusRecord], generation: int | None = None
) -> dict[int, StatusRecord]:
    """The tasks whose latest status is FAILED (written for `generation`, when given)."""
    return {
        task: record
        for task, record in sorted(tasks.items())
        if record.state is StatusState.FAILED
        and (generation is None or record.generation == generation)
    }


def failure_trace(name: str, failed: Mapping[int, StatusRecord]) -> str:
    """The connector's trace when its query ended because tasks `failed` (not empty)."""
    first = min(failed)
    numbers = ", ".join(str(task) for task in sorted(failed))
    return (
        f"The query running connector {name} failed: task {numbers} failed (each task's status "
        f"holds its trace). Task {first}:\n{failed[first].trace or '(no trace)'}"
    )


def leaving_state(
    name: str, tasks: Mapping[int, StatusRecord], generation: int | None = None
) -> tuple[StatusState, str | None, dict[int, StatusRecord]]:
    """(connector state, its trace, the failed tasks to keep) for a driver leaving."""
    failed = failed_tasks(tasks, generation)
    if failed:
        return StatusState.FAILED, failure_trace(name, failed), failed
    return StatusState.UNASSIGNED, None, failed
