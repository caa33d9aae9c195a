"""The `Herder` on the in-memory twins of `storage.memory`, without a broker: connector configs,
target states, restarts, deletion, KIP-875's offsets (source and sink) and a fenced leader that
re-reads the config topic and decides again. The real-broker versions are in
tests/integration/rest/."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, ClassVar

import pytest

from spark_eos_connect.api.config import ConfigDef, ConfigType
from spark_eos_connect.api.sink import SinkConnector, SinkRecord, SinkTask, TopicPartition
from spark_eos_connect.api.source import SourceConnector, SourceRecord, SourceTask
from spark_eos_connect.errors import ConfigError
from spark_eos_connect.herder import (
    BadRequestError,
    ConflictError,
    Herder,
    HerderError,
    NotFoundError,
    WorkerSettings,
)
from spark_eos_connect.herder.entities import modified_message
from spark_eos_connect.herder.stores import HerderStores
from spark_eos_connect.ports import LeaderFencedError
from spark_eos_connect.protocol.config_records import RestartRequest, TargetState
from spark_eos_connect.runtime.liveness import LIVENESS_S
from spark_eos_connect.storage.memory import (
    MemoryConfigStore,
    MemoryConfigTopic,
    MemoryConfigWriter,
    MemoryGroupOffsets,
    MemorySourceOffsets,
    MemoryStatusStore,
)

WORKER = "herder-worker"
SOURCE = f"{__name__}.RecordingSource"
SINK = f"{__name__}.RecordingSink"
STOP_FIRST = "Connectors must be in the STOPPED state before their offsets can be modified"


class _SourceTask(SourceTask):
    def start(self, props: dict[str, str]) -> None:
        pass

    def stop(self) -> None:
        pass

    def poll(self) -> list[SourceRecord] | None:
        return None


class RecordingSource(SourceConnector):
    """Records every alter_offsets call; ``reject`` makes it refuse, ``handled`` its answer."""

    calls: ClassVar[list[list[tuple[dict[str, Any], dict[str, Any] | None]]]] = []

    def config_def(self) -> ConfigDef:
        return (
            ConfigDef()
            .define("handled", ConfigType.BOOLEAN, False)
            .define("reject", ConfigType.STRING, None)
            .define("db.password", ConfigType.PASSWORD, None)
        )

    def start(self, props: dict[str, str]) -> None:
        pass

    def stop(self) -> None:
        pass

    def task_class(self) -> type[SourceTask]:
        return _SourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [{}]

    def alter_offsets(
        self, config: dict[str, str], offsets: list[tuple[dict[str, Any], dict[str, Any] | None]]
    ) -> bool:
        RecordingSource.calls.append(list(offsets))
        if config.get("reject"):
            raise ConfigError(config["reject"])
        return config.get("handled") == "true"


class _SinkTask(SinkTask):
    def start(self, props: dict[str, str]) -> None:
        pass

    def stop(self) -> None:
        pass

    def put(self, records: list[SinkRecord]) -> None:
        pass


class RecordingSink(SinkConnector):
    """Records every alter_offsets call and accepts them (handled)."""

    calls: ClassVar[list[dict[TopicPartition, int | None]]] = []

    def config_def(self) -> ConfigDef:
        return ConfigDef()

    def start(self, props: dict[str, str]) -> None:
        pass

    def stop(self) -> None:
        pass

    def task_class(self) -> type[SinkTask]:
        return _SinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [{}]

    def alter_offsets(
        self, config: dict[str, str], offsets: dict[TopicPartition, int | None]
    ) -> bool:
        RecordingSink.calls.append(dict(offsets))
        return True


class Cluster:
    """A herder on twins, plus a driver sharing its topics (claims leadership, reports states)."""

    def __init__(self, exactly_once: bool = True) -> None:
        self.settings = WorkerSettings(
            group_id="g",
            offsets_topic="offsets",
            worker_id=WORKER,
            exactly_once=exactly_once,
            plugin_packages=(__name__,),
        )
        self.configs = MemoryConfigStore()
        self.statuses = MemoryStatusStore()
        self.source_offsets = MemorySourceOffsets("g", exactly_once)
        self.groups = MemoryGroupOffsets()
        stores = HerderStores(
            self.configs, self.statuses, self.source_offsets, self.groups, lambda _: "cluster-1"
        )
        self.herder = Herder(settings=self.settings, stores=stores).start()
        self.driver_configs = MemoryConfigStore(self.configs.topic)
        self.driver_statuses = MemoryStatusStore(self.statuses.topic)

    def snapshot(self) -> Any:
        return MemoryConfigStore(self.configs.topic).read_to_end()

    def run_tasks(self, name: str, tasks: int, states: list[str] | None = None) -> None:
        """Plays a driver: task configs, task-count record, RUNNING statuses."""
        leader = self.driver_configs.leader()  # fences the herder's leader
        leader.put_task_configs(name, [{"task.id": str(n)} for n in range(tasks)])
        leader.put_task_count(name, tasks)
        self.driver_statuses.put_connector_status(name, "RUNNING", "driver-1", 1)
        for task, state in enumerate(states or ["RUNNING"] * tasks):
            self.driver_statuses.put_task_status(name, task, state, "driver-1", 1)


@pytest.fixture
def cluster() -> Cluster:
    RecordingSource.calls.clear()
    RecordingSink.calls.clear()
    return Cluster()


def _source(cluster: Cluster, name: str = "src", **extra: str) -> str:
    cluster.herder.create(name, {"connector.class": SOURCE, "tasks.max": "2", **extra})
    return name


def _sink(cluster: Cluster, name: str = "snk") -> str:
    cluster.herder.put_config(name, {"connector.class": SINK, "topics": "in"})
    cluster.groups.alter(name, f"connect-{name}", {TopicPartition("in", 0): 5})
    cluster.groups.alter(name, f"connect-{name}", {TopicPartition("in", 1): 8})
    return name


@contextmanager
def _refused(error: type[HerderError], status: int, match: str) -> Iterator[None]:
    """The block raises `error` matching `match`, with HTTP status `status`."""
    with pytest.raises(error, match=match) as info:
        yield
    assert info.value.status == status


def _offsets(topic: str, *pairs: tuple[int, int]) -> dict[str, Any]:
    return {
        "offsets": [
            {
                "partition": {"kafka_topic": topic, "kafka_partition": p},
                "offset": {"kafka_offset": o},
            }
            for p, o in pairs
        ]
    }


# --- configs ---------------------------------------------------------------------------------


def test_create_list_get_and_secrets_hidden(cluster: Cluster) -> None:
    herder = cluster.herder
    created = herder.create(" src ", {"connector.class": SOURCE, "db.password": "s3cret"})
    info = {key: value for key, value in created.items() if key != "status"}

    assert info == {
        "name": "src",
        "config": {"connector.class": SOURCE, "db.password": "[hidden]", "name": "src"},
        "tasks": [],
        "type": "source",
    }
    assert created["status"] == herder.status("src")["connector"]
    assert herder.connectors() == ["src"]
    assert herder.config("src")["db.password"] == "[hidden]"
    assert cluster.snapshot().connector_config("src")["db.password"] == "s3cret"
    assert herder.connectors_expanded(["info", "bogus"]) == {"src": {"info": info}}
    assert herder.server_info()["kafka_cluster_id"] == "cluster-1"
    with _refused(ConflictError, 409, "already exists"):
        herder.create("src", {"connector.class": SOURCE})
    with _refused(NotFoundError, 404, "Connector nope not found"):
        herder.info("nope")


def test_put_config_creates_then_replaces_and_checks_the_name(cluster: Cluster) -> None:
    herder = cluster.herder
    created, _ = herder.put_config("src", {"connector.class": SOURCE, "tasks.max": 1})
    replaced, info = herder.put_config("src", {"connector.class": SOURCE, "tasks.max": 3})

    assert (created, replaced) == (True, False)
    assert info["config"]["tasks.max"] == "3"  # numbers are stored as strings, as Connect does
    assert cluster.snapshot().connector_config("src")["tasks.max"] == "3"
    with _refused(BadRequestError, 400, "doesn't match connector name in the URL"):
        herder.put_config("src", {"connector.class": SOURCE, "name": "other"})


def test_a_config_change_to_a_connector_a_query_runs_is_refused(cluster: Cluster) -> None:
    name = _source(cluster)
    cluster.run_tasks(name, 1)  # a driver (another worker id) reports RUNNING

    with _refused(ConflictError, 409, "driver-1"):
        cluster.herder.put_config(name, {"connector.class": SOURCE, "tasks.max": "5"})
    assert cluster.snapshot().connector_config(name)["tasks.max"] == "2"


def test_a_connector_created_stopped_is_reported_stopped_by_the_herder(cluster: Cluster) -> None:
    cluster.herder.create("src", {"connector.class": SOURCE}, initial_state="STOPPED")

    assert cluster.snapshot().target_state("src") is TargetState.STOPPED
    status = cluster.herder.status("src")
    assert status["connector"] == {"state": "STOPPED", "worker_id": WORKER}


# --- target states -----------------------------------------------------------------------------


def test_pause_resume_and_stop(cluster: Cluster) -> None:
    herder = cluster.herder
    name = _source(cluster)
    cluster.run_tasks(name, 2)

    herder.pause(name)
    assert cluster.snapshot().target_state(name) is TargetState.PAUSED
    herder.resume(name)
    assert cluster.snapshot().target_state(name) is TargetState.STARTED
    assert [t["state"] for t in herder.status(name)["tasks"]] == ["RUNNING", "RUNNING"]

    herder.stop(name)
    snapshot = cluster.snapshot()
    assert snapshot.target_state(name) is TargetState.STOPPED
    assert snapshot.task_configs(name) == [] and snapshot.committed_task_count(name) == 0
    assert herder.status(name) == {
        "name": name,
        "connector": {"state": "STOPPED", "worker_id": WORKER},
        "tasks": [],
        "type": "source",
    }
    assert cluster.driver_statuses.read_to_end().task_statuses(name) == {}  # cleared
    with _refused(NotFoundError, 404, f"No status found for task {name}-0"):
        herder.task_status(name, 0)
    herder.stop(name)  # idempotent
    herder.pause(name)  # a stopped connector may be paused
    assert cluster.snapshot().target_state(name) is TargetState.PAUSED
    with _refused(NotFoundError, 404, "not found"):
        herder.pause("nope")


# --- restarts ----------------------------------------------------------------------------------


def test_restarts_write_requests_and_answer_with_the_plan(cluster: Cluster) -> None:
    herder = cluster.herder
    name = _source(cluster)
    cluster.run_tasks(name, 2, states=["RUNNING", "FAILED"])

    assert herder.restart(name) is None  # 204
    assert cluster.snapshot().restart_requests[name] == RestartRequest(name, False, False)
    assert herder.restart(name, include_tasks=True, only_failed=True) == {
        "name": name,
        "connector": {"state": "RUNNING", "worker_id": "driver-1"},
        "tasks": [
            {"id": 0, "state": "RUNNING", "worker_id": "driver-1"},
            {"id": 1, "state": "RESTARTING", "worker_id": "driver-1"},
        ],
        "type": "source",
    }
    assert cluster.snapshot().restart_requests[name] == RestartRequest(name, True, True)

    herder.restart_task(name, 1)
    assert cluster.snapshot().restart_requests[name] == RestartRequest(name, True, False)
    with _refused(NotFoundError, 404, f"Task {name}-2 not found"):
        herder.restart_task(name, 2)


def test_a_restart_waits_for_the_task_count_record_of_a_new_generation(cluster: Cluster) -> None:
    name = _source(cluster)
    cluster.run_tasks(name, 1)
    leader = cluster.driver_configs.leader()
    leader.put_task_configs(name, [{"t": "0"}, {"t": "1"}])  # no task-count record yet

    with _refused(ConflictError, 409, "not \n?yet followed by a task-count record"):
        cluster.herder.restart(name)
    leader.put_task_count(name, 2)
    assert cluster.herder.restart(name) is None


# --- delete ------------------------------------------------------------------------------------


def test_delete_tombstones_the_config_and_statuses(cluster: Cluster) -> None:
    herder = cluster.herder
    name = _source(cluster)
    cluster.run_tasks(name, 2)

    herder.delete(name)

    assert herder.connectors() == [] and cluster.snapshot().target_state(name) is None
    statuses = cluster.driver_statuses.read_to_end()
    assert statuses.connector_status(name) is None and statuses.task_statuses(name) == {}
    with _refused(NotFoundError, 404, f"Connector {name} not found"):
        herder.delete(name)


# --- source offsets (KIP-875) ------------------------------------------------------------------


def test_source_offsets_change_only_when_stopped(cluster: Cluster) -> None:
    herder = cluster.herder
    name = _source(cluster)
    cluster.source_offsets.seed("offsets", name, [({"f": "a"}, {"pos": 1})])
    body = {"offsets": [{"partition": {"f": "a"}, "offset": {"pos": 7}}]}

    assert herder.offsets(name) == {"offsets": [{"partition": {"f": "a"}, "offset": {"pos": 1}}]}
    for action in (lambda: herder.alter_offsets(name, body), lambda: herder.reset_offsets(name)):
        with _refused(BadRequestError, 400, STOP_FIRST):
            action()
    herder.pause(name)  # PAUSED is not enough
    with _refused(BadRequestError, 400, f"'/connectors/{name}/stop'"):
        herder.alter_offsets(name, body)
    assert RecordingSource.calls == [] and cluster.source_offsets.fenced == []

    herder.stop(name)
    assert herder.alter_offsets(name, body) == {"message": modified_message(False, reset=False)}
    assert herder.offsets(name) == {"offsets": [{"partition": {"f": "a"}, "offset": {"pos": 7}}]}
    assert RecordingSource.calls == [[({"f": "a"}, {"pos": 7})]]
    assert cluster.source_offsets.fenced == [f"g-{name}-0", f"g-{name}-1"]  # tasks.max tasks
    assert cluster.source_offsets.transactions == [f"g-{name}"]


def test_source_offsets_reset_tombstones_every_partition_of_both_topics(cluster: Cluster) -> None:
    herder = cluster.herder
    name = _source(cluster, handled="true", **{"offsets.storage.topic": "own"})
    cluster.source_offsets.seed("offsets", name, [({"f": "a"}, {"pos": 1})])
    cluster.source_offsets.seed("own", name, [({"f": "a"}, {"pos": 2}), ({"f": "b"}, {"pos": 3})])
    cluster.source_offsets.seed("offsets", "other", [({"f": "a"}, {"pos": 9})])

    assert herder.offsets(name)["offsets"] == [  # the dedicated topic's entry wins
        {"partition": {"f": "a"}, "offset": {"pos": 2}},
        {"partition": {"f": "b"}, "offset": {"pos": 3}},
    ]
    herder.stop(name)
    assert herder.reset_offsets(name) == {"message": modified_message(True, reset=True)}

    assert herder.offsets(name) == {"offsets": []}
    assert RecordingSource.calls == [[({"f": "a"}, None), ({"f": "b"}, None)]]
    assert cluster.source_offsets.per_topic("other", cluster.herder._offset_topics({}))[
        "offsets"
    ] == {'{"f":"a"}': ({"f": "a"}, {"pos": 9})}
    assert herder.reset_offsets(name)["message"] == modified_message(True, reset=True)


def test_a_connector_rejecting_offsets_is_a_400_and_nothing_is_written(cluster: Cluster) -> None:
    name = _source(cluster, reject="positions must grow")
    cluster.herder.stop(name)
    body = {"offsets": [{"partition": {"f": "a"}, "offset": {"pos": 7}}]}

    with _refused(BadRequestError, 400, "rejected the offsets: positions must grow"):
        cluster.herder.alter_offsets(name, body)
    assert cluster.source_offsets.topics == {}


def test_source_offsets_without_exactly_once_fence_nothing() -> None:
    cluster = Cluster(exactly_once=False)
    name = _source(cluster)
    cluster.herder.stop(name)
    body = {"offsets": [{"partition": {"f": "a"}, "offset": {"pos": 7}}]}

    cluster.herder.alter_offsets(name, body)

    assert cluster.source_offsets.fenced == [] and cluster.source_offsets.transactions == []
    assert cluster.herder.offsets(name)["offsets"][0]["offset"] == {"pos": 7}


# --- sink offsets (KIP-875) --------------------------------------------------------------------


def test_sink_offsets_get_patch_delete(cluster: Cluster) -> None:
    herder = cluster.herder
    name = _sink(cluster)
    patch = _offsets("in", (1, 2))

    assert herder.offsets(name) == _offsets("in", (0, 5), (1, 8))
    with _refused(BadRequestError, 400, STOP_FIRST):
        herder.alter_offsets(name, patch)
    herder.stop(name)

    assert herder.alter_offsets(name, patch) == {"message": modified_message(True, reset=False)}
    assert herder.offsets(name) == _offsets("in", (0, 5), (1, 2))
    assert herder.reset_offsets(name) == {"message": modified_message(True, reset=True)}
    assert herder.offsets(name) == {"offsets": []}
    assert RecordingSink.calls == [
        {TopicPartition("in", 1): 2},
        {TopicPartition("in", 0): None, TopicPartition("in", 1): None},
    ]
    assert herder.reset_offsets(name)["message"] == modified_message(True, reset=True)


def test_sink_offsets_refused_while_the_group_has_members_or_for_one_null(
    cluster: Cluster,
) -> None:
    herder = cluster.herder
    name = _sink(cluster)
    herder.stop(name)

    with _refused(BadRequestError, 400, "not supported here \\(in-0\\)"):
        herder.alter_offsets(
            name,
            {
                "offsets": [
                    {"partition": {"kafka_topic": "in", "kafka_partition": 0}, "offset": None}
                ]
            },
        )
    cluster.groups.members[f"connect-{name}"] = 1  # a sink task that has not stopped yet
    with _refused(BadRequestError, 400, f"consumer group connect-{name} still has active"):
        herder.alter_offsets(name, _offsets("in", (0, 1)))
    with _refused(BadRequestError, 400, f"{name} cannot be reset: its consumer group"):
        herder.reset_offsets(name)
    assert herder.offsets(name) == _offsets("in", (0, 5), (1, 8))
    assert RecordingSink.calls == []


# --- a fenced (zombie) leader ------------------------------------------------------------------


def test_a_fenced_leader_rereads_and_redecides(cluster: Cluster) -> None:
    herder = cluster.herder
    name = _source(cluster)  # the herder's leader wrote this
    reads = cluster.configs.reads
    driver = cluster.driver_configs.leader()  # fences it
    driver.put_target_state(name, TargetState.PAUSED)

    herder.resume(name)  # fenced on its first try: reads again, claims again, writes

    assert cluster.snapshot().target_state(name) is TargetState.STARTED
    assert cluster.configs.reads >= reads + 2  # one read per try
    with pytest.raises(LeaderFencedError):  # the herder's new leader fenced the driver's
        driver.delete_connector(name)
    assert herder.connectors() == [name]


def test_a_fenced_leader_decides_on_what_the_newer_leader_wrote(cluster: Cluster) -> None:
    herder = cluster.herder
    name = _source(cluster)
    driver = cluster.driver_configs.leader()  # fences the herder's leader
    driver.delete_connector(name)

    with _refused(NotFoundError, 404, f"Connector {name} not found"):
        herder.pause(name)  # the re-read shows the deletion: nothing is written
    assert cluster.snapshot().target_state(name) is None


class _ContestedStore(MemoryConfigStore):
    """Each leader it hands out is fenced at once by another claim (a leader that keeps
    losing the config topic)."""

    def leader(self, timeout_s: float = 30.0) -> MemoryConfigWriter:
        writer = super().leader(timeout_s)
        self.topic.claim()
        return writer


def test_a_leader_fenced_on_every_try_gives_up_with_a_409() -> None:
    topic = MemoryConfigTopic()
    stores = HerderStores(
        _ContestedStore(topic),
        MemoryStatusStore(),
        MemorySourceOffsets(),
        MemoryGroupOffsets(),
        lambda _: None,
    )
    herder = Herder(settings=WorkerSettings(plugin_packages=(__name__,)), stores=stores)

    with _refused(ConflictError, 409, "Another leader keeps claiming the config topic"):
        herder.create("src", {"connector.class": SOURCE})
    assert MemoryConfigStore(topic).read_to_end().connectors() == []


def test_a_herder_needs_kafka_settings_or_stores() -> None:
    with pytest.raises(ValueError, match="Kafka client settings or its stores"):
        Herder()


# --- a driver that stopped heartbeating (issue 40 item 2) ---------------------------------------


def test_a_running_connector_whose_driver_went_silent_shows_unassigned_saying_why(
    cluster: Cluster,
) -> None:
    herder = cluster.herder
    name = _source(cluster)
    cluster.run_tasks(name, 2)
    written = herder.now_ms()
    herder.now_ms = lambda: written + int(LIVENESS_S * 1000) - 1000  # within the bound

    assert herder.status(name)["connector"] == {"state": "RUNNING", "worker_id": "driver-1"}
    herder.now_ms = lambda: written + int(LIVENESS_S * 1000) + 1000

    status = herder.status(name)
    connector = status["connector"]
    assert connector["state"] == "UNASSIGNED" and connector["worker_id"] == "driver-1"
    assert connector["trace"].startswith("No heartbeat from driver driver-1 for 1")
    assert "its query is not running. Its last status was RUNNING." in connector["trace"]
    assert [task["state"] for task in status["tasks"]] == ["UNASSIGNED", "UNASSIGNED"]
    assert herder.task_status(name, 1)["state"] == "UNASSIGNED"
    assert set(status) == {"name", "connector", "tasks", "type"}  # Connect's shape
    herder.put_config(name, {"connector.class": SOURCE, "tasks.max": "5"})  # no owner now
    assert cluster.snapshot().connector_config(name)["tasks.max"] == "5"


def test_a_failed_connector_stays_failed_however_old(cluster: Cluster) -> None:
    herder = cluster.herder
    name = _source(cluster)
    cluster.run_tasks(name, 1, states=["FAILED"])
    cluster.driver_statuses.put_connector_status(name, "FAILED", "driver-1", 1, "boom")
    herder.now_ms = lambda: 10**15

    status = herder.status(name)

    assert status["connector"]["state"] == "FAILED" and status["connector"]["trace"] == "boom"
    assert [task["state"] for task in status["tasks"]] == ["FAILED"]
