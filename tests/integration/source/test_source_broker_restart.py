"""I2 with the broker itself restarted under a running source pipeline: after the job is
restarted (if it died), read_committed sees every generated record exactly once. A long
campaign (`make test-failover`): `make test` keeps the broker kills under a running source
query on the 3-broker cluster (`failover/test_source_failover.py`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from spark_eos_connect.testing import BrokerProcess, wait_for
from spark_eos_connect.testing.campaigns import full_run

from .test_source_crash_recovery import (
    RECORDS_PER_TASK,
    assert_each_record_exactly_once,
    pipeline_args,
)

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not full_run(), reason="a long campaign: make test-failover runs it"),
]


def test_broker_restart_under_a_running_pipeline(
    kafka_broker: BrokerProcess | None,
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    read_committed: Callable[..., list[Any]],
    run_job: Callable[..., Any],
    start_job: Callable[..., Any],
    unique_name: Callable[[str], str],
    tmp_path: Path,
) -> None:
    if kafka_broker is None:
        pytest.skip("the broker is external; this test restarts the one it started")
    topic = topic_factory("restart", partitions=2)
    name = unique_name("restart")
    # Rate-limited so that the broker restarts while the job is still producing.
    args = [
        *pipeline_args(name, topic, bootstrap_servers, tmp_path / "checkpoint"),
        "--option",
        "rate=300",
    ]
    job = start_job("source_to_kafka.py", *args)
    wait_for(
        lambda: len(read_committed(topic, settled=False)) > 0, 180, "the first committed records"
    )
    assert job.process.poll() is None, "the job finished before the broker restart"
    kafka_broker.restart()
    job.process.wait(timeout=300)

    if len(read_committed(topic)) < 2 * RECORDS_PER_TASK or job.process.returncode != 0:
        restarted = run_job("source_to_kafka.py", *args)
        assert restarted.returncode == 0, restarted.stderr[-3000:]
    assert_each_record_exactly_once(read_committed(topic))
