"""A source query that ends after its task failed leaves the connector FAILED and the task's
FAILED status and trace in place, not UNASSIGNED (issue 40 item 1). No broker."""

from __future__ import annotations

from spark_eos_connect.protocol.status_records import StatusState
from spark_eos_connect.runtime.lifecycle.leadership import worker_id
from tests.unit.source.test_coordinator_claim import Clock, TimedStatuses, coordinator
from tests.unit.source.test_coordinator_on_twins import NAME

TRACE = "Traceback (most recent call last):\nRuntimeError: poll failed"


def started(**options: str) -> tuple[TimedStatuses, object]:
    statuses = TimedStatuses()
    statuses.clock = Clock(statuses)
    driver = coordinator(statuses, **options)
    driver.start()
    driver.plan()  # leads a generation: its tasks RUNNING
    return statuses, driver


def test_a_task_failed_for_good_leaves_the_connector_and_the_task_failed() -> None:
    statuses, driver = started(**{"tasks.max": "2"})
    generation = driver.generation  # type: ignore[attr-defined]
    statuses.put_task_status(NAME, 1, StatusState.FAILED, "executor:7", generation, TRACE)

    driver.stop()  # type: ignore[attr-defined]

    snapshot = statuses.read_to_end()
    connector = snapshot.connector_status(NAME)
    assert connector is not None and connector.state is StatusState.FAILED
    assert connector.worker_id == worker_id()
    assert connector.trace is not None and connector.trace.startswith(
        f"The query running connector {NAME} failed: task 1 failed"
    )
    assert connector.trace.endswith(TRACE)
    tasks = snapshot.task_statuses(NAME)
    assert tasks[1].state is StatusState.FAILED and tasks[1].trace == TRACE
    assert tasks[0].state is StatusState.UNASSIGNED


def test_a_failure_of_an_earlier_generation_does_not_count() -> None:
    statuses, driver = started()
    generation = driver.generation  # type: ignore[attr-defined]
    statuses.put_task_status(NAME, 0, StatusState.FAILED, "executor:7", generation - 1, TRACE)

    driver.stop()  # type: ignore[attr-defined]

    snapshot = statuses.read_to_end()
    assert snapshot.connector_status(NAME).state is StatusState.UNASSIGNED  # type: ignore[union-attr]
    assert snapshot.task_statuses(NAME)[0].state is StatusState.UNASSIGNED
