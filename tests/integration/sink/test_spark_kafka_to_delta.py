"""DeltaSink fed by Spark's built-in Kafka source (`format("kafka")`, the faster reader): only
committed records, each once, and a restart without checkpoint resumes after the table's offsets
through `starting_offsets`."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from spark_eos_connect.delta import delta_sink, starting_offsets

pytestmark = pytest.mark.integration

COLUMNS = ["value", "headers", "topic", "partition", "offset", "timestamp", "key"]


def kafka_rows(spark: Any, bootstrap: str, topic: str, starting: str | None) -> Any:
    """Spark's Kafka source as the README writes it for `delta_sink`."""
    reader = (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("kafka.isolation.level", "read_committed")
        .option("subscribe", topic)
        .option("includeHeaders", "true")
        .option("maxOffsetsPerTrigger", "3")
        .option("startingOffsets", starting or "earliest")
    )
    return reader.load().select(*COLUMNS)


@dataclass(frozen=True)
class KafkaToDelta:
    """Spark's Kafka source into `delta_sink`, one topic into one table, started after the
    table's offsets as the README writes it."""

    spark: Any
    bootstrap: str
    topic: str
    options: dict[str, str]
    run_available_now: Callable[..., Any]

    def run(self, checkpoint: Path) -> Any:
        """One availableNow query from `checkpoint`; returns the stopped query."""
        starting = starting_offsets(self.options, self.spark)
        rows = kafka_rows(self.spark, self.bootstrap, self.topic, starting)
        sink = delta_sink(self.options)
        return self.run_available_now(rows.writeStream.foreachBatch(sink), checkpoint)

    def values(self) -> list[bytes]:
        """The table's values, sorted."""
        table = self.spark.read.format("delta").load(self.options["path"])
        return sorted(r.value for r in table.collect())


@pytest.fixture
def kafka_to_delta(
    spark: Any,
    bootstrap_servers: str,
    run_available_now: Callable[..., Any],
    unique_name: Callable[[str], str],
    tmp_path: Path,
) -> Callable[[str], KafkaToDelta]:
    """`kafka_to_delta(topic)`: a `KafkaToDelta` into a new table under `tmp_path`."""

    def make(topic: str) -> KafkaToDelta:
        options = {
            "name": unique_name("spark-kafka"),
            "topics": topic,
            "path": str(tmp_path / "table"),
            "kafka.bootstrap.servers": bootstrap_servers,
        }
        return KafkaToDelta(spark, bootstrap_servers, topic, options, run_available_now)

    return make


def test_spark_kafka_source_into_delta_sink_exactly_once_across_a_lost_checkpoint(
    spark: Any,
    topic_factory: Callable[..., str],
    produce: Callable[..., None],
    kafka_to_delta: Callable[[str], KafkaToDelta],
    tmp_path: Path,
) -> None:
    topic = topic_factory("spark-kafka", partitions=2)
    produce(topic, [(i % 2, None, f"c{i}".encode()) for i in range(6)])
    produce(topic, [(i % 2, None, f"a{i}".encode()) for i in range(4)], abort=True)
    produce(topic, [(0, None, b"c6")])
    pipeline = kafka_to_delta(topic)

    assert pipeline.run(tmp_path / "ck").exception() is None
    assert pipeline.values() == [f"c{i}".encode() for i in range(7)]  # no aborted one, none twice

    # lose the checkpoint: Spark's source alone would start again from the earliest offsets;
    # it starts after the table's (each partition's last committed record, then its marker)
    assert starting_offsets(pipeline.options, spark) == json.dumps({topic: {"0": 8, "1": 3}})
    shutil.rmtree(tmp_path / "ck")
    produce(topic, [(1, None, b"c7")])
    assert pipeline.run(tmp_path / "ck2").exception() is None

    assert pipeline.values() == sorted(f"c{i}".encode() for i in range(8))


def test_a_partition_the_table_does_not_know_is_read_from_its_start_after_a_lost_checkpoint(
    spark: Any,
    topic_factory: Callable[..., str],
    produce: Callable[..., None],
    kafka_to_delta: Callable[[str], KafkaToDelta],
    tmp_path: Path,
) -> None:
    """Spark's Kafka source refuses explicit offsets that leave out a partition: the table's
    offsets alone ({"0": 3} here) failed the restart with an AssertionError."""
    topic = topic_factory("spark-kafka-new-partition", partitions=2)
    produce(topic, [(0, None, f"p0-{i}".encode()) for i in range(3)])
    pipeline = kafka_to_delta(topic)

    assert pipeline.run(tmp_path / "ck").exception() is None
    produce(topic, [(1, None, b"p1-0"), (0, None, b"p0-3")])

    resume = json.loads(starting_offsets(pipeline.options, spark) or "")
    assert resume == {topic: {"0": 3, "1": -2}}
    assert pipeline.run(tmp_path / "ck2").exception() is None  # a new checkpoint: the table decides
    assert pipeline.values() == sorted([f"p0-{i}".encode() for i in range(4)] + [b"p1-0"])
