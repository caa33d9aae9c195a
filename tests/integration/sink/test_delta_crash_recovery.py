"""Kafka → Delta exactly once under kill -9 (jobs/kafka_to_delta.py in its own process group).

One pipeline is killed three times: while writing batch 0 (the restart replays it from Spark's
checkpoint), after batch 1's Delta commit but before the group commit (the restart replays a
batch the table already holds), and in batch 2's group-commit step. Then Spark's checkpoint is
deleted (the consumer group has no offsets: DeltaSink keeps them in the table) and the last
run resumes from the table's offsets. The table must hold every committed record once."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from spark_eos_connect.testing.campaigns import full_run

pytestmark = pytest.mark.integration

RECORDS = 800
PER_TRIGGER = 200  # offsets per micro-batch: about five batches, the crashes in batches 0-2
CRASHES = (
    ("put@0", "before_group_commit@1", "during_group_commit@2")
    if full_run()
    else ("put@0", "during_group_commit@2")
)
"""Short form: a kill mid-put and one mid group commit (`make demo`'s test kills before it)."""


def produce_numbers(produce: Callable[..., None], topic: str, numbers: range) -> None:
    """JSON `{"id": n}` records in transactions of 100, each followed by an aborted one."""
    for start in range(numbers.start, numbers.stop, 100):
        batch = range(start, min(start + 100, numbers.stop))
        produce(topic, [(n % 2, None, json.dumps({"id": n}).encode()) for n in batch])
        produce(topic, [(n % 2, None, b'{"id": -1}') for n in batch[:5]], abort=True)


def assert_each_id_once(spark: Any, table: Path, expected: int) -> None:
    counts = Counter(r.id for r in spark.read.format("delta").load(str(table)).collect())
    duplicates = {i: n for i, n in counts.items() if n > 1}
    missing = set(range(expected)) - set(counts)
    assert not duplicates, f"{len(duplicates)} duplicated ids, e.g. {list(duplicates)[:5]}"
    assert not missing, f"{len(missing)} missing ids, e.g. {sorted(missing)[:5]}"
    assert set(counts) == set(range(expected))


def test_killed_kafka_to_delta_restarts_with_each_record_exactly_once(
    spark: Any,
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    produce: Callable[..., None],
    group_offsets: Callable[[str], dict[tuple[str, int], int]],
    run_job: Callable[..., Any],
    unique_name: Callable[[str], str],
    tmp_path: Path,
) -> None:
    topic = topic_factory("tocrash", partitions=2)
    produce_numbers(produce, topic, range(RECORDS))
    name = unique_name("tocrash")
    table, checkpoint = tmp_path / "table", tmp_path / "checkpoint"
    args = [
        "--name", name, "--topics", topic, "--path", str(table),
        "--value-schema", "id INT", "--max-records-per-trigger", str(PER_TRIGGER),
        "--bootstrap-servers", bootstrap_servers, "--checkpoint", str(checkpoint),
        "--until-idle", "--timeout", "240",
    ]  # fmt: skip

    for point in CRASHES:
        marker = tmp_path / f"fired-{point}"
        crashed = run_job("kafka_to_delta.py", *args, fault=point, marker=marker)

        assert crashed.returncode == -9, crashed.stderr[-3000:]
        assert marker.read_text().strip() == point

    # Spark's checkpoint and the consumer group are gone: resume from the table's offsets
    shutil.rmtree(checkpoint)
    assert group_offsets(name) == {}
    produce_numbers(produce, topic, range(RECORDS, RECORDS + 100))
    resumed = run_job("kafka_to_delta.py", *args)

    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "resuming after the table's offsets" in resumed.stdout
    assert_each_id_once(spark, table, RECORDS + 100)
