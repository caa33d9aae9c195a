"""`kafka.retry.call_with_retries`: passing Kafka errors are retried with short attempts and a
bounded backoff inside the caller's time limit; other errors are raised at once."""

from __future__ import annotations

from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException

from spark_eos_connect.kafka.retry import (
    Backoff,
    KafkaRetriesExhaustedError,
    KafkaTimeoutError,
    call_with_retries,
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


class Failing:
    """A request raising KafkaException(code) for each of `codes` in turn, then returning
    `then`; records the time limit each attempt was given."""

    def __init__(self, *codes: int, then: Any = None) -> None:
        self.left = list(codes)
        self.then = then
        self.limits: list[float] = []

    def __call__(self, limit: float) -> Any:
        self.limits.append(limit)
        if self.left:
            raise KafkaException(KafkaError(self.left.pop(0)))
        return self.then


LEADERSHIP_MOVES = [
    KafkaError.FENCED_LEADER_EPOCH,
    KafkaError.NOT_LEADER_FOR_PARTITION,
    KafkaError.LEADER_NOT_AVAILABLE,
    KafkaError.UNKNOWN_TOPIC_OR_PART,
    KafkaError.NOT_COORDINATOR,
    KafkaError.COORDINATOR_LOAD_IN_PROGRESS,
    KafkaError.COORDINATOR_NOT_AVAILABLE,
    KafkaError.REQUEST_TIMED_OUT,
    KafkaError._TIMED_OUT,
    KafkaError._TRANSPORT,
]


@pytest.mark.parametrize("code", LEADERSHIP_MOVES)
def test_a_passing_error_is_retried_until_the_request_succeeds(code: int) -> None:
    clock = FakeClock()
    request = Failing(code, code, then="answer")

    assert call_with_retries(request, "listing offsets", 30, clock=clock, sleep=clock.sleep) == (
        "answer"
    )
    assert len(request.limits) == 3
    assert clock.slept == [0.1, 0.2]


@pytest.mark.parametrize(
    "code",
    [
        KafkaError.TOPIC_AUTHORIZATION_FAILED,
        KafkaError.SASL_AUTHENTICATION_FAILED,
        KafkaError.INVALID_PRODUCER_EPOCH,
        KafkaError._INVALID_ARG,
    ],
)
def test_other_errors_are_raised_at_once(code: int) -> None:
    clock = FakeClock()
    request = Failing(code, then="answer")

    with pytest.raises(KafkaException):
        call_with_retries(request, "listing offsets", 30, clock=clock, sleep=clock.sleep)

    assert len(request.limits) == 1
    assert clock.slept == []


def test_each_attempt_gets_a_short_time_limit_and_never_more_than_is_left() -> None:
    clock = FakeClock()
    request = Failing(*[KafkaError._TIMED_OUT] * 2, then=1)

    def slow_request(limit: float) -> Any:
        clock.now += limit  # the attempt uses its whole time limit, as a dead broker makes it
        return request(limit)

    call_with_retries(slow_request, "x", 12, request_timeout_s=5, clock=clock, sleep=clock.sleep)

    assert request.limits[:2] == [5, 5]
    assert request.limits[2] == pytest.approx(12 - 10 - 0.1 - 0.2)


def test_the_backoff_doubles_up_to_its_bound() -> None:
    backoff = Backoff(first_s=0.1, max_s=1.0)

    assert [backoff.delay(n) for n in range(1, 7)] == [0.1, 0.2, 0.4, 0.8, 1.0, 1.0]


def test_past_the_time_limit_the_error_names_the_request_and_the_last_error() -> None:
    clock = FakeClock()
    request = Failing(*[KafkaError.FENCED_LEADER_EPOCH] * 1000)

    with pytest.raises(KafkaRetriesExhaustedError) as failed:
        call_with_retries(
            request, "finding the end of topic 'configs'", 3, clock=clock, sleep=clock.sleep
        )

    message = str(failed.value)
    assert message.startswith("finding the end of topic 'configs' did not succeed within 3 s")
    assert "FENCED_LEADER_EPOCH" in message
    assert isinstance(failed.value, KafkaTimeoutError)
    assert clock.now <= 3


def test_before_each_retry_the_caller_may_renew_its_client() -> None:
    clock = FakeClock()
    request = Failing(KafkaError.FENCED_LEADER_EPOCH, KafkaError._TIMED_OUT, then="answer")
    seen: list[str] = []

    call_with_retries(
        request,
        "listing offsets",
        30,
        clock=clock,
        sleep=clock.sleep,
        before_retry=lambda error: seen.append(error.name() if error else "none"),
    )

    assert seen == ["FENCED_LEADER_EPOCH", "_TIMED_OUT"]
