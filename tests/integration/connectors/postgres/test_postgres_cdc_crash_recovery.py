"""I2 for PostgresCdcSource: the job is SIGKILLed (driver, JVM and workers) in the snapshot and
while streaming, with transactions committing between the runs and Spark's checkpoint lost each
time, then a run loses its task host alone (SIGKILL after a Kafka commit, before the slot moved:
Spark retries the task on a new host); every restart continues from the offsets committed to
Kafka (the slot was never advanced past them), and read_committed finally sees every change
exactly once, in commit order."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from spark_eos_connect.testing.postgres import PostgresDatabase

from .cdc_checks import SCHEMA, assert_topic_matches_table, events, ops, run_transactions
from .test_postgres_cdc_source import (
    cdc_options,
    create_topics,
    current_lsn,
    lsn_at_least,
    slot_position,
)

pytestmark = pytest.mark.integration

CRASHES = ("before_commit@1", "after_commit@2", "after_commit@1", "before_commit@2")


def job_args(options: dict[str, str], bootstrap: str, checkpoint: Path) -> list[str]:
    framework = {"name", "connector.class", "maxRecordsPerTrigger"}
    args = [
        "--name",
        options["name"],
        "--connector-class",
        options["connector.class"],
        "--max-records-per-trigger",
        "150",
        "--bootstrap-servers",
        bootstrap,
        "--checkpoint",
        str(checkpoint),
        "--until-idle",
        "--timeout",
        "240",
    ]
    for key, value in options.items():
        if key not in framework:
            args += ["--option", f"{key}={value}"]
    return args


def test_killed_cdc_job_restarts_from_the_committed_lsn(
    postgres_db: PostgresDatabase,
    bootstrap_servers: str,
    kafka_config: dict[str, Any],
    read_committed: Callable[..., list[Any]],
    run_job: Callable[..., Any],
    unique_name: Callable[[str], str],
    tmp_path: Path,
) -> None:
    postgres_db.execute(*SCHEMA)
    run_transactions(postgres_db, range(1, 301))  # a snapshot over several micro-batches
    name = unique_name("pgcrash")
    prefix = name.replace("-", "_")
    accounts, entries = create_topics(kafka_config, prefix)
    options = {**cdc_options(postgres_db, prefix, name), "max.batch.size": "60"}
    checkpoint = tmp_path / "checkpoint"
    args = job_args(options, bootstrap_servers, checkpoint)
    seen = 0
    next_transaction = 301
    for fault in CRASHES:
        marker = tmp_path / f"fired-{fault}"
        crashed = run_job("source_to_kafka.py", *args, fault=fault, marker=marker)
        assert crashed.returncode == -9, crashed.stderr[-3000:]
        assert marker.read_text().strip() == fault
        now = len(read_committed(accounts, entries, settled=False))
        assert now >= seen
        seen = now
        shutil.rmtree(checkpoint, ignore_errors=True)
        # changes to rows the snapshot has read and to rows it has not yet
        run_transactions(postgres_db, range(next_transaction, next_transaction + 120))
        next_transaction += 120
    # the task host alone is SIGKILLed once its micro-batch's transaction committed (the job
    # goes on: Spark's retry starts a new host from the committed offsets)
    point = "lose_host_after_commit@1"
    marker = tmp_path / "fired-host"
    lost = run_job("source_to_kafka.py", *args, fault=point, marker=marker)
    assert lost.returncode == 0, lost.stderr[-3000:]
    assert marker.read_text().strip() == point
    run_transactions(postgres_db, range(next_transaction, next_transaction + 60))
    end = current_lsn(postgres_db)

    finished = run_job("source_to_kafka.py", *args)

    assert finished.returncode == 0, finished.stderr[-3000:]
    records = read_committed(accounts, entries)
    account_events, entry_events = events(records, accounts), events(records, entries)
    assert_topic_matches_table(account_events, postgres_db, "accounts")
    assert_topic_matches_table(entry_events, postgres_db, "entries")
    # the 300 rows before the slot, and rows inserted between the runs that a resumed
    # snapshot read (their inserts in the slot are then skipped)
    assert ops(account_events).get("r", 0) >= 300
    # nothing is left for the slot to hold: also past changes the resumed snapshots already had
    position = slot_position(postgres_db, options["slot.name"])
    assert position is not None and lsn_at_least(position, end)
