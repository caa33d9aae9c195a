"""Producers for source tasks: transactional (exactly once) or idempotent (at least once)."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from confluent_kafka import KafkaError, KafkaException, Producer

from spark_eos_connect.errors import EosConnectError
from spark_eos_connect.kafka.clients import connected, missing_acl

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


def is_fenced(error: KafkaException) -> bool:
    """Whether `error` says this producer was fenced by a newer one."""
    kafka_error: KafkaError = error.args[0]
    return kafka_error.code() in (
        KafkaError._FENCED,
        KafkaError.PRODUCER_FENCED,
        KafkaError.INVALID_PRODUCER_EPOCH,
    )


def transactional_producer(
    kafka: Mapping[str, Any], transactional_id: str, timeout_s: float = 60.0
) -> Producer:
    """A producer that has claimed `transactional_id`, fencing every older one."""
    config = {**PRODUCER_DEFAULTS, **kafka, "transactional.id": transactional_id, "log_level": 3}
    producer = connected(Producer(config))
    try:
        producer.init_transactions(timeout_s)
    except KafkaException as error:
        denied = missing_acl(error, "Write and Describe", transactional_id, kafka)
        if denied is not None:
            raise denied from None
        raise
    return producer


def commit_transaction(
    producer: Producer, timeout_s: float, clock: Callable[[], float] = time.monotonic
) -> None:
    """Commit `producer`'s open transaction, calling again while the failure is retriable (a
    coordinator or leader moving, a request timing out: librdkafka's documented way) until
    `timeout_s`. An abortable or fatal error is raised at once: the caller aborts, or fails."""
    deadline = clock() + timeout_s
    while True:
        try:
            producer.commit_transaction(max(1.0, deadline - clock()))
            return
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
        Producer({**PRODUCER_DEFAULTS, **kafka, "enable.idempotence": True, "log_level": 3})
    )


def produce(
    producer: Producer, topic: str, value: bytes | None, key: bytes | None, **extra: Any
) -> None:
    """Produce, waiting for queue space instead of failing when the local queue is full."""
    while True:
        try:
            producer.produce(topic, value, key, **extra)
            return
        except BufferError:
            producer.poll(0.05)
