"""`runtime.lifecycle.connector_owner`: one owner of a connector, the same for a source query's
coordinator and a sink query's lifecycle (issue 50). Each test runs for both sides, each side's
real driver over the in-memory config and status topics, on a fake clock: the claim, the
heartbeat, a live owner refused, a stale one taken over, a takeover noticed, and leaving."""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from collections.abc import Iterator
from unittest import mock

import pytest

import spark_eos_connect.sink.lifecycle as sink_lifecycle
from spark_eos_connect.protocol.config_records import TargetState
from spark_eos_connect.protocol.status_records import StatusRecord, StatusState
from spark_eos_connect.runtime.lifecycle.connector_owner import ConnectorInUseError, ConnectorOwner
from spark_eos_connect.runtime.lifecycle.liveness import HEARTBEAT_S, LIVENESS_S
from spark_eos_connect.sink.lifecycle import SinkLifecycle, SinkTakenOverError, parse_sink_lifecycle
from spark_eos_connect.source.coordinator import (
    ConnectorTakenOverError,
    CoordinatorStores,
    SourceCoordinator,
)
from spark_eos_connect.storage.memory import (
    MemoryConfigStore,
    MemoryConfigTopic,
    MemoryStatusStore,
    MemoryTopic,
)
from spark_eos_connect.testing import CounterSourceConnector
from tests.unit.source.test_coordinator_on_twins import NAME, CommittedOffsets, config

OTHER = "elsewhere.example:4242"
TRACE = "Traceback (most recent call last):\nRuntimeError: the task failed"


class Cluster:
    """The config and status topics the drivers share, and a clock in ms whose `sleep` moves
    it on, letting the driver `OTHER` beat meanwhile when `other_beats`."""

    def __init__(self) -> None:
        self.ms = 1_000_000
        self.configs = MemoryConfigTopic()
        self.status_topic = MemoryTopic("status", clock=lambda: self.ms)
        self.statuses = MemoryStatusStore(self.status_topic)
        self.other_beats = False
        self._other_beat_at = self.ms

    def sleep(self, seconds: float) -> None:
        self.ms += int(seconds * 1000)
        due = self.other_beats and self.ms - self._other_beat_at >= HEARTBEAT_S * 1000
        if due:  # the other driver, alive, beats
            self._other_beat_at = self.ms
            self.statuses.put_connector_status(NAME, StatusState.RUNNING, OTHER, 1)

    def connector(self) -> StatusRecord | None:
        return self.statuses.read_to_end().connector_status(NAME)

    def tasks(self) -> dict[int, StatusRecord]:
        return dict(self.statuses.read_to_end().task_statuses(NAME))


class Side(ABC):
    """One side's driver of connector `NAME`, named `me`, as its query drives it."""

    taken_over_error: type[Exception]

    def __init__(self, cluster: Cluster, me: str, takeover: bool = False) -> None:
        self.cluster = cluster
        self.me = me
        self.takeover = takeover

    @property
    @abstractmethod
    def owner(self) -> ConnectorOwner:
        """The driver's connector owner."""

    @abstractmethod
    def claim(self) -> None:
        """The query starts: the driver claims the connector (on the fake clock)."""

    @abstractmethod
    def run(self) -> None:
        """After the claim: the connector runs, the driver reports it."""

    @abstractmethod
    def look(self) -> None:
        """The driver's look at the config topic before a micro-batch."""

    @abstractmethod
    def end(self) -> None:
        """The query ends."""

    @abstractmethod
    def task_generation(self) -> int:
        """The generation the side's tasks write their statuses with."""

    def clock(self) -> dict[str, object]:
        return {"now_ms": lambda: self.cluster.ms, "sleep": self.cluster.sleep, "alive": _alive}


def _alive(pid: int) -> bool:
    return True


