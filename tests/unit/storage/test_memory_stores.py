"""The in-memory twins of `storage.memory`: the records the Kafka stores write, replayed with the
real protocol snapshots, and a config-topic leader that newer leaders fence."""

from __future__ import annotations

from typing import Any

import pytest

from spark_eos_connect.api.sink import TopicPartition
from spark_eos_connect.kafka.group_errors import ConsumerGroupRefusedError
from spark_eos_connect.ports import (
    ConfigStore,
    GroupOffsets,
    LeaderFencedError,
    OffsetTopics,
    SourceOffsetStore,
    StatusStore,
)
from spark_eos_connect.protocol.config_records import RestartRequest, TargetState
from spark_eos_connect.protocol.offsets_format import encode_offset_key
from spark_eos_connect.protocol.status_records import StatusState
from spark_eos_connect.storage.config_store import ConfigLeader
from spark_eos_connect.storage.memory import (
    MemoryConfigStore,
    MemoryConfigTopic,
    MemoryGroupOffsets,
    MemorySourceOffsets,
    MemoryStatusStore,
    MemoryTopic,
)


class _Recorder:
    """A transactional producer that records what `ConfigLeader` produces, per transaction."""

    def __init__(self) -> None:
        self.transactions: list[list[tuple[bytes, bytes | None]]] = []

    def begin_transaction(self) -> None:
        self.transactions.append([])

    def produce(self, topic: str, value: bytes | None, key: bytes, partition: int) -> None:
        self.transactions[-1].append((key, value))

    def commit_transaction(self, timeout: float) -> None:
        pass

    def abort_transaction(self, timeout: float) -> None:
        pass

    def flush(self, timeout: float) -> int:
        return 0


def _every_write(writer: Any) -> None:
    writer.put_connector_config("c", {"connector.class": "X", "name": "c"})
    writer.put_task_configs("c", [{"a": "1"}, {"a": "2"}])
    writer.put_task_count("c", 2)
    writer.put_target_state("c", TargetState.PAUSED)
    writer.put_restart_request("c", True, False)
    writer.stop_connector("c")
    writer.delete_connector("c")


def test_the_twins_satisfy_the_ports() -> None:
    stores: tuple[ConfigStore, StatusStore, SourceOffsetStore, GroupOffsets] = (
        MemoryConfigStore(),
        MemoryStatusStore(),
        MemorySourceOffsets(),
        MemoryGroupOffsets(),
    )
    assert len(stores) == 4


def test_the_config_writer_writes_what_the_kafka_leader_writes_in_the_same_batches() -> None:
    recorder = _Recorder()
    _every_write(ConfigLeader(recorder, "configs", "connect-cluster-g", 5.0))
    store = MemoryConfigStore()
    batches: list[list[tuple[bytes, bytes | None]]] = []
    topic_append = store.topic.append_as

    def record(epoch: int, records: Any) -> bool:
        batches.append(list(records))
        return topic_append(epoch, records)

    store.topic.append_as = record  # type: ignore[method-assign]
    _every_write(store.leader())

    assert batches == recorder.transactions
    assert len(batches) == 7


def test_config_records_replay_with_connects_semantics() -> None:
    store = MemoryConfigStore()
    assert store.ensure_topic() is True and store.ensure_topic() is False
    leader = store.leader()
    leader.put_connector_config("c", {"name": "c", "tasks.max": "2"})
    leader.put_task_configs("c", [{"t": "0"}, {"t": "1"}])
    leader.put_restart_request("c", True, True)

    snapshot = store.read_to_end()
    assert snapshot.connector_config("c") == {"name": "c", "tasks.max": "2"}
    assert snapshot.task_configs("c") == [{"t": "0"}, {"t": "1"}]
    assert snapshot.pending_fencing("c")
    assert snapshot.restart_requests["c"] == RestartRequest("c", True, True)

    leader.put_task_count("c", 2)
    assert not store.read_to_end().pending_fencing("c")
    leader.stop_connector("c")
    snapshot = store.read_to_end()
    assert snapshot.target_state("c") is TargetState.STOPPED
    assert snapshot.task_configs("c") == [] and snapshot.committed_task_count("c") == 0

    leader.delete_connector("c")
    assert store.read_to_end().connectors() == []


def test_stores_sharing_a_topic_see_each_others_writes_once_they_read() -> None:
    topic = MemoryConfigTopic()
    herder, driver = MemoryConfigStore(topic), MemoryConfigStore(topic)
    driver.leader().put_connector_config("c", {"name": "c"})

    assert herder.snapshot.connectors() == []  # not read yet
    assert herder.read_to_end().connectors() == ["c"]
    assert herder.snapshot.connectors() == ["c"]


