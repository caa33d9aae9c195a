"""`kafka.topic_offsets.TopicOffsets` (under the sink reader's `KafkaMetadata`): consumer-group
offsets while the group coordinator is not ready (a fresh broker still loading its offsets
topic) or moving are retried within the client timeout (`kafka.retry`); read through the Admin
API, committed through a consumer outside the group (`kafka.group_offsets`)."""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import Future
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException, TopicPartition

from spark_eos_connect.kafka.errors import KafkaAuthorizationError
from spark_eos_connect.kafka.topic_offsets import TopicOffsets

KAFKA = {"bootstrap.servers": "127.0.0.1:1", "sasl.username": "u"}


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


class ScriptedOutsider:
    """A group's outsider consumer whose commits fail with `errors` in turn, then succeed."""

    def __init__(self, errors: list[int]) -> None:
        self.errors = list(errors)
        self.requests = 0
        self.groups: list[str] = []
        self.closed = 0

    def __call__(self, kafka: Mapping[str, Any], group: str) -> ScriptedOutsider:
        self.groups.append(group)
        return self

    def commit(self, offsets: list[TopicPartition], asynchronous: bool) -> Any:
        assert not asynchronous
        self.requests += 1
        if self.errors:
            raise KafkaException(KafkaError(self.errors.pop(0)))
        return offsets

    def close(self) -> None:
        self.closed += 1


def metadata_with(admin: FakeAdmin) -> TopicOffsets:
    metadata = TopicOffsets(KAFKA, timeout_s=30, admin=admin)
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


def test_a_commit_goes_through_a_consumer_of_the_group_and_retries_a_moving_coordinator() -> None:
    outsider = ScriptedOutsider(
        [KafkaError.NOT_COORDINATOR, KafkaError.COORDINATOR_LOAD_IN_PROGRESS]
    )

    TopicOffsets(KAFKA, timeout_s=30, outsider=outsider).commit_group_offsets(
        "connect-x", {("t", 0): 7}
    )

    assert outsider.requests == 3 and outsider.groups == ["connect-x"] and outsider.closed == 1


def test_a_commit_refused_for_an_active_member_says_so() -> None:
    outsider = ScriptedOutsider([KafkaError.UNKNOWN_MEMBER_ID])

    with pytest.raises(Exception, match="a group with active members"):
        TopicOffsets(KAFKA, timeout_s=30, outsider=outsider).commit_group_offsets(
            "connect-x", {("t", 0): 7}
        )
    assert outsider.closed == 1
