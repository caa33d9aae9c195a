"""Fixtures for the sink side: reading group offsets, the test connectors, available-now runs."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from spark_eos_connect.kafka.group_offsets import KafkaGroupOffsets


@pytest.fixture
def group_offsets(kafka_config: dict[str, Any]) -> Callable[[str], dict[tuple[str, int], int]]:
    """The committed offsets of consumer group `connect-<name>`."""
    groups = KafkaGroupOffsets(kafka_config)
    return lambda name: dict(groups.committed(f"connect-{name}").items())


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
