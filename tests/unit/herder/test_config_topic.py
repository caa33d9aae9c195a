"""`config_topic`: a fenced (zombie) leader re-reads the config topic and decides again, once."""

from __future__ import annotations

import pytest

from spark_eos_connect.herder import ConflictError, Herder, NotFoundError, WorkerSettings
from spark_eos_connect.herder.config_topic import ConfigTopic
from spark_eos_connect.herder.stores import HerderStores
from spark_eos_connect.ports import ConfigWriter, LeaderFencedError
from spark_eos_connect.protocol.config_records import ClusterConfigSnapshot, TargetState
from spark_eos_connect.storage.memory import (
    MemoryConfigStore,
    MemoryConfigTopic,
    MemoryConfigWriter,
    MemoryGroupOffsets,
    MemorySourceOffsets,
    MemoryStatusStore,
)
from tests.unit.herder.memory_cluster import PACKAGE, SOURCE, Cluster, add_source, refused


def test_a_fenced_leader_rereads_and_redecides(cluster: Cluster) -> None:
    herder = cluster.herder
    name = add_source(cluster)  # the herder's leader wrote this
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
    name = add_source(cluster)
    driver = cluster.driver_configs.leader()  # fences the herder's leader
    driver.delete_connector(name)

    with refused(NotFoundError, 404, f"Connector {name} not found"):
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
    herder = Herder(settings=WorkerSettings(plugin_packages=(PACKAGE,)), stores=stores)

    with refused(ConflictError, 409, "Another leader keeps claiming the config topic"):
        herder.create("src", {"connector.class": SOURCE})
    assert MemoryConfigStore(topic).read_to_end().connectors() == []


def test_an_action_sees_the_topic_read_to_its_end_and_writes_with_the_leader() -> None:
    store = MemoryConfigStore()
    topic = ConfigTopic(store, timeout_s=1.0)

    def action(snapshot: ClusterConfigSnapshot, leader: ConfigWriter) -> list[str]:
        leader.put_target_state("c", TargetState.PAUSED)
        return snapshot.connectors()

    assert topic.write(action) == []
    assert topic.snapshot().target_state("c") is TargetState.PAUSED
    with pytest.raises(NotFoundError, match="Connector c not found"):
        topic.connector_config(topic.snapshot(), "c")  # a target state alone is no connector
    topic.close()
