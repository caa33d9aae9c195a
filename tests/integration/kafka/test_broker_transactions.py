"""The broker started by `eosconnect kafka` is a real transactional Kafka broker."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition

pytestmark = pytest.mark.integration


def transactional_producer(kafka_config: dict[str, Any], transactional_id: str) -> Producer:
    producer = Producer({**kafka_config, "transactional.id": transactional_id})
    producer.init_transactions(30)
    return producer


def test_aborted_records_are_invisible_to_read_committed(
    kafka_config: dict[str, Any],
    topic_factory: Callable[..., str],
    read_committed: Callable[..., list[Any]],
    read_uncommitted: Callable[..., list[Any]],
) -> None:
    topic = topic_factory("abort")
    producer = transactional_producer(kafka_config, f"{topic}-tx")
    producer.begin_transaction()
    for i in range(5):
        producer.produce(topic, value=f"aborted-{i}".encode())
    producer.flush()
    producer.abort_transaction(30)
    producer.begin_transaction()
    producer.produce(topic, value=b"committed")
    producer.commit_transaction(30)

    committed = [r.value for r in read_committed(topic)]
    uncommitted = [r.value for r in read_uncommitted(topic)]

    assert committed == [b"committed"]
    assert uncommitted == [f"aborted-{i}".encode() for i in range(5)] + [b"committed"]


def test_second_producer_with_same_transactional_id_fences_the_first(
    kafka_config: dict[str, Any],
    topic_factory: Callable[..., str],
    read_committed: Callable[..., list[Any]],
    read_uncommitted: Callable[..., list[Any]],
) -> None:
    topic = topic_factory("fence")
    zombie = transactional_producer(kafka_config, f"{topic}-tx")
    zombie.begin_transaction()
    zombie.produce(topic, value=b"from-zombie")
    zombie.flush()

    successor = transactional_producer(kafka_config, f"{topic}-tx")

    with pytest.raises(KafkaException) as raised:
        zombie.commit_transaction(30)
    error = raised.value.args[0]
    assert error.fatal() or error.txn_requires_abort()
    assert error.name() in {"_FENCED", "PRODUCER_FENCED", "INVALID_PRODUCER_EPOCH"}

    successor.begin_transaction()
    successor.produce(topic, value=b"from-successor")
    successor.commit_transaction(30)

    assert [r.value for r in read_committed(topic)] == [b"from-successor"]
    assert b"from-zombie" in [r.value for r in read_uncommitted(topic)]


def test_send_offsets_to_transaction_commits_group_offsets_with_the_records(
    kafka_config: dict[str, Any],
    topic_factory: Callable[..., str],
    read_committed: Callable[..., list[Any]],
) -> None:
    source = topic_factory("in")
    sink = topic_factory("out")
    seed = Producer(kafka_config)
    for i in range(10):
        seed.produce(source, value=str(i).encode())
    seed.flush(30)
    group = f"{source}-group"
    consumer = Consumer(
        {
            **kafka_config,
            "group.id": group,
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
            "isolation.level": "read_committed",
        }
    )
    consumer.assign([TopicPartition(source, 0, 0)])
    consumed = []
    while len(consumed) < 10:
        consumed.extend(m for m in consumer.consume(10, timeout=5) if m.error() is None)
    producer = transactional_producer(kafka_config, f"{sink}-tx")

    def copy_first(count: int, commit: bool) -> None:
        producer.begin_transaction()
        for message in consumed[:count]:
            producer.produce(sink, value=message.value())
        producer.send_offsets_to_transaction(
            [TopicPartition(source, 0, count)], consumer.consumer_group_metadata(), 30
        )
        if commit:
            producer.commit_transaction(30)
        else:
            producer.abort_transaction(30)

    copy_first(4, commit=False)
    assert consumer.committed([TopicPartition(source, 0)], timeout=10)[0].offset < 0
    assert read_committed(sink) == []

    copy_first(6, commit=True)
    assert consumer.committed([TopicPartition(source, 0)], timeout=10)[0].offset == 6
    assert [r.value for r in read_committed(sink)] == [str(i).encode() for i in range(6)]
    consumer.close()