class SourceSide(Side):
    """A source query: `SourceCoordinator` (claim at open, start, refresh_target_state, stop)."""

    taken_over_error = ConnectorTakenOverError

    def __init__(self, cluster: Cluster, me: str, takeover: bool = False) -> None:
        super().__init__(cluster, me, takeover)
        parsed = config(takeover=str(takeover).lower())
        stores = CoordinatorStores(
            config_store=MemoryConfigStore(cluster.configs),
            status_store=MemoryStatusStore(cluster.status_topic),
            primary_view=CommittedOffsets(),
            global_view=None,
            primary_partitions=25,
            global_partitions=25,
            fence_task=lambda task: None,
        )
        self.driver = SourceCoordinator(
            parsed, stores, CounterSourceConnector, parsed.connector_props
        )
        self.driver.owner.me = me

    @property
    def owner(self) -> ConnectorOwner:
        return self.driver.owner

    def claim(self) -> None:
        self.driver.claim(**self.clock())

    def run(self) -> None:
        self.driver.start()

    def look(self) -> None:
        self.driver.refresh_target_state(force=True)

    def end(self) -> None:
        self.driver.stop()

    def task_generation(self) -> int:
        return self.driver.generation  # in its plans (`status_generation`)


class SinkSide(Side):
    """A sink query: `SinkLifecycle` (claim when created, view, close)."""

    taken_over_error = SinkTakenOverError

    def __init__(self, cluster: Cluster, me: str, takeover: bool = False) -> None:
        super().__init__(cluster, me, takeover)
        self.driver: SinkLifecycle | None = None

    @property
    def owner(self) -> ConnectorOwner:
        assert self.driver is not None
        return self.driver.owner

    def claim(self) -> None:
        options = {"name": NAME, "topics": "t", "connector.class": "FileStreamSink"}
        parsed = parse_sink_lifecycle(
            {
                "kafka.bootstrap.servers": "localhost:1",
                "takeover": str(self.takeover).lower(),
                **options,
            }
        )
        assert parsed is not None
        stores = (
            MemoryConfigStore(self.cluster.configs),
            MemoryStatusStore(self.cluster.status_topic),
        )
        with mock.patch.object(sink_lifecycle, "worker_id", return_value=self.me):
            self.driver = SinkLifecycle(parsed, stores, heartbeat_s=3600, **self.clock())

    def run(self) -> None:
        self.look()

    def look(self) -> None:
        assert self.driver is not None
        self.driver.view(force=True)

    def end(self) -> None:
        assert self.driver is not None
        self.driver.close()

    def task_generation(self) -> int:
        return 0  # sink tasks report under generation 0 (`sink.host`)


@pytest.fixture
def cluster() -> Cluster:
    return Cluster()


@pytest.fixture(params=[SourceSide, SinkSide], ids=["source", "sink"])
def side(request: pytest.FixtureRequest) -> type[Side]:
    return request.param


@pytest.fixture
def driver(side: type[Side], cluster: Cluster) -> Iterator[Side]:
    """This test's driver, "here:1", claimed and running."""
    made = side(cluster, "here:1")
    yield made
    made.owner.stop_heartbeat()


def test_a_claim_clears_an_earlier_runs_task_statuses_and_outranks_its_generation(
    side: type[Side], cluster: Cluster
) -> None:
    cluster.statuses.put_connector_status(NAME, StatusState.UNASSIGNED, "earlier:1", 7)
    cluster.statuses.put_task_status(NAME, 1, StatusState.FAILED, "executor:1", 7, TRACE)
    driver = side(cluster, "here:1")

    driver.claim()

    assert cluster.ms == 1_000_000  # no one to wait for
    assert cluster.tasks() == {}  # a failure shown from now on is this run's
    assert driver.owner.epoch == 8
    driver.run()
    record = cluster.connector()
    assert record is not None
    assert (record.state, record.worker_id) == (StatusState.RUNNING, "here:1")
    assert record.generation >= 8
    driver.owner.stop_heartbeat()


def test_a_running_driver_beats_until_it_ends(driver: Side, cluster: Cluster) -> None:
    driver.claim()
    driver.run()
    before = len(cluster.status_topic.records)
    cluster.sleep(HEARTBEAT_S)

    driver.owner.beat()

    assert len(cluster.status_topic.records) == before + 1
    record = cluster.connector()
    assert record is not None and record.state is StatusState.RUNNING
    assert cluster.statuses.read_to_end().connector_written_at(NAME) == cluster.ms
    driver.end()
    ended = len(cluster.status_topic.records)
    driver.owner.beat()
    assert len(cluster.status_topic.records) == ended  # no beat after the end


