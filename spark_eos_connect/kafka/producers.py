"""Producers for source tasks: transactional (exactly once) or idempotent (at least once), and
how their failures read: whether a producer was fenced, whether its transaction must be aborted,
the reason a record was refused. Producers other than librdkafka's (the in-memory twin of
`storage.memory_log`) raise `ProducerRequestError`, which these helpers read as they read a
`KafkaException`; `PRODUCER_ERRORS` names both for code outside `kafka/` to catch.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from confluent_kafka import KafkaError, KafkaException, Producer

from spark_eos_connect.errors import EosConnectError
from spark_eos_connect.kafka.client_settings import with_client_defaults
from spark_eos_connect.kafka.clients import connected
from spark_eos_connect.kafka.errors import is_fatal_placeholder, kafka_error_of, missing_acl

PRODUCER_DEFAULTS: dict[str, Any] = {
    "linger.ms": 20,
    "queue.buffering.max.messages": 1_000_000,
    "queue.buffering.max.kbytes": 1_048_576,
    "batch.size": 1_000_000,
    # Kafka Connect's (Java's) defaults: no compression, and keyed records on the partition
    # murmur2 of the key picks, so a topic is laid out as a Connect worker would lay it out.
    "compression.type": "none",
    "partitioner": "murmur2_random",
}


class ProducerFencedError(EosConnectError):
    """A newer producer with the same transactional id exists: this one is a zombie."""


FENCED_ERRORS = frozenset({"_FENCED", "PRODUCER_FENCED", "INVALID_PRODUCER_EPOCH"})
"""The errors (librdkafka's names) saying a newer producer with the same transactional id
exists."""


class ProducerRequestError(EosConnectError):
    """A producer request that failed, named as Kafka names the failure (`PRODUCER_FENCED`,
    `TOPIC_AUTHORIZATION_FAILED`, ...): what producers other than librdkafka's raise, and report
    as the error of a refused delivery. `reason` is the text a `KafkaError` of that name shows."""

    def __init__(
        self,
        name: str,
        reason: str,
        *,
        txn_requires_abort: bool = False,
        retriable: bool = False,
    ) -> None:
        super().__init__(f"{name}: {reason}")
        self.name = name
        self.reason = reason
        self.abortable = txn_requires_abort
        self.retriable = retriable


ProducerClientError = KafkaException | ProducerRequestError
"""What a producer's calls raise."""

PRODUCER_ERRORS: tuple[type[KafkaException], type[ProducerRequestError]] = (
    KafkaException,
    ProducerRequestError,
)
"""`ProducerClientError`'s classes, for `except`."""


def is_fenced(error: ProducerClientError) -> bool:
    """Whether `error` says this producer was fenced by a newer one."""
    if isinstance(error, ProducerRequestError):
        return error.name in FENCED_ERRORS
    kafka_error: KafkaError = error.args[0]
    return kafka_error.code() in (
        KafkaError._FENCED,
        KafkaError.PRODUCER_FENCED,
        KafkaError.INVALID_PRODUCER_EPOCH,
    )


def is_fenced_delivery(error: Any) -> bool:
    """Whether a delivery report's `KafkaError` says this producer was fenced by a newer one."""
    return isinstance(error, KafkaError) and error.code() in (
        KafkaError._FENCED,
        KafkaError.PRODUCER_FENCED,
        KafkaError.INVALID_PRODUCER_EPOCH,
    )


def fatal_cause(producer: Any, error: ProducerClientError) -> ProducerClientError:
    """What stands behind `error` when it is librdkafka's `_FATAL` placeholder (a call on a
    producer already in a fatal state): a transactional call on that producer raises the
    fatal error itself, e.g. `PRODUCER_FENCED` when a newer producer took its id. Any other
    `error` is returned as it is."""
    if isinstance(error, ProducerRequestError) or not is_fatal_placeholder(kafka_error_of(error)):
        return error
    try:
        producer.abort_transaction(1.0)
    except KafkaException as raised:
        if not is_fatal_placeholder(kafka_error_of(raised)):
            return raised
    return error


def txn_requires_abort(error: ProducerClientError) -> bool:
    """Whether the transaction `error` failed must be aborted (the producer stays usable)."""
    if isinstance(error, ProducerRequestError):
        return error.abortable
    return bool(error.args[0].txn_requires_abort())


def refused_reason(error: ProducerClientError) -> str | None:
    """Why a record was refused in `produce()`: the standard text of the error's code (the
    name for other producers), or None when `error` carries no Kafka error."""
    if isinstance(error, ProducerRequestError):
        return error.reason
    kafka_error = kafka_error_of(error)
    return None if kafka_error is None else str(KafkaError(kafka_error.code()).str())


def delivery_error_text(error: KafkaError | ProducerRequestError) -> str:
    """The text of a delivery report's error."""
    if isinstance(error, ProducerRequestError):
        return error.reason
    return str(error.str())


def transactional_producer(
    kafka: Mapping[str, Any], transactional_id: str, timeout_s: float = 60.0
) -> Producer:
    """A producer that has claimed `transactional_id`, fencing every older one."""
    config = {**PRODUCER_DEFAULTS, **kafka, "transactional.id": transactional_id, "log_level": 3}
    producer = connected(Producer(with_client_defaults(config)))
    try:
        producer.init_transactions(timeout_s)
    except KafkaException as error:
        denied = missing_acl(error, "Write and Describe", transactional_id, kafka)
        if denied is not None:
            raise denied from None
        raise
    return producer


class _Committing(Protocol):
    def commit_transaction(self, timeout: float = ...) -> None: ...


class _Producing(Protocol):
    def produce(
        self, topic: str, value: Any = ..., key: Any = ..., *args: Any, **extra: Any
    ) -> None: ...

    def poll(self, timeout: float = ...) -> int: ...


def commit_transaction(
    producer: _Committing, timeout_s: float, clock: Callable[[], float] = time.monotonic
) -> None:
    """Commit `producer`'s open transaction, calling again while the failure is retriable (a
    coordinator or leader moving, a request timing out: librdkafka's documented way) until
    `timeout_s`. An abortable or fatal error is raised at once: the caller aborts, or fails."""
    deadline = clock() + timeout_s
    while True:
        try:
            producer.commit_transaction(max(1.0, deadline - clock()))
            return
        except ProducerRequestError as error:
            if not error.retriable or error.abortable or clock() >= deadline:
                raise
        except KafkaException as error:
            kafka_error = error.args[0] if error.args else None
            if not isinstance(kafka_error, KafkaError) or not kafka_error.retriable():
                raise
            if kafka_error.txn_requires_abort() or clock() >= deadline:
                raise


def fence_transactional_id(
    kafka: Mapping[str, Any], transactional_id: str, timeout_s: float = 60.0
) -> None:
    """Fence every producer using `transactional_id` and resolve its open transaction."""
    transactional_producer(kafka, transactional_id, timeout_s).flush(0)


def idempotent_producer(kafka: Mapping[str, Any]) -> Producer:
    """A non-transactional producer with idempotence on (at-least-once mode)."""
    return connected(
        Producer(
            with_client_defaults(
                {**PRODUCER_DEFAULTS, **kafka, "enable.idempotence": True, "log_level": 3}
            )
        )
    )


def produce(
    producer: _Producing, topic: str, value: bytes | None, key: bytes | None, **extra: Any
) -> None:
    """Produce, waiting for queue space instead of failing when the local queue is full."""
    while True:
        try:
            producer.produce(topic, value, key, **extra)
            return
        except BufferError:
            producer.poll(0.05)
