"""A sink query's driver owns its connector as a source driver does (issue 40 items 1 and 3):
refused while another live driver runs it unless takeover=true, a silent one taken over once
its liveness lapses, a heartbeat while it runs, and FAILED (not UNASSIGNED) when it ends after
a task failed for good. Memory stores and a fake clock, no broker."""

from __future__ import annotations

import logging

import pytest

from spark_eos_connect.protocol.status_records import StatusState
from spark_eos_connect.runtime.lifecycle.leadership import worker_id
from spark_eos_connect.runtime.lifecycle.liveness import LIVENESS_S, ConnectorInUseError
from spark_eos_connect.sink.lifecycle import SinkLifecycle, SinkTakenOverError, parse_sink_lifecycle
from spark_eos_connect.storage.memory import MemoryConfigStore
from tests.unit.source.test_coordinator_claim import OTHER, Clock, TimedStatuses
from tests.unit.source.test_coordinator_on_twins import NAME

TRACE = "Traceback (most recent call last):\nValueError: put refused a record"


class ClosableStatuses(TimedStatuses):
    def close(self) -> None:
        pass


@pytest.fixture
def statuses() -> TimedStatuses:
    statuses = ClosableStatuses()
    statuses.clock = Clock(statuses)
    statuses.clock.other_beats = False
    return statuses


def lifecycle(statuses: TimedStatuses, **options: str) -> SinkLifecycle:
    config = parse_sink_lifecycle(
        {
            "kafka.bootstrap.servers": "localhost:1",
            "name": NAME,
            "topics": "t",
            "connector.class": "FileStreamSink",
            **options,
        }
    )
    assert config is not None
    clock = statuses.clock
    assert clock is not None
    return SinkLifecycle(
        config,
        (MemoryConfigStore(), statuses),
        heartbeat_s=3600,
        now_ms=lambda: clock.ms,
        sleep=clock.sleep,
        alive=lambda pid: True,
    )


def connector_state(statuses: TimedStatuses) -> StatusState | None:
    record = statuses.read_to_end().connector_status(NAME)
    return None if record is None else record.state


def test_a_live_owner_is_refused_by_name(statuses: TimedStatuses) -> None:
    statuses.put_connector_status(NAME, StatusState.RUNNING, OTHER, 1)
    assert statuses.clock is not None
    statuses.clock.other_beats = True

    with pytest.raises(ConnectorInUseError, match=f"connector {NAME} is RUNNING on another"):
        lifecycle(statuses)

    assert statuses.read_to_end().connector_status(NAME).worker_id == OTHER  # type: ignore[union-attr]


def test_takeover_true_takes_a_live_owner_over(
    statuses: TimedStatuses, caplog: pytest.LogCaptureFixture
) -> None:
    statuses.put_connector_status(NAME, StatusState.RUNNING, OTHER, 1)

    with caplog.at_level(logging.WARNING):
        driver = lifecycle(statuses, takeover="true")
    driver.view(force=True)

    assert f"taking it over from driver {OTHER}, which runs it (takeover=true)" in caplog.text
    assert statuses.read_to_end().connector_status(NAME).worker_id == worker_id()  # type: ignore[union-attr]


def test_a_silent_owner_is_taken_over_once_its_liveness_lapses(
    statuses: TimedStatuses, caplog: pytest.LogCaptureFixture
) -> None:
    statuses.put_connector_status(NAME, StatusState.RUNNING, OTHER, 1)
    assert statuses.clock is not None
    started = statuses.clock.ms

    with caplog.at_level(logging.WARNING):
        lifecycle(statuses)

    assert LIVENESS_S <= (statuses.clock.ms - started) / 1000 <= LIVENESS_S + 0.5
    assert f"connector {NAME}: took over from driver {OTHER}, silent for 15 s" in caplog.text


def test_a_running_sink_driver_beats_and_ends_unassigned(statuses: TimedStatuses) -> None:
    driver = lifecycle(statuses)
    driver.view(force=True)
    statuses.put_task_status(NAME, 0, StatusState.RUNNING, "executor:1", 0)
    written = len(statuses.records)

    driver.beat()

    assert len(statuses.records) == written + 1
    assert connector_state(statuses) is StatusState.RUNNING
    driver.close()
    assert connector_state(statuses) is StatusState.UNASSIGNED
    assert statuses.read_to_end().task_statuses(NAME)[0].state is StatusState.UNASSIGNED


def test_a_task_failed_for_good_leaves_the_sink_connector_failed(statuses: TimedStatuses) -> None:
    statuses.put_task_status(NAME, 1, StatusState.FAILED, "executor:1", 0, "an earlier run's")
    driver = lifecycle(statuses)
    assert statuses.read_to_end().task_statuses(NAME) == {}  # an earlier run's cleared
    driver.view(force=True)
    statuses.put_task_status(NAME, 0, StatusState.RUNNING, "executor:1", 0)
    statuses.put_task_status(NAME, 1, StatusState.FAILED, "executor:2", 0, TRACE)

    driver.close()

    snapshot = statuses.read_to_end()
    connector = snapshot.connector_status(NAME)
    assert connector is not None and connector.state is StatusState.FAILED
    assert connector.trace is not None
    assert connector.trace.startswith(f"The query running connector {NAME} failed: task 1")
    assert connector.trace.endswith(TRACE)
    tasks = snapshot.task_statuses(NAME)
    assert tasks[1].state is StatusState.FAILED and tasks[1].trace == TRACE
    assert tasks[0].state is StatusState.UNASSIGNED


def test_a_driver_taken_over_stops_at_its_next_batch_and_leaves_the_status_alone(
    statuses: TimedStatuses, monkeypatch: pytest.MonkeyPatch
) -> None:
    import spark_eos_connect.sink.lifecycle as lifecycle_module

    monkeypatch.setattr(lifecycle_module, "worker_id", lambda: "first:1")
    first = lifecycle(statuses)
    first.view(force=True)
    first.beat()
    monkeypatch.setattr(lifecycle_module, "worker_id", lambda: "second:2")
    second = lifecycle(statuses, takeover="true")
    second.view(force=True)

    monkeypatch.setattr(lifecycle_module, "worker_id", lambda: "first:1")
    first.beat()  # sees the newer driver's status: no beat of its own

    assert first.taken_over == "second:2"
    with pytest.raises(SinkTakenOverError, match="taken over by driver second:2"):
        first.view(force=True)
    first.close()
    record = statuses.read_to_end().connector_status(NAME)
    assert record is not None
    assert (record.worker_id, record.state) == ("second:2", StatusState.RUNNING)
    statuses.put_connector_status(NAME, StatusState.RUNNING, "first:1", record.generation - 1)
    monkeypatch.setattr(lifecycle_module, "worker_id", lambda: "second:2")
    second.beat()  # a late beat of the first driver (a lower generation) does not stop it
    assert second.taken_over is None
    latest = statuses.read_to_end().connector_status(NAME)
    assert latest is not None and latest.worker_id == "second:2"