def test_a_live_owner_is_refused_naming_it(side: type[Side], cluster: Cluster) -> None:
    cluster.statuses.put_connector_status(NAME, StatusState.RUNNING, OTHER, 1)
    cluster.other_beats = True
    driver = side(cluster, "here:1")

    with pytest.raises(ConnectorInUseError) as refused:
        driver.claim()

    assert str(refused.value).startswith(
        f"connector {NAME} is RUNNING on another driver, {OTHER}, which is alive"
    )
    assert "takeover=true" in str(refused.value)
    assert (cluster.ms - 1_000_000) / 1000 <= HEARTBEAT_S + 0.5  # within a heartbeat
    record = cluster.connector()
    assert record is not None and record.worker_id == OTHER


def test_a_stale_owner_is_taken_over_once_its_liveness_lapses(
    side: type[Side], cluster: Cluster, caplog: pytest.LogCaptureFixture
) -> None:
    cluster.statuses.put_connector_status(NAME, StatusState.RUNNING, OTHER, 1)
    cluster.sleep(4)  # its last beat; silent since
    driver = side(cluster, "here:1")

    with caplog.at_level(logging.WARNING):
        driver.claim()
    driver.run()

    assert LIVENESS_S - 4 <= (cluster.ms - 1_004_000) / 1000 <= LIVENESS_S - 4 + 0.5
    assert f"connector {NAME}: took over from driver {OTHER}, silent for 15 s" in caplog.text
    record = cluster.connector()
    assert record is not None and (record.worker_id, record.generation) == ("here:1", 2)
    driver.owner.stop_heartbeat()


def test_a_takeover_is_noticed_at_the_next_beat_and_the_first_driver_leaves_it_alone(
    side: type[Side], cluster: Cluster, caplog: pytest.LogCaptureFixture
) -> None:
    first = side(cluster, "first:1")
    first.claim()
    first.run()
    second = side(cluster, "second:2", takeover=True)
    with caplog.at_level(logging.WARNING):
        second.claim()
    second.run()
    assert "taking it over from driver first:1, which runs it (takeover=true)" in caplog.text

    first.owner.beat()  # finds the second driver's status of a higher generation

    assert first.owner.taken_over_by == "second:2"
    with pytest.raises(first.taken_over_error, match="taken over by driver second:2"):
        first.look()
    first.end()
    record = cluster.connector()
    assert record is not None
    assert (record.worker_id, record.state) == ("second:2", StatusState.RUNNING)
    late = record.generation - 1  # a late beat of the first driver does not stop the second
    cluster.statuses.put_connector_status(NAME, StatusState.RUNNING, "first:1", late)
    second.owner.beat()
    assert second.owner.taken_over_by is None
    latest = cluster.connector()
    assert latest is not None and latest.worker_id == "second:2"
    second.end()


def test_leaving_reports_the_connector_and_its_tasks_unassigned(
    driver: Side, cluster: Cluster
) -> None:
    driver.claim()
    driver.run()
    cluster.statuses.put_task_status(
        NAME, 0, StatusState.RUNNING, "executor:1", driver.task_generation()
    )

    driver.end()

    record = cluster.connector()
    assert record is not None
    assert (record.state, record.worker_id) == (StatusState.UNASSIGNED, "here:1")
    assert cluster.tasks()[0].state is StatusState.UNASSIGNED


def test_leaving_after_a_task_failed_for_good_reports_the_connector_failed(
    driver: Side, cluster: Cluster
) -> None:
    driver.claim()
    driver.run()
    generation = driver.task_generation()
    cluster.statuses.put_task_status(NAME, 0, StatusState.RUNNING, "executor:1", generation)
    cluster.statuses.put_task_status(NAME, 1, StatusState.FAILED, "executor:2", generation, TRACE)

    driver.end()

    record = cluster.connector()
    assert record is not None and record.state is StatusState.FAILED
    assert record.trace is not None
    assert record.trace.startswith(f"The query running connector {NAME} failed: task 1 failed")
    assert record.trace.endswith(TRACE)
    tasks = cluster.tasks()
    assert (tasks[1].state, tasks[1].trace) == (StatusState.FAILED, TRACE)
    assert tasks[0].state is StatusState.UNASSIGNED


def test_a_stopped_connector_stays_stopped_when_its_query_ends(
    driver: Side, cluster: Cluster
) -> None:
    driver.claim()
    driver.run()
    herder = MemoryConfigStore(cluster.configs).leader()
    herder.put_target_state(NAME, TargetState.STOPPED)
    driver.look()
    stopped = cluster.connector()
    assert stopped is not None and stopped.state is StatusState.STOPPED

    driver.end()

    assert cluster.connector() == stopped
