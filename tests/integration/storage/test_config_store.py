"""The config topic through `KafkaConfigStore` and its leader, against the real broker."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from spark_eos_connect.kafka.clients import admin_client, partition_count
from spark_eos_connect.kafka.producers import transactional_producer
from spark_eos_connect.protocol.config_records import TargetState
from spark_eos_connect.storage.config_store import (
    ConfigReadTimeoutError,
    ConfigTopicError,
    KafkaConfigStore,
    LeaderFencedError,
)

pytestmark = pytest.mark.integration


@pytest.fixture
def store(kafka_config: dict[str, Any], unique_name: Callable[[str], str]) -> KafkaConfigStore:
    config_store = KafkaConfigStore(kafka_config, unique_name("configs"), unique_name("group"))
    config_store.ensure_topic()
    return config_store


def test_ensure_topic_creates_one_compacted_partition(
    kafka_config: dict[str, Any], store: KafkaConfigStore
) -> None:
    assert partition_count(admin_client(kafka_config), store.topic) == 1
    assert store.ensure_topic() is False  # exists now, and is valid


def test_a_config_topic_with_several_partitions_is_refused(
    kafka_config: dict[str, Any], topic_factory: Callable[..., str]
) -> None:
    topic = topic_factory("configs-3", partitions=3)
    with pytest.raises(ConfigTopicError, match=f"{topic}.*3 partitions.*exactly 1"):
        KafkaConfigStore(kafka_config, topic, "g").ensure_topic()


def test_records_have_connect_format_and_reads_are_incremental(
    store: KafkaConfigStore, read_committed: Callable[..., list[Any]]
) -> None:
    leader = store.leader()
    leader.put_connector_config("c", {"connector.class": "Generator", "name": "c"})
    first = store.read_to_end()
    assert first.connectors() == ["c"]
    position = first.last_offset

    leader.put_task_configs("c", [{"t": "0"}, {"t": "1"}])
    leader.put_task_count("c", 2)
    leader.put_restart_request("c", True, False)
    second = store.read_to_end()
    assert second is first  # the live snapshot, caught up from where the last read stopped
    assert second.last_offset > position
    assert second.task_configs("c") == [{"t": "0"}, {"t": "1"}]
    assert second.task_count("c") == 2
    assert not second.pending_fencing("c")
    assert second.restart_requests["c"].include_tasks is True

    raw = {r.key.decode(): r.value for r in read_committed(store.topic)}
    assert raw["connector-c"] == b'{"properties":{"connector.class":"Generator","name":"c"}}'
    assert raw["task-c-1"] == b'{"properties":{"t":"1"}}'
    assert raw["commit-c"] == b'{"tasks":2}'
    assert raw["tasks-fencing-c"] == b'{"task-count":2}'
    assert json.loads(raw["restart-connector-c"]) == {"include-tasks": True, "only-failed": False}


def test_stop_writes_an_empty_task_set_then_stopped(
    store: KafkaConfigStore, read_committed: Callable[..., list[Any]]
) -> None:
    leader = store.leader()
    leader.put_connector_config("s", {"connector.class": "Generator"})
    leader.put_task_configs("s", [{"t": "0"}])
    leader.stop_connector("s")
    keys = [(r.key.decode(), r.value) for r in read_committed(store.topic)]
    assert keys[-2:] == [
        ("commit-s", b'{"tasks":0}'),
        ("target-state-s", b'{"state":"PAUSED","state.v2":"STOPPED"}'),
    ]
    snapshot = store.read_to_end()
    assert snapshot.target_state("s") is TargetState.STOPPED
    assert snapshot.task_configs("s") == []


def test_delete_writes_tombstones_for_config_and_target_state(
    store: KafkaConfigStore, read_committed: Callable[..., list[Any]]
) -> None:
    leader = store.leader()
    leader.put_connector_config("d", {"connector.class": "Generator"})
    leader.put_target_state("d", "PAUSED")
    leader.delete_connector("d")
    tail = [(r.key.decode(), r.value) for r in read_committed(store.topic)][-2:]
    assert tail == [("connector-d", None), ("target-state-d", None)]
    assert not store.read_to_end().contains("d")


def test_zombie_leader_is_fenced_and_leaves_the_topic_clean(
    store: KafkaConfigStore, read_uncommitted: Callable[..., list[Any]]
) -> None:
    leader_a = store.leader()
    leader_a.put_connector_config("z", {"connector.class": "Generator"})
    leader_b = store.leader()  # a newer leader claims connect-cluster-<group.id>

    with pytest.raises(LeaderFencedError, match="fenced by a newer leader"):
        leader_a.put_task_configs("z", [{"from": "a"}, {"from": "a"}])
    with pytest.raises(LeaderFencedError):
        leader_a.put_target_state("z", "PAUSED")
    assert leader_a.fenced

    leader_b.put_task_configs("z", [{"from": "b"}])
    snapshot = store.read_to_end()
    assert snapshot.skipped == 0
    assert snapshot.task_configs("z") == [{"from": "b"}]
    assert snapshot.target_state("z") is TargetState.STARTED
    # Nothing of A's failed writes is even in the log (read_uncommitted shows aborted data too).
    values = [r.value for r in read_uncommitted(store.topic) if r.value]
    assert not any(b'"a"' in value for value in values)


def test_task_configs_and_their_commit_are_one_transaction(
    store: KafkaConfigStore, read_committed: Callable[..., list[Any]]
) -> None:
    """Consecutive offsets: no transaction marker between them, so one transaction; and every
    other write is its own transaction (a marker follows each)."""
    leader = store.leader()
    leader.put_connector_config("one", {"connector.class": "Generator"})
    leader.put_task_configs("one", [{"t": "0"}, {"t": "1"}, {"t": "2"}])
    leader.put_target_state("one", "PAUSED")
    offsets = {r.key.decode(): r.offset for r in read_committed(store.topic)}
    first = offsets["task-one-0"]
    assert [offsets["task-one-1"], offsets["task-one-2"], offsets["commit-one"]] == [
        first + 1,
        first + 2,
        first + 3,
    ]
    assert first == offsets["connector-one"] + 2  # its own transaction's marker in between
    assert offsets["target-state-one"] == offsets["commit-one"] + 2


def test_read_to_end_waits_for_open_transactions_then_times_out(
    store: KafkaConfigStore, kafka_config: dict[str, Any]
) -> None:
    """A reader never decides on a partial write: it waits for the open transaction to end."""
    leader = store.leader()
    leader.put_connector_config("x", {"connector.class": "Generator"})
    store.read_to_end()
    # A transaction left open on the config topic (e.g. a leader that hangs mid-write).
    stuck = transactional_producer(kafka_config, f"stuck-{store.topic}")
    stuck.begin_transaction()
    stuck.produce(store.topic, b'{"properties":{}}', b"task-x-0", partition=0)
    stuck.flush()
    with pytest.raises(ConfigReadTimeoutError, match=f"{store.topic}.*to its end"):
        store.read_to_end(timeout_s=3)
    stuck.abort_transaction(30)
    snapshot = store.read_to_end()
    assert snapshot.task_configs("x") == []
    assert snapshot.committed_task_count("x") is None
