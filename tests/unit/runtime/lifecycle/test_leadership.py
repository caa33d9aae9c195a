"""`begin_generation`'s order over a recording config store: the leader's transactional id is
claimed before the config topic is read (a zombie leader's open transaction is aborted first),
a leader still holding it is reused, and a fenced one is replaced."""

from __future__ import annotations

from typing import Any

import pytest

from spark_eos_connect.protocol.config_records import (
    ClusterConfigSnapshot,
    commit_key,
    encode_commit,
    encode_task_config,
    encode_task_count,
    task_count_key,
    task_key,
)
from spark_eos_connect.runtime.lifecycle.leadership import GenerationStartError, begin_generation
from spark_eos_connect.storage.config_store import LeaderFencedError

NAME = "orders"
TASKS = [{"task": "0"}]


class RecordingStore:
    """A config topic in memory; `calls` tells claims and reads apart, in order."""

    def __init__(self, fenced_writes: int = 0) -> None:
        self.calls: list[str] = []
        self.snapshot = ClusterConfigSnapshot()
        self.offset = 0
        self.fenced_writes = fenced_writes

    def leader(self, timeout_s: float = 30.0) -> FakeLeader:
        self.calls.append("claim")
        return FakeLeader(self)

    def read_to_end(self, timeout_s: float = 30.0) -> ClusterConfigSnapshot:
        self.calls.append("read")
        return self.snapshot

    def write(self, key: str, value: bytes) -> None:
        if self.fenced_writes:
            self.fenced_writes -= 1
            raise LeaderFencedError("a newer leader")
        self.snapshot.apply(key, value, self.offset)
        self.offset += 1


class FakeLeader:
    """The writes `begin_generation` makes, applied to its store's topic."""

    def __init__(self, store: RecordingStore) -> None:
        self.store = store
        self.fenced = False
        self.closed = False

    def put_connector_config(self, name: str, properties: dict[str, str]) -> None:
        self.store.calls.append("write config")

    def put_task_configs(self, name: str, configs: list[dict[str, str]]) -> None:
        self.store.calls.append("write tasks")
        for task, config in enumerate(configs):
            self.store.write(task_key(name, task), encode_task_config(config))
        self.store.write(commit_key(name), encode_commit(len(configs)))

    def put_task_count(self, name: str, task_count: int) -> None:
        self.store.calls.append("write task count")
        self.store.write(task_count_key(name), encode_task_count(task_count))

    def close(self) -> None:
        self.closed = True


def begin(store: Any, leader: Any = None) -> Any:
    return begin_generation(
        store,
        NAME,
        {"connector.class": "X"},
        TASKS,
        fence=lambda task: store.calls.append(f"fence {task}"),
        exactly_once=True,
        leader=leader,
    )


def test_the_leader_id_is_claimed_before_the_config_topic_is_read() -> None:
    store = RecordingStore()

    leader, snapshot = begin(store)

    assert store.calls[:2] == ["claim", "read"]
    assert store.calls.count("claim") == 1
    assert snapshot.task_count_record_follows_latest_task_configs(NAME)
    assert isinstance(leader, FakeLeader)


def test_a_leader_that_still_holds_the_id_is_reused() -> None:
    store = RecordingStore()
    held = FakeLeader(store)

    leader, _ = begin(store, held)

    assert leader is held
    assert "claim" not in store.calls


def test_a_fenced_leader_is_replaced_by_a_new_claim_before_reading_again() -> None:
    store = RecordingStore(fenced_writes=1)
    held = FakeLeader(store)

    leader, _ = begin(store, held)

    assert held.closed and leader is not held
    assert store.calls[:5] == ["read", "write config", "write tasks", "claim", "read"]


def test_a_leader_fenced_on_every_attempt_gives_up() -> None:
    with pytest.raises(GenerationStartError, match="kept fencing"):
        begin(RecordingStore(fenced_writes=100))
