"""A sink connector (`jobs/kafka_to_sink.py`, FileStreamSink through the eosconnect reader) on
a 3-broker cluster while brokers are killed under it (and, in the long form, its driver): the
job never fails, each stall stays short, and every record lands in the file exactly once."""

from __future__ import annotations

import os
import signal
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer

from spark_eos_connect.jvm.cluster import LocalKafkaCluster
from spark_eos_connect.kafka.clients import admin_client, ensure_topic

from .conftest import Failover, full_run, kill_plan, scaled, still_running

pytestmark = [
    pytest.mark.integration,
    pytest.mark.xdist_group("failover"),
    # make test keeps the broker kills under the source and CDC queries (their commit paths
    # are the transactional ones); the sink sides' campaigns run in make test-failover
    pytest.mark.skipif(not full_run(), reason="a long campaign: make test-failover runs it"),
]

RECORDS = scaled(8_000)
PER_TRIGGER = 100  # with a 500 ms trigger at most 200 records/s: 40 s a kill or more
JOB_TIMEOUT_S = 600


def produce_numbered(config: dict[str, str], topic: str, count: int) -> None:
    """`count` values "0".."count-1" over the topic's two partitions, in one transaction."""
    producer = Producer({**config, "transactional.id": f"failover-{uuid.uuid4().hex}"})
    producer.init_transactions(60)
    producer.begin_transaction()
    for n in range(count):
        producer.produce(topic, str(n).encode(), partition=n % 2)
        if n % 10_000 == 0:
            producer.poll(0)
    producer.commit_transaction(60)


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def test_sink_connector_rides_out_broker_kills(
    kafka_cluster: LocalKafkaCluster,
    failover: Failover,
    start_job: Callable[..., Any],
    unique_name: Callable[[str], str],
    tmp_path: Path,
) -> None:
    config = kafka_cluster.client_config()
    topic = unique_name("failover-sink")
    ensure_topic(admin_client(config), topic, partitions=2)
    produce_numbered(config, topic, RECORDS)
    out = tmp_path / "out.txt"
    args = [
        *["--name", unique_name("failover-sink"), "--connector-class", "FileStreamSink"],
        *["--topics", topic, "--option", f"file={out}"],
        *["--max-records-per-trigger", str(PER_TRIGGER), "--trigger-interval", "500 milliseconds"],
        *["--bootstrap-servers", config["bootstrap.servers"], "--checkpoint", str(tmp_path / "ck")],
        *["--until-idle", "--timeout", str(JOB_TIMEOUT_S)],
    ]
    job = start_job("kafka_to_sink.py", *args)

    def running() -> bool:
        return still_running(job)

    for role in kill_plan("partition leader"):
        failover.kill_and_recover(role, topic, lambda: len(lines(out)), running)
    if full_run():  # the driver too: kill -9, then the job started again resumes
        os.killpg(job.process.pid, signal.SIGKILL)
        job.process.wait(timeout=60)
        job = start_job("kafka_to_sink.py", *args)
    job.process.wait(timeout=JOB_TIMEOUT_S)

    assert job.process.returncode == 0, job.log.read_text()[-4000:]
    written = lines(out)
    assert len(written) == len(set(written)), f"{len(written) - len(set(written))} duplicated"
    assert sorted(written, key=int) == [str(n) for n in range(RECORDS)]
