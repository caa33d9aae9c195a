"""`KafkaMetadata.group_offsets` while the group coordinator is not ready (a fresh broker still
loading its offsets topic): retried within the client timeout, then an error naming the group."""

from __future__ import annotations

from concurrent.futures import Future
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException, TopicPartition

from spark_eos_connect.errors import EosConnectError
from spark_eos_connect.kafka.clients import KafkaAuthorizationError
from spark_eos_connect.runtime.kafka_source import (
    COORDINATOR_NOT_READY,
    KafkaMetadata,
    retry_while_coordinator_not_ready,
)


class FakeClock:
    """time.monotonic and time.sleep for the retry loop: sleeping moves the clock."""

    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def failing(*codes: int, then: Any = None) -> Any:
    """A call raising KafkaException(code) for each of `codes` in turn, then returning `then`."""
    left = list(codes)
    calls: list[int] = []

    def call() -> Any:
        calls.append(1)
        if left:
            raise KafkaException(KafkaError(left.pop(0)))
        return then

    call.calls = calls  # type: ignore[attr-defined]
    return call


@pytest.mark.parametrize("code", COORDINATOR_NOT_READY)
def test_a_coordinator_not_ready_is_retried_until_it_answers(code: int) -> None:
    clock = FakeClock()
    call = failing(code, code, then={"offsets": 1})

    result = retry_while_coordinator_not_ready(call, "connect-x", 30, clock.sleep, clock)

    assert result == {"offsets": 1}
    assert len(call.calls) == 3
    assert len(clock.slept) == 2


def test_after_the_timeout_the_error_names_the_group() -> None:
    clock = FakeClock()
    call = failing(*[KafkaError.COORDINATOR_LOAD_IN_PROGRESS] * 1000)

    with pytest.raises(EosConnectError) as failed:
        retry_while_coordinator_not_ready(call, "connect-x", 2, clock.sleep, clock)

    message = str(failed.value)
    assert message.startswith("the coordinator of consumer group connect-x was not ready within 2s")
    assert "COORDINATOR_LOAD_IN_PROGRESS" in message
    assert 2 <= clock.now < 2.5


def test_other_errors_are_not_retried() -> None:
    clock = FakeClock()
    call = failing(KafkaError.GROUP_AUTHORIZATION_FAILED, then={})

    with pytest.raises(KafkaException):
        retry_while_coordinator_not_ready(call, "connect-x", 30, clock.sleep, clock)

    assert len(call.calls) == 1
    assert clock.slept == []


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
