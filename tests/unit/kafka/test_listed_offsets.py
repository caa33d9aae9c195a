"""`listed_offsets`: a ListOffsets answer without an offset (a partition whose leader was just
lost) is a retriable error, never an end of -1001."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from confluent_kafka import IsolationLevel, KafkaException, TopicPartition
from confluent_kafka.admin import OffsetSpec

from spark_eos_connect.kafka.clients import listed_offsets
from spark_eos_connect.kafka.errors import is_retriable, needs_new_metadata
from spark_eos_connect.kafka.retry import call_with_retries


class _Answer:
    def __init__(self, offset: int) -> None:
        self.offset = offset

    def result(self) -> _Answer:
        return self


class _Admin:
    """Answers each ListOffsets request with the next of `answers` (offset per partition)."""

    def __init__(self, *answers: Mapping[int, int]) -> None:
        self.answers = list(answers)

    def list_offsets(self, requests: Mapping[TopicPartition, Any], **_: Any) -> dict[Any, Any]:
        answer = self.answers.pop(0)
        return {tp: _Answer(answer[tp.partition]) for tp in requests}


REQUESTS = {
    TopicPartition("t", 0): OffsetSpec.latest(),
    TopicPartition("t", 1): OffsetSpec.latest(),
}


def test_offsets_are_keyed_by_topic_and_partition() -> None:
    admin: Any = _Admin({0: 501, 1: 7})
    assert listed_offsets(admin, REQUESTS, IsolationLevel.READ_COMMITTED, 5.0) == {
        ("t", 0): 501,
        ("t", 1): 7,
    }


def test_a_partition_without_an_offset_is_a_retriable_error_naming_it() -> None:
    admin: Any = _Admin({0: -1001, 1: 501})
    with pytest.raises(KafkaException) as raised:
        listed_offsets(admin, REQUESTS, IsolationLevel.READ_COMMITTED, 5.0)
    error = raised.value.args[0]
    assert is_retriable(raised.value) and needs_new_metadata(error)
    assert "('t', 0)" in error.str() and "('t', 1)" not in error.str()


def test_retried_until_the_new_leader_answers() -> None:
    admin: Any = _Admin({0: -1001, 1: 501}, {0: -1001, 1: 501}, {0: 501, 1: 501})
    offsets = call_with_retries(
        lambda limit: listed_offsets(admin, REQUESTS, IsolationLevel.READ_COMMITTED, limit),
        "listing offsets",
        30.0,
        sleep=lambda _: None,
    )
    assert offsets == {("t", 0): 501, ("t", 1): 501}
    assert admin.answers == []
