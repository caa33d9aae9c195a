"""Retrying Kafka requests that fail for a passing reason, in one place.

On a cluster of several brokers a request can fail while leadership moves: a broker is killed
or restarted, a partition gets a new leader (`NOT_LEADER_OR_FOLLOWER`, `FENCED_LEADER_EPOCH`),
a group or transaction coordinator moves, a topic created a moment ago is not yet known to the
broker asked. Such a failure is over in seconds. `call_with_retries` gives each attempt a short
time limit of its own (a request to a dead broker must not take the caller's whole time limit)
and retries with a bounded backoff until the caller's overall time limit; any other error is
raised at once. Which errors are passing ones is `kafka.errors`' to say (`is_retriable`,
imported here for the modules that ask this one).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from confluent_kafka import KafkaError, KafkaException

from spark_eos_connect.errors import EosConnectError
from spark_eos_connect.kafka.errors import is_retriable, kafka_error_of

log = logging.getLogger(__name__)

T = TypeVar("T")

REQUEST_TIMEOUT_S = 5.0
"""Time limit of one attempt: a leader elected after a broker loss answers well within it."""
FIRST_BACKOFF_S = 0.1
MAX_BACKOFF_S = 1.0


class KafkaTimeoutError(EosConnectError, TimeoutError):
    """A Kafka operation did not finish within its time limit."""


class KafkaRetriesExhaustedError(KafkaTimeoutError):
    """A request kept failing for a passing reason until its overall time limit."""


@dataclass(frozen=True)
class Backoff:
    """Waits between attempts: doubling from `first_s`, never above `max_s`."""

    first_s: float = FIRST_BACKOFF_S
    max_s: float = MAX_BACKOFF_S

    def delay(self, attempt: int) -> float:
        """The wait after failed attempt number `attempt` (1 for the first)."""
        return float(min(self.max_s, self.first_s * (2 ** max(0, attempt - 1))))


def call_with_retries(
    request: Callable[[float], T],
    what: str,
    timeout_s: float,
    request_timeout_s: float = REQUEST_TIMEOUT_S,
    backoff: Backoff = Backoff(),
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    before_retry: Callable[[KafkaError | None], None] | None = None,
) -> T:
    """`request(limit)`'s result, retried while it fails with a retriable Kafka error.

    `request` gets the time limit of its attempt: `request_timeout_s`, or less near the end of
    `timeout_s`. A non-retriable error is raised as it is; retriable failures past
    `timeout_s` raise `KafkaRetriesExhaustedError` naming `what` and the last error.
    `before_retry(error)` runs before each new attempt, e.g. to renew a client whose cached
    leaders are out of date (`needs_new_metadata`).
    """
    deadline = clock() + timeout_s
    attempt = 0
    while True:
        attempt += 1
        limit = max(0.5, min(request_timeout_s, deadline - clock()))
        try:
            return request(limit)
        except KafkaException as error:
            if not is_retriable(error):
                raise
            wait = backoff.delay(attempt)
            if clock() + wait >= deadline:
                raise KafkaRetriesExhaustedError(
                    f"{what} did not succeed within {timeout_s:g} s ({attempt} attempts); "
                    f"last error: {kafka_error_of(error)}"
                ) from error
            log.info("%s failed (%s); retrying in %.1f s", what, kafka_error_of(error), wait)
            sleep(wait)
            if before_retry is not None:
                before_retry(kafka_error_of(error))