def test_a_newer_leader_fences_the_older_one_which_writes_nothing() -> None:
    store = MemoryConfigStore()
    old = store.leader()
    old.put_connector_config("c", {"name": "c"})
    new = MemoryConfigStore(store.topic).leader()

    assert not old.fenced
    with pytest.raises(LeaderFencedError, match="fenced by a newer leader"):
        old.put_target_state("c", TargetState.PAUSED)
    assert old.fenced
    with pytest.raises(LeaderFencedError):
        old.put_connector_config("d", {"name": "d"})

    new.put_connector_config("e", {"name": "e"})
    snapshot = store.read_to_end()
    assert snapshot.connectors() == ["c", "e"]
    assert snapshot.target_state("c") is TargetState.STARTED  # the PAUSED write never landed


def test_status_records_replay_into_the_snapshot() -> None:
    topic = MemoryTopic("status")
    writer, reader = MemoryStatusStore(topic), MemoryStatusStore(topic)
    writer.put_connector_status("c", StatusState.RUNNING, "w1", 3)
    writer.put_task_status("c", 0, "FAILED", "w1", 3, trace="boom")
    writer.put_task_status("c", 1, "RUNNING", "w1", 3)

    statuses = reader.read_to_end()
    connector = statuses.connector_status("c")
    assert connector is not None and connector.state is StatusState.RUNNING
    failed = statuses.task_status("c", 0)
    assert failed is not None and failed.trace == "boom" and failed.generation == 3

    writer.delete_task_status("c", 0)
    assert sorted(reader.read_to_end().task_statuses("c")) == [1]
    writer.delete_connector_status("c")
    assert reader.read_to_end().connector_status("c") is None
    assert reader.read_to_end().task_statuses("c") == {}  # a connector tombstone drops its tasks


def test_source_offsets_are_replayed_per_topic_from_connects_bytes() -> None:
    offsets = MemorySourceOffsets(group_id="g")
    topics = OffsetTopics("global", "own")
    offsets.seed("global", "c", [({"f": "a"}, {"pos": 1}), ({"f": "b"}, {"pos": 2})])
    offsets.seed("global", "other", [({"f": "a"}, {"pos": 9})])

    assert offsets.per_topic("c", topics) == {
        "global": {
            '{"f":"a"}': ({"f": "a"}, {"pos": 1}),
            '{"f":"b"}': ({"f": "b"}, {"pos": 2}),
        },
        "own": {},
    }

    offsets.fence_tasks("c", 2)
    offsets.write("c", topics, [({"f": "a"}, {"pos": 5}), ({"f": "b"}, None)])
    found = offsets.per_topic("c", topics)
    assert found["own"] == {'{"f":"a"}': ({"f": "a"}, {"pos": 5})}
    assert found["global"] == found["own"]  # the secondary copy, tombstone included
    assert offsets.fenced == ["g-c-0", "g-c-1"]
    assert offsets.transactions == ["g-c"]
    assert offsets.topics["own"].records[0][0] == encode_offset_key("c", {"f": "a"})


def test_source_offsets_without_exactly_once_neither_fence_nor_use_transactions() -> None:
    offsets = MemorySourceOffsets(exactly_once=False)
    offsets.fence_tasks("c", 3)
    offsets.write("c", OffsetTopics("global"), [({"f": "a"}, {"pos": 1})])

    assert offsets.fenced == [] and offsets.transactions == []
    assert list(offsets.topics) == ["global"]


def test_group_offsets_refuse_changes_while_the_group_has_members() -> None:
    groups = MemoryGroupOffsets()
    tp = TopicPartition("t", 0)
    groups.alter("s", "connect-s", {tp: 4})
    assert groups.committed("connect-s") == {tp: 4}
    assert groups.committed("connect-none") == {}

    groups.members["connect-s"] = 1
    with pytest.raises(ConsumerGroupRefusedError, match="active members"):
        groups.alter("s", "connect-s", {tp: 1})
    with pytest.raises(ConsumerGroupRefusedError, match="cannot be reset"):
        groups.delete("s", "connect-s")
    assert groups.committed("connect-s") == {tp: 4}

    groups.members["connect-s"] = 0
    groups.delete("s", "connect-s")
    groups.delete("s", "connect-s")  # idempotent
    assert groups.committed("connect-s") == {}
