"""`producers.commit_transaction`: a retriable commit failure is committed again (librdkafka's
documented way), an abortable or other failure is raised at once for the caller to handle."""

from __future__ import annotations

from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException

from spark_eos_connect.kafka.producers import commit_transaction


class FakeProducer:
    """`commit_transaction` raising `errors` in turn, then succeeding."""

    def __init__(self, *errors: KafkaError) -> None:
        self.errors = list(errors)
        self.commits: list[float] = []

    def commit_transaction(self, timeout: float) -> None:
        self.commits.append(timeout)
        if self.errors:
            raise KafkaException(self.errors.pop(0))


def retriable() -> KafkaError:
    return KafkaError(KafkaError._TIMED_OUT, "coordinator moved", retriable=True)


def test_a_retriable_failure_is_committed_again() -> None:
    producer = FakeProducer(retriable(), retriable())

    commit_transaction(producer, 60)  # type: ignore[arg-type]

    assert len(producer.commits) == 3


@pytest.mark.parametrize(
    "error",
    [
        KafkaError(KafkaError._TIMED_OUT, "abort", retriable=True, txn_requires_abort=True),
        KafkaError(KafkaError.TOPIC_AUTHORIZATION_FAILED, "denied"),
        KafkaError(KafkaError._FENCED, "fenced", fatal=True),
    ],
    ids=["abortable", "not-retriable", "fatal"],
)
def test_other_failures_are_raised_at_once(error: KafkaError) -> None:
    producer = FakeProducer(error)

    with pytest.raises(KafkaException):
        commit_transaction(producer, 60)  # type: ignore[arg-type]

    assert len(producer.commits) == 1


def test_retries_stop_at_the_time_limit() -> None:
    now = [0.0]
    producer = FakeProducer(*[retriable() for _ in range(100)])

    def clock() -> Any:
        now[0] += 10  # each attempt takes ten seconds
        return now[0]

    with pytest.raises(KafkaException):
        commit_transaction(producer, 60, clock=clock)  # type: ignore[arg-type]

    assert len(producer.commits) < 10
