"""`kafka.group_offsets.KafkaGroupOffsets`, the one Kafka side of a consumer group's offsets:
reads and KIP-875's alterations ride out a group coordinator that moves or is still loading
(retried within the timeout, not failed); a read names a missing ACL at once; the driver's
commit goes through a consumer outside the group; and no other module of the package makes the
group requests."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from concurrent.futures import Future
from typing import Any

import pytest
from confluent_kafka import ConsumerGroupTopicPartitions, KafkaError, KafkaException
from confluent_kafka import TopicPartition as KafkaTopicPartition

from spark_eos_connect.api.sink import TopicPartition
from spark_eos_connect.kafka.errors import KafkaAuthorizationError
from spark_eos_connect.kafka.group_errors import ConsumerGroupError
from spark_eos_connect.kafka.group_offsets import KafkaGroupOffsets

from ..runtime.package_scan import PACKAGE, lines_outside

KAFKA = {"bootstrap.servers": "127.0.0.1:1", "sasl.username": "u"}


def _future(outcome: Any) -> Future[Any]:
    future: Future[Any] = Future()
    if isinstance(outcome, BaseException):
        future.set_exception(outcome)
    else:
        future.set_result(outcome)
    return future


def _error(code: int) -> KafkaException:
    return KafkaException(KafkaError(code))


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

    def commit(self, offsets: list[KafkaTopicPartition], asynchronous: bool) -> Any:
        assert not asynchronous
        self.requests += 1
        if self.errors:
            raise _error(self.errors.pop(0))
        return offsets

    def close(self) -> None:
        self.closed += 1


def test_committed_offsets_are_asked_again_while_the_coordinator_loads_or_moves() -> None:
    listed = ConsumerGroupTopicPartitions(
        "connect-s", [KafkaTopicPartition("t", 0, 42), KafkaTopicPartition("t", 1, -1001)]
    )
    admin = _Admin(
        _error(KafkaError.COORDINATOR_LOAD_IN_PROGRESS), _error(KafkaError.NOT_COORDINATOR), listed
    )

    offsets = KafkaGroupOffsets(KAFKA, timeout_s=30, admin=admin).committed("connect-s")

    assert offsets == {TopicPartition("t", 0): 42} and admin.calls == 3
    assert offsets == {("t", 0): 42}  # the keys are (topic, partition) tuples too


def test_a_group_that_does_not_exist_has_no_committed_offsets() -> None:
    admin = _Admin(_error(KafkaError.GROUP_ID_NOT_FOUND))

    assert KafkaGroupOffsets(KAFKA, timeout_s=30, admin=admin).committed("connect-s") == {}


def test_reading_committed_offsets_names_a_missing_acl_at_once() -> None:
    admin = _Admin(_error(KafkaError.GROUP_AUTHORIZATION_FAILED))

    with pytest.raises(KafkaAuthorizationError) as denied:
        KafkaGroupOffsets(KAFKA, timeout_s=30, admin=admin).committed("connect-x")

    assert "it needs Read on Group 'connect-x'" in str(denied.value)
    assert admin.calls == 1


def test_an_error_no_retry_can_get_past_fails_at_once() -> None:
    admin = _Admin(_error(KafkaError.INVALID_REQUEST))

    with pytest.raises(ConsumerGroupError, match="Could not list the offsets of consumer group"):
        KafkaGroupOffsets(KAFKA, timeout_s=30, admin=admin).committed("connect-s")
    assert admin.calls == 1


def test_an_alteration_is_retried_after_the_coordinator_moved() -> None:
    altered = ConsumerGroupTopicPartitions("connect-s", [KafkaTopicPartition("t", 0, 7)])
    admin = _Admin(_Description(), _error(KafkaError.NOT_COORDINATOR), altered)

    KafkaGroupOffsets(KAFKA, timeout_s=30, admin=admin).alter(
        "s", "connect-s", {TopicPartition("t", 0): 7}
    )

    assert admin.calls == 3


def test_a_commit_goes_through_a_consumer_of_the_group_and_retries_a_moving_coordinator() -> None:
    outsider = ScriptedOutsider(
        [KafkaError.NOT_COORDINATOR, KafkaError.COORDINATOR_LOAD_IN_PROGRESS]
    )

    KafkaGroupOffsets(KAFKA, timeout_s=30, outsider=outsider).commit("connect-x", {("t", 0): 7})

    assert outsider.requests == 3 and outsider.groups == ["connect-x"] and outsider.closed == 1


def test_a_commit_refused_for_an_active_member_says_so() -> None:
    outsider = ScriptedOutsider([KafkaError.UNKNOWN_MEMBER_ID])

    with pytest.raises(ConsumerGroupError, match="a group with active members"):
        KafkaGroupOffsets(KAFKA, timeout_s=30, outsider=outsider).commit("connect-x", {("t", 0): 7})
    assert outsider.closed == 1


def test_nothing_to_commit_asks_nothing() -> None:
    outsider = ScriptedOutsider([])

    KafkaGroupOffsets(KAFKA, timeout_s=30, outsider=outsider).commit("connect-x", {})

    assert outsider.groups == [] and outsider.requests == 0


OWNER = PACKAGE / "kafka" / "group_offsets.py"
GROUP_REQUESTS = re.compile(
    r"\b(list_consumer_group_offsets|alter_consumer_group_offsets|delete_consumer_groups"
    r"|describe_consumer_groups|ConsumerGroupTopicPartitions)\b|\.commit\(offsets="
)


def test_no_other_module_makes_the_group_offsets_requests() -> None:
    offenders = lines_outside(OWNER, GROUP_REQUESTS)

    assert offenders == [], "read and commit a group's offsets with kafka.group_offsets"
    assert GROUP_REQUESTS.search(OWNER.read_text())  # the pattern still sees the one that does
