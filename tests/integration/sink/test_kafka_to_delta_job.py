"""jobs/kafka_to_delta.py under SIGTERM: it stops between micro-batches with exit code 0, and a
restart completes the table with every record exactly once."""

from __future__ import annotations

import json
import signal
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from spark_eos_connect.testing import wait_for

pytestmark = pytest.mark.integration

RECORDS = 400


def delta_commits(table: Path) -> int:
    log = table / "_delta_log"
    return len(list(log.glob("*.json"))) if log.exists() else 0


def test_sigterm_stops_between_batches_and_a_restart_completes_the_table(
    spark: Any,
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    produce: Callable[..., None],
    run_job: Callable[..., Any],
    start_job: Callable[..., Any],
    unique_name: Callable[[str], str],
    tmp_path: Path,
) -> None:
    topic = topic_factory("sigterm-delta", partitions=2)
    produce(topic, [(n % 2, None, json.dumps({"id": n}).encode()) for n in range(RECORDS)])
    table = tmp_path / "table"
    args = [
        "--name", unique_name("sigterm-delta"), "--topics", topic, "--path", str(table),
        "--value-schema", "id INT", "--max-records-per-trigger", "50",
        "--trigger-interval", "1 second", "--bootstrap-servers", bootstrap_servers,
        "--checkpoint", str(tmp_path / "checkpoint"),
    ]  # fmt: skip
    job = start_job("kafka_to_delta.py", *args)
    wait_for(lambda: delta_commits(table) >= 2, 180, "the job's first Delta commits")
    output = job.stop(signal.SIGTERM, timeout_s=180)

    assert job.process.returncode == 0, output[-3000:]
    assert "rows written" in output  # the one-line summary of a micro-batch
    written = spark.read.format("delta").load(str(table)).count()
    assert 0 < written < RECORDS  # stopped before the end, at a batch boundary

    resume = ["--max-records-per-trigger", str(RECORDS), "--trigger-interval", "0 seconds"]
    resumed = run_job("kafka_to_delta.py", *args, *resume, "--until-idle", "--timeout", "240")

    assert resumed.returncode == 0, resumed.stderr[-3000:]
    ids = Counter(r.id for r in spark.read.format("delta").load(str(table)).collect())
    assert set(ids) == set(range(RECORDS)) and set(ids.values()) == {1}


def test_reader_kafka_writes_committed_records_once_and_resumes_after_the_tables_offsets(
    spark: Any,
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    produce: Callable[..., None],
    run_job: Callable[..., Any],
    unique_name: Callable[[str], str],
    tmp_path: Path,
) -> None:
    """`--reader kafka` (Spark's Kafka source): no aborted record, and after the checkpoint is
    lost the table decides where each partition resumes, a partition it has no row of included
    (Spark's source needs explicit offsets for every partition)."""
    topic = topic_factory("reader-kafka", partitions=2)
    produce(topic, [(0, None, b"c0"), (0, None, b"c1")])
    produce(topic, [(n % 2, None, b"aborted") for n in range(4)], abort=True)
    table = tmp_path / "table"
    args = [
        "--name", unique_name("reader-kafka"), "--topics", topic, "--path", str(table),
        "--reader", "kafka", "--max-records-per-trigger", "3",
        "--bootstrap-servers", bootstrap_servers, "--until-idle", "--timeout", "240",
    ]  # fmt: skip

    first = run_job("kafka_to_delta.py", *args, "--checkpoint", str(tmp_path / "ck"))
    assert first.returncode == 0, first.stderr[-3000:]
    produce(topic, [(1, None, b"c2"), (0, None, b"c3"), (1, None, b"c4")])
    again = run_job("kafka_to_delta.py", *args, "--checkpoint", str(tmp_path / "ck2"))

    assert again.returncode == 0, again.stderr[-3000:]
    assert "resuming after the table's offsets" in again.stdout
    values = Counter(r.value for r in spark.read.format("delta").load(str(table)).collect())
    assert values == Counter(f"c{n}".encode() for n in range(5))
