"""`herder.without_query`: the status of a connector no Spark query runs, which status the
herder writes after an action, and that views show STOPPED exactly when the offsets may change."""

from __future__ import annotations

import pytest

from spark_eos_connect.herder.without_query import (
    herder_reports,
    offsets_modifiable,
    shown_status,
    status_without_query,
)
from spark_eos_connect.protocol.config_records import TargetState
from spark_eos_connect.protocol.status_records import StatusRecord, StatusState

HERDER = "h:eosconnect-herder"
DRIVER = "h:123"
STARTED, PAUSED, STOPPED = TargetState.STARTED, TargetState.PAUSED, TargetState.STOPPED


def _record(state: StatusState, worker: str = DRIVER, trace: str | None = None) -> StatusRecord:
    return StatusRecord(state, worker, 2, trace)


@pytest.mark.parametrize(
    ("target", "state", "noted"),
    [
        (STARTED, StatusState.UNASSIGNED, True),
        (PAUSED, StatusState.PAUSED, True),
        (STOPPED, StatusState.STOPPED, False),
    ],
)
def test_each_target_state_implies_a_status_that_says_no_query_runs_it(
    target: TargetState, state: StatusState, noted: bool
) -> None:
    record = status_without_query("orders", target, HERDER, 4)

    assert (record.state, record.worker_id, record.generation) == (state, HERDER, 4)
    assert (record.trace is not None) is noted
    if record.trace is not None:
        assert record.trace.startswith("No Spark query runs connector orders")
        assert f"({target.value})" in record.trace
        assert 'spark.readStream.format("eosconnect").option("name", "orders")' in record.trace


def test_the_herder_reports_unless_a_live_query_does_or_a_query_failed() -> None:
    for target in (STARTED, PAUSED, STOPPED):
        assert herder_reports(None, target, HERDER)
        assert herder_reports(_record(StatusState.UNASSIGNED), target, HERDER)  # query ended
        assert herder_reports(_record(StatusState.STOPPED), target, HERDER)
        assert herder_reports(_record(StatusState.PAUSED, HERDER), target, HERDER)
        assert not herder_reports(_record(StatusState.RUNNING), target, HERDER)
        assert not herder_reports(_record(StatusState.PAUSED), target, HERDER)
    # Connect: a failed connector does not transition to PAUSED or STARTED, only to STOPPED
    assert not herder_reports(_record(StatusState.FAILED), PAUSED, HERDER)
    assert not herder_reports(_record(StatusState.FAILED), STARTED, HERDER)
    assert herder_reports(_record(StatusState.FAILED), STOPPED, HERDER)


def test_offsets_are_modifiable_only_when_stopped_without_task_configs() -> None:
    assert offsets_modifiable(STOPPED, None) and offsets_modifiable(STOPPED, 0)
    assert not offsets_modifiable(STOPPED, 2)
    assert not offsets_modifiable(PAUSED, 0) and not offsets_modifiable(STARTED, None)
    assert not offsets_modifiable(None, None)


@pytest.mark.parametrize(
    ("record", "target", "committed", "state"),
    [
        (None, STARTED, None, StatusState.UNASSIGNED),
        (None, PAUSED, None, StatusState.PAUSED),
        (None, STOPPED, 0, StatusState.STOPPED),
        (_record(StatusState.STOPPED, HERDER), PAUSED, 0, StatusState.PAUSED),
        (_record(StatusState.STOPPED), STARTED, 0, StatusState.UNASSIGNED),
        (_record(StatusState.RUNNING), STOPPED, 0, StatusState.STOPPED),
        (_record(StatusState.STOPPED), STOPPED, 2, StatusState.UNASSIGNED),
        (_record(StatusState.RUNNING), PAUSED, 2, StatusState.RUNNING),  # the query follows
        (_record(StatusState.FAILED, trace="boom"), PAUSED, 1, StatusState.FAILED),
    ],
)
def test_views_show_stopped_exactly_when_the_offsets_may_change(
    record: StatusRecord | None,
    target: TargetState,
    committed: int | None,
    state: StatusState,
) -> None:
    shown = shown_status("c", record, target, committed, HERDER)

    assert shown.state is state
    assert (shown.state is StatusState.STOPPED) is offsets_modifiable(target, committed)


def test_a_stopped_record_is_shown_as_written_and_an_incomplete_stop_says_so() -> None:
    stopped = _record(StatusState.STOPPED)
    assert shown_status("c", stopped, STOPPED, 0, HERDER) is stopped

    incomplete = shown_status("c", stopped, STOPPED, 2, HERDER)
    assert incomplete.trace is not None and "PUT /connectors/c/stop" in incomplete.trace


def test_an_unassigned_status_without_a_trace_says_no_query_runs_it() -> None:
    ended = _record(StatusState.UNASSIGNED)  # the query ended and reported it
    shown = shown_status("c", ended, STARTED, 1, HERDER)

    assert (shown.state, shown.worker_id) == (StatusState.UNASSIGNED, DRIVER)
    assert shown.trace is not None and shown.trace.startswith("No Spark query runs connector c")
    silent = _record(StatusState.UNASSIGNED, trace="No heartbeat from driver h:123 for 20 s")
    assert shown_status("c", silent, STARTED, 1, HERDER) is silent
