"""A `Herder` on the in-memory twins of `storage.memory`, without a broker, plus a driver sharing
its topics: what the herder's unit tests (tests/unit/herder/test_*.py) run against. The
real-broker versions of those tests are in tests/integration/rest/."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, ClassVar

import pytest

from spark_eos_connect.api.config import ConfigDef, ConfigType
from spark_eos_connect.api.sink import SinkConnector, SinkRecord, SinkTask, TopicPartition
from spark_eos_connect.api.source import SourceConnector, SourceRecord, SourceTask
from spark_eos_connect.errors import ConfigError
from spark_eos_connect.herder import Herder, HerderError, WorkerSettings
from spark_eos_connect.herder.stores import HerderStores
from spark_eos_connect.storage.memory import (
    MemoryConfigStore,
    MemoryGroupOffsets,
    MemorySourceOffsets,
    MemoryStatusStore,
)

WORKER = "herder-worker"
PACKAGE = __name__
"""The package ``plugin.packages`` names, so that requests may name the connectors below."""
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


def add_source(cluster: Cluster, name: str = "src", **extra: str) -> str:
    """A source connector `name` (two tasks at most), created through the herder."""
    cluster.herder.create(name, {"connector.class": SOURCE, "tasks.max": "2", **extra})
    return name


def add_sink(cluster: Cluster, name: str = "snk") -> str:
    """A sink connector `name`, its group holding offsets 5 and 8 of topic ``in``."""
    cluster.herder.put_config(name, {"connector.class": SINK, "topics": "in"})
    cluster.groups.alter(name, f"connect-{name}", {TopicPartition("in", 0): 5})
    cluster.groups.alter(name, f"connect-{name}", {TopicPartition("in", 1): 8})
    return name


@contextmanager
def refused(error: type[HerderError], status: int, match: str) -> Iterator[None]:
    """The block raises `error` matching `match`, with HTTP status `status`."""
    with pytest.raises(error, match=match) as info:
        yield
    assert info.value.status == status


def sink_offsets(topic: str, *pairs: tuple[int, int]) -> dict[str, Any]:
    """A sink connector's offsets body: (partition, offset) pairs of `topic`."""
    return {
        "offsets": [
            {
                "partition": {"kafka_topic": topic, "kafka_partition": p},
                "offset": {"kafka_offset": o},
            }
            for p, o in pairs
        ]
    }
