"""`ConfigLeader`'s transaction boundaries and error handling, over a recording producer."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException

from spark_eos_connect.storage.config_store import (
    ConfigLeader,
    ConfigWriteError,
    KafkaConfigStore,
    LeaderFencedError,
    leader_transactional_id,
)


class RecordingProducer:
    """Records transactional calls; `fail_commit` makes the next commit raise it."""

    def __init__(self) -> None:
        self.calls: list[Any] = []
        self.fail_commit: Exception | None = None

    def begin_transaction(self) -> None:
        self.calls.append("begin")

    def produce(self, topic: str, value: bytes | None, key: bytes, partition: int) -> None:
        self.calls.append((key.decode(), value, partition))

    def commit_transaction(self, timeout: float) -> None:
        if self.fail_commit is not None:
            error, self.fail_commit = self.fail_commit, None
            raise error
        self.calls.append("commit")

    def abort_transaction(self, timeout: float) -> None:
        self.calls.append("abort")

    def flush(self, timeout: float) -> int:
        return 0


def _leader() -> tuple[ConfigLeader, RecordingProducer]:
    producer = RecordingProducer()
    return ConfigLeader(producer, "configs", "connect-cluster-g", 5.0), producer


def _transactions(calls: list[Any]) -> list[list[str]]:
    transactions: list[list[str]] = []
    for call in calls:
        if call == "begin":
            transactions.append([])
        elif isinstance(call, tuple):
            transactions[-1].append(call[0])
    return transactions


def test_task_configs_and_their_commit_are_one_transaction() -> None:
    leader, producer = _leader()
    leader.put_task_configs("c", [{"a": "1"}, {"a": "2"}])
    assert producer.calls == [
        "begin",
        ("task-c-0", b'{"properties":{"a":"1"}}', 0),
        ("task-c-1", b'{"properties":{"a":"2"}}', 0),
        ("commit-c", b'{"tasks":2}', 0),
        "commit",
    ]


def test_every_other_write_is_one_transaction() -> None:
    leader, producer = _leader()
    leader.put_connector_config("c", {"connector.class": "X"})
    leader.put_task_count("c", 2)
    leader.put_restart_request("c", True, True)
    leader.stop_connector("c")
    leader.delete_connector("c")
    assert _transactions(producer.calls) == [
        ["connector-c"],
        ["tasks-fencing-c"],
        ["restart-connector-c"],
        ["commit-c", "target-state-c"],  # a stop is seen whole or not at all
        ["connector-c", "target-state-c"],
    ]
    assert producer.calls[-3:-1] == [("connector-c", None, 0), ("target-state-c", None, 0)]


def test_a_fenced_leader_refuses_every_later_write() -> None:
    leader, producer = _leader()
    producer.fail_commit = KafkaException(KafkaError(KafkaError._FENCED, "fenced", fatal=True))
    with pytest.raises(LeaderFencedError, match=r"target-state-c.*newer leader"):
        leader.put_target_state("c", "PAUSED")
    assert leader.fenced
    calls = len(producer.calls)
    with pytest.raises(LeaderFencedError):
        leader.put_connector_config("c", {})
    assert len(producer.calls) == calls  # nothing was even attempted


def test_an_abortable_error_aborts_and_the_leader_stays_usable() -> None:
    leader, producer = _leader()
    producer.fail_commit = KafkaException(
        KafkaError(KafkaError._TIMED_OUT, "slow", txn_requires_abort=True)
    )
    with pytest.raises(ConfigWriteError, match=r"commit-c.*aborted"):
        leader.put_task_configs("c", [])
    assert producer.calls[-1] == "abort"
    leader.put_task_configs("c", [])
    assert producer.calls[-1] == "commit"


def test_a_fatal_error_makes_the_leader_unusable() -> None:
    leader, producer = _leader()
    producer.fail_commit = KafkaException(KafkaError(KafkaError._FATAL, "bad", fatal=True))
    with pytest.raises(ConfigWriteError):
        leader.put_target_state("c", "STOPPED")
    with pytest.raises(ConfigWriteError, match="unusable"):
        leader.put_target_state("c", "STOPPED")
    assert not leader.fenced


def test_a_user_transactional_id_is_dropped_with_a_message(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING):
        store = KafkaConfigStore({"bootstrap.servers": "x:1", "transactional.id": "mine"}, "t", "g")
    assert "transactional.id" not in store.kafka
    assert "connect-cluster-g" in caplog.text
    assert leader_transactional_id("prod") == "connect-cluster-prod"
