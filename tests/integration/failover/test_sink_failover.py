"""A sink connector query (FileStreamSink through the eosconnect reader and writer) on a
3-broker cluster while brokers are killed under it: the query never fails, each stall stays
short, and every record lands in the file exactly once."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer

from spark_eos_connect.kafka.clients import admin_client, ensure_topic
from spark_eos_connect.kafka.cluster import LocalKafkaCluster

from .conftest import RECOVERY_TIMEOUT_S, Failover, kill_plan, scaled, wait_until

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("failover")]

RECORDS = scaled(12_000)
PER_TRIGGER = 200  # with a 300 ms trigger the query reads for 40 s a kill or more


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
    spark: Any,
    unique_name: Callable[[str], str],
    tmp_path: Path,
) -> None:
    config = kafka_cluster.client_config()
    topic = unique_name("failover-sink")
    ensure_topic(admin_client(config), topic, partitions=2)
    produce_numbered(config, topic, RECORDS)
    out = tmp_path / "out.txt"
    options = {
        "name": unique_name("failover-sink"),
        "connector.class": "FileStreamSink",
        "topics": topic,
        "file": str(out),
        "maxRecordsPerTrigger": str(PER_TRIGGER),
        "kafka.bootstrap.servers": config["bootstrap.servers"],
    }
    query = (
        spark.readStream.format("eosconnect")
        .options(**options)
        .load()
        .writeStream.format("eosconnect")
        .options(**options)
        .option("checkpointLocation", str(tmp_path / "ck"))
        .trigger(processingTime="300 milliseconds")
        .start()
    )
    try:

        def running() -> bool:
            return bool(query.isActive)

        for role in kill_plan("partition leader"):
            failover.kill_and_recover(role, topic, lambda: len(lines(out)), running)
        wait_until(
            lambda: len(lines(out)) >= RECORDS, RECOVERY_TIMEOUT_S * 2, running, "every record"
        )
    finally:
        query.stop()

    assert query.exception() is None
    written = lines(out)
    assert len(written) == RECORDS, f"{len(written) - len(set(written))} duplicated lines"
    assert sorted(written, key=int) == [str(n) for n in range(RECORDS)]
