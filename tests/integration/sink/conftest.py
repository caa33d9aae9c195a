"""Fixtures for the sink side: producing (transactional) records and reading group offsets."""

from __future__ import annotations

import contextlib
import os
import sys
import uuid
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer

from spark_eos_connect.sink.kafka_input import KafkaMetadata

Record = tuple[int, bytes | None, bytes | None]
"""(partition, key, value)."""


@pytest.fixture
def produce(kafka_config: dict[str, Any]) -> Iterator[Callable[..., None]]:
    """`produce(topic, records, abort=False)`: one transaction of `(partition, key, value)`."""
    producer = Producer({**kafka_config, "transactional.id": f"sink-tests-{uuid.uuid4().hex}"})
    producer.init_transactions(30)

    def send(
        topic: str,
        records: Iterable[Record],
        abort: bool = False,
        headers: list[tuple[str, bytes]] | None = None,
        timestamp: int | None = None,
    ) -> None:
        producer.begin_transaction()
        for partition, key, value in records:
            extra: dict[str, Any] = {"headers": headers} if headers else {}
            if timestamp is not None:
                extra["timestamp"] = timestamp
            producer.produce(topic, value, key, partition=partition, **extra)
        if abort:
            producer.flush(30)
            producer.abort_transaction(30)
        else:
            producer.commit_transaction(30)

    yield send
    producer.flush(5)


@pytest.fixture
def group_offsets(kafka_config: dict[str, Any]) -> Callable[[str], dict[tuple[str, int], int]]:
    """The committed offsets of consumer group `connect-<name>`."""
    metadata = KafkaMetadata(kafka_config)
    return lambda name: metadata.group_offsets(f"connect-{name}")


# Spark's Python processes (planner, executors) inherit PYTHONPATH from the JVM, which starts
# after collection: make `sink_test_connectors` importable there and here.
_HELPERS = str(Path(__file__).parent)
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (_HELPERS, os.environ.get("PYTHONPATH")) if p)
sys.path.insert(0, _HELPERS)


@pytest.fixture
def test_connectors() -> str:
    """The module of the test sink connectors, importable by Spark's Python processes."""
    return "sink_test_connectors"


@pytest.fixture
def run_available_now() -> Callable[..., Any]:
    """`run_available_now(stream_writer, checkpoint)`: run with Trigger.AvailableNow and wait."""
    from pyspark.errors import StreamingQueryException

    def run(stream: Any, checkpoint: Path, timeout_s: float = 180) -> Any:
        query = (
            stream.option("checkpointLocation", str(checkpoint)).trigger(availableNow=True).start()
        )
        with contextlib.suppress(StreamingQueryException):  # tests read query.exception()
            query.awaitTermination(timeout_s)
        if query.isActive:
            query.stop()
            raise AssertionError(f"query still running after {timeout_s}s")
        return query

    return run
