"""PostgresCdcSource (`jobs/source_to_kafka.py`) on the 3-broker cluster while database
transactions commit under it and the transaction coordinator's broker is killed (issue 37; in
the long form every role in turn): the job never fails, and read_committed finally sees every
change of both tables exactly once, in commit order."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from spark_eos_connect.jvm.cluster import LocalKafkaCluster
from spark_eos_connect.kafka.clients import read_to_end
from spark_eos_connect.testing.postgres import PostgresDatabase

from ..connectors.postgres.cdc.cdc_checks import (
    SCHEMA,
    Writer,
    assert_topic_matches_table,
    events,
    run_transactions,
)
from ..connectors.postgres.cdc.test_postgres_cdc_crash_recovery import job_args
from ..connectors.postgres.cdc.test_postgres_cdc_source import cdc_options, create_topics
from .conftest import Failover, kill_plan, still_running
from .test_source_failover import reported_commits

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("failover")]


def test_cdc_source_rides_out_broker_kills(
    kafka_cluster: LocalKafkaCluster,
    failover: Failover,
    postgres_db: PostgresDatabase,
    start_job: Callable[..., Any],
    unique_name: Callable[[str], str],
    tmp_path: Path,
) -> None:
    config = kafka_cluster.client_config()
    postgres_db.execute(*SCHEMA)
    run_transactions(postgres_db, range(1, 101))  # read by the snapshot
    name = unique_name("failover-cdc")
    prefix = name.replace("-", "_")
    accounts, entries = create_topics(config, prefix)
    options = {**cdc_options(postgres_db, prefix, name), "max.batch.size": "50"}
    job = start_job("source_to_kafka.py", *job_args(options, config["bootstrap.servers"], tmp_path))
    writer = Writer(postgres_db, 101)
    writer.start()

    def running() -> bool:
        return still_running(job)

    try:
        for role in kill_plan("transaction coordinator"):
            failover.kill_and_recover(role, accounts, lambda: reported_commits(job.log), running)
    finally:
        writer.stop()
    job.process.wait(timeout=300)  # --until-idle: once the last change is in Kafka

    assert job.process.returncode == 0, job.log.read_text()[-4000:]
    assert writer.next > 101, "transactions committed while the broker was down"
    records = read_to_end(
        config, [accounts, entries], "read_committed", 120, wait_for_open_transactions=True
    )
    assert_topic_matches_table(events(records, accounts), postgres_db, "accounts")
    assert_topic_matches_table(events(records, entries), postgres_db, "entries")
