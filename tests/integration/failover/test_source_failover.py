"""The exactly-once source (Generator -> Kafka, `jobs/source_to_kafka.py`) on a 3-broker
cluster while brokers are killed under it (and, in the long form, its driver): the job never
fails, each stall stays short, and read_committed sees every record exactly once."""

from __future__ import annotations

import os
import re
import signal
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from spark_eos_connect.connectors.generator import parse_generated_value
from spark_eos_connect.jvm.cluster import LocalKafkaCluster
from spark_eos_connect.kafka.clients import admin_client, ensure_topic, read_to_end

from .conftest import (
    Failover,
    committed_records,
    full_run,
    kill_plan,
    scaled,
    still_running,
    wait_until,
)

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("failover")]

TASKS = 2
RECORDS_PER_TASK = scaled(6000)
RATE_PER_TASK = 150  # records/s: the job runs 40 s a kill, long enough to see it recover
JOB_TIMEOUT_S = 600


def source_args(name: str, topic: str, servers: str, checkpoint: Path) -> list[str]:
    options = {
        "topic": topic,
        "max.records": RECORDS_PER_TASK,
        "rate": RATE_PER_TASK,
        "records.per.poll": 100,
        "maxPollDurationMs": 500,  # a commit every half second: a stall shows to the second
    }
    return [
        "--name",
        name,
        "--connector-class",
        "Generator",
        "--tasks-max",
        str(TASKS),
        *[arg for key, value in options.items() for arg in ("--option", f"{key}={value}")],
        "--bootstrap-servers",
        servers,
        "--checkpoint",
        str(checkpoint),
        "--trigger-interval",
        "500 milliseconds",
        "--until-idle",
        "--timeout",
        str(JOB_TIMEOUT_S),
    ]


COMMITTED = re.compile(r"^batch \d+: (\d+) records committed", re.MULTILINE)


def reported_commits(log: Path) -> int:
    """Records the job reports committed so far (one line per micro-batch)."""
    return sum(int(n) for n in COMMITTED.findall(log.read_text(errors="replace")))


def test_exactly_once_source_rides_out_broker_kills(
    kafka_cluster: LocalKafkaCluster,
    failover: Failover,
    start_job: Callable[..., Any],
    unique_name: Callable[[str], str],
    tmp_path: Path,
) -> None:
    config = kafka_cluster.client_config()
    topic = unique_name("failover-source")
    ensure_topic(admin_client(config), topic, partitions=2)
    args = source_args(unique_name("failover-source"), topic, config["bootstrap.servers"], tmp_path)
    job = start_job("source_to_kafka.py", *args)

    def running() -> bool:
        return still_running(job)

    for role in kill_plan("transaction coordinator"):
        failover.kill_and_recover(role, topic, lambda: reported_commits(job.log), running)
    if full_run():  # the driver too: kill -9, then the job started again resumes
        os.killpg(job.process.pid, signal.SIGKILL)
        job.process.wait(timeout=60)
        job = start_job("source_to_kafka.py", *args)
    job.process.wait(timeout=JOB_TIMEOUT_S)

    assert job.process.returncode == 0, job.log.read_text()[-4000:]
    wait_until(
        lambda: committed_records(config, topic) >= TASKS * RECORDS_PER_TASK,
        60,
        lambda: True,
        "every record committed",
    )
    records = read_to_end(config, [topic], "read_committed", 120, wait_for_open_transactions=True)
    counts = Counter(parse_generated_value(r.value) for r in records)
    expected = {(task, n) for task in range(TASKS) for n in range(RECORDS_PER_TASK)}
    duplicates = {key: n for key, n in counts.items() if n > 1}
    assert not duplicates, f"{len(duplicates)} duplicated, e.g. {list(duplicates)[:5]}"
    assert set(counts) == expected, f"{len(expected - set(counts))} missing"
    internal = admin_client(config).list_topics(timeout=30).topics
    for topic_name in ("eosconnect-configs", "eosconnect-offsets", "eosconnect-status"):
        assert {len(p.replicas) for p in internal[topic_name].partitions.values()} == {3}
