"""The status topic through `KafkaStatusStore`, against the real broker."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from spark_eos_connect.kafka.clients import admin_client, partition_count
from spark_eos_connect.protocol.murmur2 import default_partition
from spark_eos_connect.protocol.status_records import StatusRecord, StatusState
from spark_eos_connect.storage.status_store import KafkaStatusStore

pytestmark = pytest.mark.integration


@pytest.fixture
def store(kafka_config: dict[str, Any], unique_name: Callable[[str], str]) -> KafkaStatusStore:
    status_store = KafkaStatusStore(kafka_config, unique_name("status"))
    assert status_store.ensure_topic() is True
    return status_store


def test_statuses_round_trip_in_connect_format_on_the_java_partition(
    store: KafkaStatusStore,
    kafka_config: dict[str, Any],
    read_committed: Callable[..., list[Any]],
) -> None:
    assert partition_count(admin_client(kafka_config), store.topic) == 5
    store.put_connector_status("c", StatusState.RUNNING, "w1:8083", 3)
    store.put_task_status("c", 0, "FAILED", "w2:8083", 3, trace="boom")
    store.put_task_status("c", 1, StatusState.RUNNING, "w1:8083", 3)

    snapshot = store.read_to_end()
    assert snapshot.connector_status("c") == StatusRecord(StatusState.RUNNING, "w1:8083", 3)
    assert snapshot.task_statuses("c") == {
        0: StatusRecord(StatusState.FAILED, "w2:8083", 3, "boom"),
        1: StatusRecord(StatusState.RUNNING, "w1:8083", 3),
    }
    raw = {r.key: r for r in read_committed(store.topic)}
    record = raw[b"status-task-c-0"]
    assert record.value == b'{"state":"FAILED","trace":"boom","worker_id":"w2:8083","generation":3}'
    assert record.partition == default_partition(b"status-task-c-0", 5)


def test_tombstones_remove_statuses_and_reads_are_incremental(store: KafkaStatusStore) -> None:
    store.put_connector_status("d", "RUNNING", "w", 1)
    store.put_task_status("d", 0, "RUNNING", "w", 1)
    store.put_task_status("d", 1, "RUNNING", "w", 1)
    assert len(store.read_to_end().task_statuses("d")) == 2

    store.delete_task_status("d", 1)
    assert list(store.read_to_end().task_statuses("d")) == [0]
    store.put_connector_status("d", "STOPPED", "w", 2)
    assert store.read_to_end().connector_status("d").state is StatusState.STOPPED
    store.delete_connector_status("d")
    snapshot = store.read_to_end()
    assert snapshot.connector_status("d") is None
    assert snapshot.task_statuses("d") == {}
    assert snapshot.skipped == 0
