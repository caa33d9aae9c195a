"""Fixtures for running the README's snippets: transactional test records."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from confluent_kafka import Producer


@pytest.fixture
def produce_transaction(kafka_config: dict[str, Any]) -> Iterator[Callable[..., None]]:
    """`produce_transaction(topic, values, commit=True)`: one transaction, round-robin over
    `partitions` partitions."""
    producer = Producer({**kafka_config, "transactional.id": f"readme-{uuid.uuid4().hex}"})
    producer.init_transactions(30)

    def send(topic: str, values: list[bytes], commit: bool = True, partitions: int = 1) -> None:
        producer.begin_transaction()
        for index, value in enumerate(values):
            producer.produce(topic, value, partition=index % partitions)
        if commit:
            producer.commit_transaction(30)
        else:
            producer.flush(30)
            producer.abort_transaction(30)

    yield send
    producer.flush(5)
