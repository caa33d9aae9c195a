"""The REST server's consumer-group requests (KIP-875's sink offsets) ride out a group
coordinator that moves or is still loading: retried within the timeout, not failed."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import Future
from typing import Any

import pytest
from confluent_kafka import ConsumerGroupTopicPartitions, KafkaError, KafkaException
from confluent_kafka import TopicPartition as KafkaTopicPartition

from spark_eos_connect.api.sink import TopicPartition
from spark_eos_connect.kafka.consumer_groups import KafkaGroupOffsets
from spark_eos_connect.kafka.group_errors import ConsumerGroupError


def _future(outcome: Any) -> Future[Any]:
    future: Future[Any] = Future()
    if isinstance(outcome, BaseException):
        future.set_exception(outcome)
    else:
        future.set_result(outcome)
    return future


def _loading() -> KafkaException:
    return KafkaException(KafkaError(KafkaError.COORDINATOR_LOAD_IN_PROGRESS))


class _Admin:
    """Answers each group request with the next outcome of `outcomes`."""

    def __init__(self, *outcomes: Any) -> None:
        self.outcomes: Iterator[Any] = iter(outcomes)
        self.calls = 0

    def _next(self, group: str) -> dict[str, Future[Any]]:
        self.calls += 1
        return {group: _future(next(self.outcomes))}

    def list_consumer_group_offsets(self, request: list[Any], **_: Any) -> Any:
        return self._next(request[0].group_id)

    def alter_consumer_group_offsets(self, request: list[Any], **_: Any) -> Any:
        return self._next(request[0].group_id)

    def describe_consumer_groups(self, groups: list[str], **_: Any) -> Any:
        return self._next(groups[0])


class _Description:
    members: list[Any] = []


def test_committed_offsets_are_asked_again_while_the_coordinator_loads() -> None:
    listed = ConsumerGroupTopicPartitions("connect-s", [KafkaTopicPartition("t", 0, 42)])
    admin = _Admin(_loading(), _loading(), listed)

    offsets = KafkaGroupOffsets({}, timeout_s=30, admin=admin).committed("connect-s")

    assert offsets == {TopicPartition("t", 0): 42} and admin.calls == 3


def test_an_alteration_is_retried_after_the_coordinator_moved() -> None:
    moved = KafkaException(KafkaError(KafkaError.NOT_COORDINATOR))
    altered = ConsumerGroupTopicPartitions("connect-s", [KafkaTopicPartition("t", 0, 7)])
    admin = _Admin(_Description(), moved, altered)

    KafkaGroupOffsets({}, timeout_s=30, admin=admin).alter(
        "s", "connect-s", {TopicPartition("t", 0): 7}
    )

    assert admin.calls == 3


def test_an_error_no_retry_can_get_past_fails_at_once() -> None:
    refused = KafkaException(KafkaError(KafkaError.INVALID_REQUEST))
    admin = _Admin(refused)

    with pytest.raises(ConsumerGroupError, match="Could not list the offsets of consumer group"):
        KafkaGroupOffsets({}, timeout_s=30, admin=admin).committed("connect-s")
    assert admin.calls == 1
