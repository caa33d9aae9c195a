"""Retrying Kafka requests that fail for a passing reason, in one place.

On a cluster of several brokers a request can fail while leadership moves: a broker is killed
or restarted, a partition gets a new leader (`NOT_LEADER_OR_FOLLOWER`, `FENCED_LEADER_EPOCH`),
a group or transaction coordinator moves, a topic created a moment ago is not yet known to the
broker asked. Such a failure is over in seconds. `call_with_retries` gives each attempt a short
time limit of its own (a request to a dead broker must not take the caller's whole time limit)
and retries with a bounded backoff until the caller's overall time limit; any other error is
raised at once.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from confluent_kafka import KafkaError, KafkaException

from spark_eos_connect.errors import EosConnectError

log = logging.getLogger(__name__)

T = TypeVar("T")

RETRIABLE_ERRORS = frozenset(
    {
        "NOT_LEADER_FOR_PARTITION",  # NOT_LEADER_OR_FOLLOWER in Kafka's Java client
        "LEADER_NOT_AVAILABLE",
        "FENCED_LEADER_EPOCH",
        "UNKNOWN_LEADER_EPOCH",
        "UNKNOWN_TOPIC_OR_PART",
        "UNKNOWN_TOPIC_ID",
        "OFFSET_NOT_AVAILABLE",
        "NOT_COORDINATOR",
        "COORDINATOR_NOT_AVAILABLE",
        "COORDINATOR_LOAD_IN_PROGRESS",
        "NOT_CONTROLLER",
        "NOT_ENOUGH_REPLICAS",
        "NOT_ENOUGH_REPLICAS_AFTER_APPEND",
        "KAFKA_STORAGE_ERROR",
        "NETWORK_EXCEPTION",
        "REQUEST_TIMED_OUT",
        "ELIGIBLE_LEADERS_NOT_AVAILABLE",
        "_TIMED_OUT",
        "_TIMED_OUT_QUEUE",
        "_TRANSPORT",
        "_ALL_BROKERS_DOWN",
        "_WAIT_COORD",
    }
)
"""Kafka errors (librdkafka's names) that a later attempt of the same request can get past."""

REQUEST_TIMEOUT_S = 5.0
"""Time limit of one attempt: a leader elected after a broker loss answers well within it."""
FIRST_BACKOFF_S = 0.1
MAX_BACKOFF_S = 1.0


class KafkaTimeoutError(EosConnectError, TimeoutError):
    """A Kafka operation did not finish within its time limit."""


class KafkaRetriesExhaustedError(KafkaTimeoutError):
    """A request kept failing for a passing reason until its overall time limit."""


def kafka_error_of(error: BaseException | KafkaError) -> KafkaError | None:
    """The `KafkaError` behind `error` (itself, or a `KafkaException`'s), else None."""
    if isinstance(error, KafkaError):
        return error
    first = error.args[0] if isinstance(error, KafkaException) and error.args else None
    return first if isinstance(first, KafkaError) else None


def is_retriable(error: BaseException | KafkaError) -> bool:
    """Whether a later attempt of the request that failed with `error` can succeed."""
    found = kafka_error_of(error)
    if found is None:
        return False
    if found.fatal() or found.txn_requires_abort():
        return False
    return found.name() in RETRIABLE_ERRORS or bool(found.retriable())


STALE_METADATA_ERRORS = frozenset(
    {
        "FENCED_LEADER_EPOCH",
        "UNKNOWN_LEADER_EPOCH",
        "NOT_LEADER_FOR_PARTITION",
        "LEADER_NOT_AVAILABLE",
        "UNKNOWN_TOPIC_OR_PART",
    }
)
"""Errors saying the client asked a broker that no longer leads: its cached metadata is old."""


def needs_new_metadata(error: KafkaError | None) -> bool:
    """Whether a retry after `error` should start from fresh metadata. A long-lived admin
    client asked for offsets again and again kept sending them with its cached, fenced leader
    epoch (FENCED_LEADER_EPOCH for 30 s after a broker loss); a new client does not."""
    return error is not None and error.name() in STALE_METADATA_ERRORS


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
