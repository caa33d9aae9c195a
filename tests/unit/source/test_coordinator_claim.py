"""A driver starting a connector that another driver runs: refused while that driver is alive
(unless takeover=true), taken over once it is gone (issue 40 item 7). Fake clock, no broker."""

from __future__ import annotations

import logging
import socket

import pytest

from spark_eos_connect.protocol.status_records import StatusSnapshot, StatusState, StatusWrites
from spark_eos_connect.runtime.lifecycle.liveness import HEARTBEAT_S, LIVENESS_S
from spark_eos_connect.source.coordinator import (
    ConnectorInUseError,
    CoordinatorStores,
    SourceCoordinator,
)
from spark_eos_connect.storage.memory import MemoryConfigStore, MemoryConfigTopic
from spark_eos_connect.testing import CounterSourceConnector
from tests.unit.source.test_coordinator_on_twins import NAME, CommittedOffsets, config


class Clock:
    """Milliseconds; `sleep` moves it on and lets the other driver beat as it would."""

    def __init__(self, statuses: TimedStatuses) -> None:
        self.ms = 1_000_000
        self.statuses = statuses
        self.other_beats = False

    def sleep(self, seconds: float) -> None:
        before = self.ms
        self.ms += int(seconds * 1000)
        beat_ms = int(HEARTBEAT_S * 1000)
        if self.other_beats and self.ms // beat_ms > before // beat_ms:
            self.statuses.put_connector_status(NAME, StatusState.RUNNING, OTHER, 1)


class TimedStatuses(StatusWrites):
    """A status topic whose records carry the fake clock's timestamps."""

    def __init__(self) -> None:
        self.records: list[tuple[str, bytes | None, int]] = []
        self.clock: Clock | None = None

    def _send(self, key: str, value: bytes | None) -> None:
        assert self.clock is not None
        self.records.append((key, value, self.clock.ms))

    def read_to_end(self, timeout_s: float = 30.0) -> StatusSnapshot:
        snapshot = StatusSnapshot()
        for key, value, ms in self.records:
            snapshot.apply(key, value, ms)
        return snapshot

    def ensure_topic(self, *args: object, **kwargs: object) -> bool:
        return False


OTHER = "elsewhere.example:4242"


@pytest.fixture
def statuses() -> TimedStatuses:
    return TimedStatuses()


@pytest.fixture
def clock(statuses: TimedStatuses) -> Clock:
    statuses.clock = Clock(statuses)
    return statuses.clock


def coordinator(statuses: TimedStatuses, **options: str) -> SourceCoordinator:
    parsed = config(**options)
    stores = CoordinatorStores(
        config_store=MemoryConfigStore(MemoryConfigTopic()),
        status_store=statuses,
        primary_view=CommittedOffsets(),
        global_view=None,
        primary_partitions=25,
        global_partitions=25,
        fence_task=lambda task: None,
    )
    return SourceCoordinator(parsed, stores, CounterSourceConnector, parsed.connector_props)


def claim(driver: SourceCoordinator, clock: Clock, alive: bool = True) -> float:
    """Claim the connector; the seconds it waited."""
    started = clock.ms
    driver.claim(now_ms=lambda: clock.ms, sleep=clock.sleep, alive=lambda pid: alive)
    return (clock.ms - started) / 1000


def test_a_live_owner_is_refused_by_name_within_a_heartbeat(
    statuses: TimedStatuses, clock: Clock
) -> None:
    statuses.put_connector_status(NAME, StatusState.RUNNING, OTHER, 1)
    clock.other_beats = True
    driver = coordinator(statuses)

    with pytest.raises(ConnectorInUseError) as refused:
        claim(driver, clock)

    assert str(refused.value).startswith(
        f"connector {NAME} is RUNNING on another driver, {OTHER}, which is alive"
    )
    assert "set option takeover=true" in str(refused.value)
    assert (clock.ms - 1_000_000) / 1000 <= HEARTBEAT_S + 0.5
    assert statuses.read_to_end().connector_status(NAME).worker_id == OTHER  # type: ignore[union-attr]


def test_a_crashed_owner_is_taken_over_once_its_liveness_lapses(
    statuses: TimedStatuses, clock: Clock, caplog: pytest.LogCaptureFixture
) -> None:
    statuses.put_connector_status(NAME, StatusState.RUNNING, OTHER, 1)
    clock.sleep(4)  # the crash: no heartbeat since
    driver = coordinator(statuses)

    with caplog.at_level(logging.WARNING):
        waited = claim(driver, clock)

    assert LIVENESS_S - 4 <= waited <= LIVENESS_S - 4 + 0.5
    assert f"connector {NAME}: took over from driver {OTHER}, silent for 15 s" in caplog.text


def test_an_owner_whose_process_is_gone_on_this_host_is_taken_over_at_once(
    statuses: TimedStatuses, clock: Clock, caplog: pytest.LogCaptureFixture
) -> None:
    here = f"{socket.gethostname()}:99999999"
    statuses.put_connector_status(NAME, StatusState.RUNNING, here, 1)

    with caplog.at_level(logging.WARNING):
        waited = claim(coordinator(statuses), clock, alive=False)

    assert waited == 0
    assert f"took over from driver {here}, whose process is gone" in caplog.text


def test_takeover_true_takes_a_live_owner_over_saying_so(
    statuses: TimedStatuses, clock: Clock, caplog: pytest.LogCaptureFixture
) -> None:
    statuses.put_connector_status(NAME, StatusState.RUNNING, OTHER, 1)
    clock.other_beats = True

    with caplog.at_level(logging.WARNING):
        waited = claim(coordinator(statuses, takeover="true"), clock)

    assert waited == 0
    assert f"taking it over from driver {OTHER}, which runs it (takeover=true)" in caplog.text


def test_an_owner_that_left_is_no_owner(statuses: TimedStatuses, clock: Clock) -> None:
    statuses.put_connector_status(NAME, StatusState.UNASSIGNED, OTHER, 1)

    assert claim(coordinator(statuses), clock) == 0


def test_a_running_driver_beats_until_it_stops(statuses: TimedStatuses, clock: Clock) -> None:
    driver = coordinator(statuses)
    driver.start()
    written = len(statuses.records)

    driver.beat()

    assert len(statuses.records) == written + 1
    assert statuses.read_to_end().connector_status(NAME).state is StatusState.RUNNING  # type: ignore[union-attr]
    driver.stop()
    after_stop = len(statuses.records)
    driver.beat()
    assert len(statuses.records) == after_stop
    assert statuses.read_to_end().connector_status(NAME).state is StatusState.UNASSIGNED  # type: ignore[union-attr]
