"""I2 for PostgresCdcSource: the job is SIGKILLed (driver, JVM and workers) in the snapshot and
while streaming, before and after a micro-batch's Kafka commit, with transactions committing
between the runs and Spark's checkpoint lost each time, and a run loses its task host alone
(SIGKILL after a Kafka commit, before the slot moved: Spark retries the task on a new host);
every restart continues from the offsets committed to Kafka (the slot was never advanced past
them), and read_committed finally sees every change exactly once, in commit order. Between the
runs one table changes shape (a column added, then changes in the new shape) and a partitioned
table, captured as one (`publish.via.partition.root=true`), gains a partition that takes rows.

`make test` runs the short form: two kills, one in the snapshot after a commit and one while
streaming before a commit, with the host loss between them, so each kind of crash point (snapshot
and streaming, before and after the commit) is hit on every run. `make test-failover`
(`EOSCONNECT_FAILOVER=full`) runs the long form: all four combinations, then the host loss. Each
kill's phase is checked from what Kafka holds after it, so a workload change that moves a kill
into the other phase fails the test instead of quietly covering less."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from spark_eos_connect.kafka.clients import admin_client, ensure_topic
from spark_eos_connect.testing.campaigns import full_run
from spark_eos_connect.testing.postgres import PostgresDatabase

from .cdc_checks import (
    LEDGER,
    NEW_PARTITION,
    NEW_SHAPE,
    SCHEMA,
    Event,
    assert_topic_matches_table,
    events,
    ledger_changes,
    ops,
    run_transactions,
)
from .test_postgres_cdc_source import (
    cdc_options,
    create_topics,
    current_lsn,
    lsn_at_least,
    slot_position,
)

pytestmark = pytest.mark.integration

HOST_LOSS = "lose_host_after_commit@1"
"""The task host alone is SIGKILLed once its micro-batch's transaction committed (the job goes
on: Spark's retry starts a new host from the committed offsets)."""
FULL_PLAN = (
    ("before_commit@1", "snapshot"),
    ("after_commit@2", "snapshot"),
    ("after_commit@1", "streaming"),
    ("before_commit@2", "streaming"),
    (HOST_LOSS, None),
)
SHORT_PLAN = (
    ("after_commit@2", "snapshot"),  # 450 of the 540 snapshot rows committed
    (HOST_LOSS, None),  # ends the snapshot: the next run only streams
    ("before_commit@1", "streaming"),
)
"""The runs before the last, in order: a fault each and the phase its kill must land in."""


def crash_phase(fault: str, run_events: list[Event], all_events: list[Event]) -> str:
    """Where a kill at `fault` landed, from the events in Kafka after it: `run_events` the
    ones the killed run committed, `all_events` every one so far. Before a commit, the killed
    micro-batch was in the snapshot while the snapshot's last record was not committed yet;
    after a commit, the committed micro-batch streamed if the run committed any change."""
    if fault.startswith("before_commit"):
        done = any(e.value and e.value["source"]["snapshot"] == "last" for e in all_events)
        return "streaming" if done else "snapshot"
    streamed = any(e.value is None or e.value["op"] != "r" for e in run_events)
    return "streaming" if streamed else "snapshot"


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
    postgres_db.execute(*SCHEMA, *LEDGER)
    run_transactions(postgres_db, range(1, 301))  # a snapshot over several micro-batches
    ledger_changes(postgres_db, range(1, 31))
    name = unique_name("pgcrash")
    prefix = name.replace("-", "_")
    accounts, entries = create_topics(kafka_config, prefix)
    ledger = f"{prefix}.public.ledger"
    ensure_topic(admin_client(kafka_config), ledger, partitions=1)
    options = {
        **cdc_options(postgres_db, prefix, name),
        "max.batch.size": "60",
        "publish.via.partition.root": "true",
    }
    checkpoint = tmp_path / "checkpoint"
    args = job_args(options, bootstrap_servers, checkpoint)
    seen: dict[str, int] = {accounts: 0, entries: 0, ledger: 0}
    next_transaction = 301
    plan = FULL_PLAN if full_run() else SHORT_PLAN
    for step, (fault, phase) in enumerate(plan):
        shutil.rmtree(checkpoint, ignore_errors=True)  # Spark's checkpoint lost as well
        marker = tmp_path / f"fired-{step}"
        ended = run_job("source_to_kafka.py", *args, fault=fault, marker=marker)
        assert ended.returncode == (0 if fault == HOST_LOSS else -9), ended.stderr[-3000:]
        assert marker.read_text().strip() == fault
        # a kill before the commit leaves its transaction open until the next run fences it
        committed = read_committed(*seen, settled=fault.startswith("after"))
        now = {topic: events(committed, topic) for topic in seen}
        assert all(len(now[topic]) >= seen[topic] for topic in seen)
        if phase is not None:
            run_events = [e for topic in seen for e in now[topic][seen[topic] :]]
            every = [e for topic in seen for e in now[topic]]
            assert crash_phase(fault, run_events, every) == phase, (fault, ops(run_events))
        seen = {topic: len(now[topic]) for topic in seen}
        # changes to rows the snapshot has read and to rows it has not yet; fewer before the
        # last run, which keeps the checkpoint of the run before it
        count = 60 if step == len(plan) - 1 else 120
        run_transactions(postgres_db, range(next_transaction, next_transaction + count))
        if step == 0:
            postgres_db.execute(*NEW_SHAPE)
        if step == 1:
            postgres_db.execute(NEW_PARTITION)
        ledger_changes(postgres_db, range(next_transaction, next_transaction + 20))
        next_transaction += count
    end = current_lsn(postgres_db)

    finished = run_job("source_to_kafka.py", *args)

    assert finished.returncode == 0, finished.stderr[-3000:]
    records = read_committed(*seen)
    account_events, entry_events = events(records, accounts), events(records, entries)
    assert_topic_matches_table(account_events, postgres_db, "accounts")
    assert_topic_matches_table(entry_events, postgres_db, "entries")
    ledger_events = events(records, ledger)
    assert_topic_matches_table(ledger_events, postgres_db, "ledger")
    assert any(
        e.value and e.value["after"] and e.value["after"]["id"] >= 100000 for e in ledger_events
    )
    assert any(e.value and (e.value["after"] or {}).get("tag") for e in entry_events)
    # the 300 rows before the slot, and rows inserted between the runs that a resumed
    # snapshot read (their inserts in the slot are then skipped)
    assert ops(account_events).get("r", 0) >= 300
    # nothing is left for the slot to hold: also past changes the resumed snapshots already had
    position = slot_position(postgres_db, options["slot.name"])
    assert position is not None and lsn_at_least(position, end)
