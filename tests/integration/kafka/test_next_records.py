"""`kafka.clients.next_records`: a round of reading waits for its first record only."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition

from spark_eos_connect.kafka.clients import next_records

pytestmark = pytest.mark.integration

LONG_WAIT_S = 120.0
"""Far longer than the test's own budget: a round that waited for it would stand out."""


def consumer_from_start(kafka_config: dict[str, Any], topic: str) -> Consumer:
    consumer = Consumer({**kafka_config, "group.id": "unused", "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
    return consumer


def written(kafka_config: dict[str, Any], topic: str, count: int) -> None:
    producer = Producer(kafka_config)
    for i in range(count):
        producer.produce(topic, value=f"v{i}".encode(), partition=0)
    assert producer.flush(30) == 0


def test_fewer_records_than_asked_for_come_back_without_waiting_out_the_wait(
    kafka_config: dict[str, Any], topic_factory: Callable[..., str]
) -> None:
    topic = topic_factory("next-records")
    written(kafka_config, topic, 3)
    consumer = consumer_from_start(kafka_config, topic)
    try:
        started = time.monotonic()
        values: list[bytes] = []
        while len(values) < 3 and time.monotonic() - started < LONG_WAIT_S / 2:
            values += [m.value() for m in next_records(consumer, 10_000, LONG_WAIT_S)]
        # consume(10000, 120 s) would have returned only after 120 s
        assert values == [b"v0", b"v1", b"v2"]
        assert time.monotonic() - started < LONG_WAIT_S / 2
    finally:
        consumer.close()


def test_a_round_returns_at_most_the_records_asked_for_and_none_once_the_topic_is_read(
    kafka_config: dict[str, Any], topic_factory: Callable[..., str]
) -> None:
    topic = topic_factory("next-records-max")
    written(kafka_config, topic, 5)
    consumer = consumer_from_start(kafka_config, topic)
    try:
        rounds: list[list[bytes]] = []
        deadline = time.monotonic() + 60
        while sum(map(len, rounds)) < 5 and time.monotonic() < deadline:
            rounds.append([m.value() for m in next_records(consumer, 2, 1.0)])
        assert all(len(r) <= 2 for r in rounds)
        assert [v for r in rounds for v in r] == [f"v{i}".encode() for i in range(5)]
        assert next_records(consumer, 2, 0.2) == []
    finally:
        consumer.close()
