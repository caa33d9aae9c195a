"""`KafkaMetadata.group_offsets` while the group coordinator is not ready (a fresh broker still
loading its offsets topic) or moving: retried within the client timeout (`kafka.retry`)."""

from __future__ import annotations

from concurrent.futures import Future
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException, TopicPartition

from spark_eos_connect.kafka.clients import KafkaAuthorizationError
from spark_eos_connect.runtime.kafka_source import KafkaMetadata


class FakeAdmin:
    """`list_consumer_group_offsets` answering with `errors` in turn, then with `offsets`."""

    def __init__(self, errors: list[int], offsets: list[TopicPartition]) -> None:
        self.errors = list(errors)
        self.offsets = offsets
        self.requests = 0

    def list_consumer_group_offsets(self, request: Any, request_timeout: float) -> Any:
        self.requests += 1
        group = request[0].group_id
        future: Future[Any] = Future()
        if self.errors:
            future.set_exception(KafkaException(KafkaError(self.errors.pop(0))))
        else:
            future.set_result(type("Listed", (), {"topic_partitions": self.offsets})())
        return {group: future}


def metadata_with(admin: FakeAdmin) -> KafkaMetadata:
    metadata = KafkaMetadata(
        {"bootstrap.servers": "127.0.0.1:1", "sasl.username": "u"}, timeout_s=30
    )
    metadata.admin = admin  # type: ignore[assignment]
    return metadata


def test_group_offsets_retries_a_loading_coordinator() -> None:
    admin = FakeAdmin(
        [KafkaError.COORDINATOR_LOAD_IN_PROGRESS, KafkaError.NOT_COORDINATOR],
        [TopicPartition("t", 0, 6), TopicPartition("t", 1, -1001)],
    )

    assert metadata_with(admin).group_offsets("connect-x") == {("t", 0): 6}
    assert admin.requests == 3


def test_group_offsets_still_names_a_missing_acl_at_once() -> None:
    admin = FakeAdmin([KafkaError.GROUP_AUTHORIZATION_FAILED], [])

    with pytest.raises(KafkaAuthorizationError) as denied:
        metadata_with(admin).group_offsets("connect-x")

    assert "it needs Read on Group 'connect-x'" in str(denied.value)
    assert admin.requests == 1
