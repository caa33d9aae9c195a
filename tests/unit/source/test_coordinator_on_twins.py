"""The driver's coordinator on in-memory stores (no broker): generations, fencing of earlier
task producers, target states, a zombie driver, and what its plans carry."""

from __future__ import annotations

from typing import Any

import pytest

from spark_eos_connect.api.source import SourceConnectorContext
from spark_eos_connect.ports import LeaderFencedError
from spark_eos_connect.protocol.config_records import TargetState
from spark_eos_connect.protocol.status_records import StatusState
from spark_eos_connect.source.config import SourcePipelineConfig, parse_source_pipeline
from spark_eos_connect.source.coordinator import (
    ConnectorFailedError,
    ConnectorTakenOverError,
    CoordinatorStores,
    SourceCoordinator,
)
from spark_eos_connect.storage.memory import (
    MemoryConfigStore,
    MemoryConfigTopic,
    MemoryStatusStore,
)
from spark_eos_connect.testing import CounterSourceConnector

NAME = "counter"


class CommittedOffsets:
    """An offsets topic already read: what tasks committed, per source partition."""

    def __init__(self, offsets: list[tuple[dict[str, Any], dict[str, Any]]] | None = None):
        self.offsets = list(offsets or [])
        self.positions = {0: len(self.offsets)}
        self.catch_ups = 0

    def catch_up(self) -> CommittedOffsets:
        self.catch_ups += 1
        return self

    def offsets_for(self, connector: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        return list(self.offsets) if connector == NAME else []

    def close(self) -> None:
        """Nothing to release."""


def config(**options: str) -> SourcePipelineConfig:
    return parse_source_pipeline(
        {
            "name": NAME,
            "connector.class": "spark_eos_connect.testing.CounterSourceConnector",
            "topic": "data",
            "streams": "4",
            "tasks.max": "2",
            "kafka.bootstrap.servers": "unused:9092",
            **options,
        }
    )


class Driver:
    """One driver's coordinator over a shared config topic, with what it fenced."""

    def __init__(
        self,
        topic: MemoryConfigTopic,
        statuses: MemoryStatusStore,
        offsets: CommittedOffsets,
        connector_class: type[CounterSourceConnector] = CounterSourceConnector,
    ):
        self.fenced: list[int] = []
        self.store = MemoryConfigStore(topic)
        parsed = config()
        stores = CoordinatorStores(
            config_store=self.store,
            status_store=statuses,
            primary_view=offsets,
            global_view=None,
            primary_partitions=25,
            global_partitions=25,
            fence_task=self.fenced.append,
        )
        self.coordinator = SourceCoordinator(
            parsed, stores, connector_class, parsed.connector_props
        )


@pytest.fixture
def topic() -> MemoryConfigTopic:
    return MemoryConfigTopic()


@pytest.fixture
def statuses() -> MemoryStatusStore:
    return MemoryStatusStore()


def test_the_constructor_writes_nothing(
    topic: MemoryConfigTopic, statuses: MemoryStatusStore
) -> None:
    Driver(topic, statuses, CommittedOffsets())

    assert topic.records == []
    assert statuses.read_to_end().connector_status(NAME) is None


def test_start_leads_a_generation_after_fencing_every_task(
    topic: MemoryConfigTopic, statuses: MemoryStatusStore
) -> None:
    driver = Driver(topic, statuses, CommittedOffsets())

    driver.coordinator.start()

    snapshot = MemoryConfigStore(topic).read_to_end()
    assert snapshot.committed_task_count(NAME) == 2
    assert [c["streams.assigned"] for c in snapshot.task_configs(NAME)] == ["0,2", "1,3"]
    assert sorted(driver.fenced) == [0, 1]  # before the new generation's tasks may run
    status = statuses.read_to_end()
    assert status.connector_status(NAME) is not None
    assert status.connector_status(NAME).state is StatusState.RUNNING  # type: ignore[union-attr]
    assert [s.state for s in status.task_statuses(NAME).values()] == [StatusState.RUNNING] * 2


def test_plans_carry_the_generation_and_the_committed_offsets(
    topic: MemoryConfigTopic, statuses: MemoryStatusStore
) -> None:
    committed = [({"stream": 0}, {"position": 41})]
    offsets = CommittedOffsets(committed)
    driver = Driver(topic, statuses, offsets)
    driver.coordinator.start()

    plans = driver.coordinator.plan()

    assert [p.task for p in plans] == [0, 1]
    assert [p.transactional_id for p in plans] == ["eosconnect-counter-0", "eosconnect-counter-1"]
    commit = MemoryConfigStore(topic).read_to_end().latest_commit_offset(NAME)
    assert {p.generation_commit_offset for p in plans} == {commit}
    assert all(p.committed == committed for p in plans)
    assert offsets.catch_ups >= 1  # read up to date before planning


def test_the_connectors_own_offset_reader_reads_the_committed_offsets_when_asked(
    topic: MemoryConfigTopic, statuses: MemoryStatusStore
) -> None:
    offsets = CommittedOffsets([({"stream": 0}, {"position": 41})])
    driver = Driver(topic, statuses, offsets)
    driver.coordinator.start()
    connector = driver.coordinator.connector.connector
    assert connector is not None
    context = connector.context
    assert isinstance(context, SourceConnectorContext)
    reader = context.offset_storage_reader
    caught_up = offsets.catch_ups

    assert reader.offset({"stream": 0}) == {"position": 41}
    assert reader.offset({"stream": 1}) is None
    offsets.offsets.append(({"stream": 1}, {"position": 7}))  # committed since
    assert reader.offsets([{"stream": 1}, {"stream": 0}]) == [
        ({"stream": 1}, {"position": 7}),
        ({"stream": 0}, {"position": 41}),
    ]
    assert offsets.catch_ups >= caught_up + 3  # read again at each question


def test_a_stopped_connector_plans_nothing_and_reports_stopped(
    topic: MemoryConfigTopic, statuses: MemoryStatusStore
) -> None:
    driver = Driver(topic, statuses, CommittedOffsets())
    driver.coordinator.start()
    herder = MemoryConfigStore(topic).leader()  # the REST API's leader fences the driver's
    herder.put_target_state(NAME, TargetState.STOPPED)

    assert driver.coordinator.refresh_target_state(force=True) is TargetState.STOPPED
    assert driver.coordinator.plan() == []
    stopped = statuses.read_to_end().connector_status(NAME)
    assert stopped is not None and stopped.state is StatusState.STOPPED


def test_a_driver_whose_generation_was_replaced_stops_as_a_zombie(
    topic: MemoryConfigTopic, statuses: MemoryStatusStore
) -> None:
    zombie = Driver(topic, statuses, CommittedOffsets())
    zombie.coordinator.start()
    newer = Driver(topic, statuses, CommittedOffsets())
    newer.coordinator.start()  # a restarted driver leads a newer generation

    with pytest.raises(ConnectorTakenOverError, match="newer generation"):
        zombie.coordinator.refresh_target_state(force=True)
    leader = zombie.coordinator.leader
    assert leader is not None
    with pytest.raises(LeaderFencedError):  # nor can it write to the config topic
        leader.put_target_state(NAME, TargetState.PAUSED)


def test_stop_aborts_open_transactions_and_reports_everything_unassigned(
    topic: MemoryConfigTopic, statuses: MemoryStatusStore
) -> None:
    driver = Driver(topic, statuses, CommittedOffsets())
    driver.coordinator.start()
    driver.fenced.clear()

    driver.coordinator.stop()

    assert sorted(driver.fenced) == [0, 1]  # a transaction the stop interrupted is aborted
    status = statuses.read_to_end()
    assert status.connector_status(NAME).state is StatusState.UNASSIGNED  # type: ignore[union-attr]
    tasks = status.task_statuses(NAME)
    assert [tasks[t].state for t in sorted(tasks)] == [StatusState.UNASSIGNED] * 2


def test_a_zombie_stopping_neither_fences_nor_reports(
    topic: MemoryConfigTopic, statuses: MemoryStatusStore
) -> None:
    zombie = Driver(topic, statuses, CommittedOffsets())
    zombie.coordinator.start()
    newer = Driver(topic, statuses, CommittedOffsets())
    newer.coordinator.start()
    zombie.fenced.clear()

    zombie.coordinator.stop()  # without having looked at the config topic since

    assert zombie.fenced == []  # the newer driver's producers keep their transactions
    status = statuses.read_to_end()
    assert status.connector_status(NAME).state is StatusState.RUNNING  # type: ignore[union-attr]


class SplittingFails(CounterSourceConnector):
    """Starts, then fails to make its task configs; counts its stops."""

    stops = 0

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        raise RuntimeError("cannot list the source's streams")

    def stop(self) -> None:
        SplittingFails.stops += 1
        super().stop()


def test_a_connector_failing_to_start_is_stopped_and_the_stores_closed_its_trace_kept(
    topic: MemoryConfigTopic, statuses: MemoryStatusStore
) -> None:
    SplittingFails.stops = 0
    driver = Driver(topic, statuses, CommittedOffsets(), SplittingFails)

    with pytest.raises(ConnectorFailedError, match="cannot list the source's streams"):
        driver.coordinator.begin()

    assert SplittingFails.stops == 1  # started, so stopped: nothing of it keeps running
    assert driver.store.closed
    status = statuses.read_to_end().connector_status(NAME)
    assert status is not None and status.state is StatusState.FAILED
    assert "cannot list the source's streams" in (status.trace or "")
