"""jobs/source_to_kafka.py: SIGTERM stops it cleanly with no transaction left open."""

from __future__ import annotations

import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from spark_eos_connect.kafka.clients import read_to_end
from spark_eos_connect.testing import wait_for

from ..source.test_source_crash_recovery import assert_each_record_exactly_once, pipeline_args

pytestmark = pytest.mark.integration


def spark_log_lines(output: str) -> list[str]:
    """Spark's INFO and WARN log lines in a job's output."""
    return [line for line in output.splitlines() if " INFO " in line or " WARN " in line]


def test_sigterm_stops_between_batches_and_leaves_no_open_transaction(
    kafka_config: dict[str, Any],
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    read_committed: Callable[..., list[Any]],
    run_job: Callable[..., Any],
    start_job: Callable[..., Any],
    unique_name: Callable[[str], str],
    tmp_path: Path,
) -> None:
    topic = topic_factory("sigterm", partitions=2)
    args = [
        *pipeline_args(unique_name("sigterm"), topic, bootstrap_servers, tmp_path / "ck"),
        "--option",
        "rate=300",
    ]
    job = start_job("source_to_kafka.py", *args)
    wait_for(
        lambda: len(read_committed(topic, settled=False)) > 0, 180, "the first committed records"
    )
    output = job.stop(signal.SIGTERM, timeout_s=180)

    assert job.process.returncode == 0, output[-3000:]
    assert "records committed to Kafka" in output  # the summary of at least one micro-batch
    assert not spark_log_lines(output), "Spark's logging is quiet unless --verbose"
    # Reading up to the high watermark finishes only if no transaction is left open.
    read_to_end(kafka_config, [topic], wait_for_open_transactions=True, timeout_s=20)
    resumed = run_job("source_to_kafka.py", *args)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert_each_record_exactly_once(read_committed(topic))
