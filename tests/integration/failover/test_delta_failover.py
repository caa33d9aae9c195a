"""Kafka -> Delta (`jobs/kafka_to_delta.py`, the eosconnect reader) on a 3-broker cluster while
brokers are killed under it (and, in the long form, its driver): the job never fails, each
stall stays short, it goes on committing once every killed broker is back, and the table holds
every record exactly once."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from spark_eos_connect.jvm.cluster import LocalKafkaCluster
from spark_eos_connect.kafka.clients import admin_client, ensure_topic

from .conftest import (
    RECOVERY_TIMEOUT_S,
    Failover,
    delta_commits,
    full_run,
    kill_plan,
    scaled,
    still_running,
    wait_until,
)
from .test_sink_failover import produce_numbered

pytestmark = [
    pytest.mark.integration,
    pytest.mark.xdist_group("failover"),
    # make test keeps the broker kills under the source and CDC queries (their commit paths
    # are the transactional ones); the sink sides' campaigns run in make test-failover
    pytest.mark.skipif(not full_run(), reason="a long campaign: make test-failover runs it"),
]

RECORDS = scaled(3_000)
PER_TRIGGER = 150
"""20 micro-batches a kill. Records are read only while the query progresses, so a stall of any
length leaves the rest for after it; the kill comes after the first commit and the node's
restart takes seconds while a Delta micro-batch takes about 3.5 s here, so most micro-batches
run with every broker back, which the test waits for. (It had 40: the suite's slowest test,
for no more coverage.)"""
JOB_TIMEOUT_S = 600


def test_kafka_to_delta_rides_out_broker_kills(
    kafka_cluster: LocalKafkaCluster,
    failover: Failover,
    spark: Any,
    start_job: Callable[..., Any],
    unique_name: Callable[[str], str],
    tmp_path: Path,
) -> None:
    config = kafka_cluster.client_config()
    topic = unique_name("failover-delta")
    ensure_topic(admin_client(config), topic, partitions=2)
    produce_numbered(config, topic, RECORDS)
    table = tmp_path / "table"
    args = [
        "--name",
        unique_name("failover-delta"),
        "--topics",
        topic,
        "--path",
        str(table),
        "--max-records-per-trigger",
        str(PER_TRIGGER),
        "--bootstrap-servers",
        config["bootstrap.servers"],
        "--checkpoint",
        str(tmp_path / "ck"),
        "--trigger-interval",
        "1 second",
        "--until-idle",
        "--timeout",
        str(JOB_TIMEOUT_S),
    ]
    job = start_job("kafka_to_delta.py", *args)

    def running() -> bool:
        return still_running(job)

    for role in kill_plan("controller"):
        failover.kill_and_recover(role, topic, lambda: delta_commits(table), running)
    rejoined = delta_commits(table)  # the query commits with the restarted broker back
    wait_until(lambda: delta_commits(table) > rejoined, RECOVERY_TIMEOUT_S, running, "a commit")
    if full_run():  # the driver too: kill -9, then the job started again resumes
        os.killpg(job.process.pid, signal.SIGKILL)
        job.process.wait(timeout=60)
        job = start_job("kafka_to_delta.py", *args)
    job.process.wait(timeout=JOB_TIMEOUT_S)

    assert job.process.returncode == 0, job.log.read_text()[-4000:]
    rows = spark.read.format("delta").load(str(table)).select("value").collect()
    values = sorted(int(bytes(row.value).decode()) for row in rows)
    assert len(values) == len(set(values)), f"{len(values) - len(set(values))} duplicated rows"
    assert values == list(range(RECORDS))
