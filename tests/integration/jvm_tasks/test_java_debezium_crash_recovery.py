"""Kill campaign for Debezium 3.6.1.Final's Java PostgresConnector with
`exactly.once.support=required` through `jobs/source_to_kafka.py` (issue 46): the snapshot, then
streaming while database transactions commit; the job SIGKILLed (driver, Spark, task hosts and
their JVMs), a restart without Spark's checkpoint that loses its JVM task host alone (the
Spark task fails, its retry starts a new JVM from the offsets committed to Kafka while the
replication slot may lag behind them). After every run the slot's confirmed flush LSN is not
ahead of what Kafka committed (Debezium's `commit()` acks the WAL only once its transaction
committed); at the end read_committed sees every change of both tables exactly once, in commit
order, and the topics replay to the tables.

The kills land after the snapshot's last record committed (the first one once Kafka holds
streamed changes, each later driver kill's phase checked from what Kafka holds): Debezium
takes an interrupted snapshot again from its start (its documented behaviour, under a Connect
worker too), so a kill inside it repeats the snapshot's reads by design.

`make test` runs the short form: every process of the job SIGKILLed at once while it streams
(the snapshot done in the same run), then a restart without the checkpoint that loses its JVM
with the first records of its second micro-batch. `make test-failover`
(`EOSCONNECT_FAILOVER=full`) goes on with a driver kill after a commit, the task host lost
with its JVM, the JVM alone lost after a commit, a driver kill before a commit, and a last run
that keeps the killed run's checkpoint."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from spark_eos_connect.jvm import jars
from spark_eos_connect.runtime.commit_hooks import HOOKS_ENV
from spark_eos_connect.testing import wait_for
from spark_eos_connect.testing.campaigns import full_run
from spark_eos_connect.testing.faults import FAULT_ENV, MARKER_ENV, job_environment
from spark_eos_connect.testing.postgres import PostgresDatabase

from ..cluster.standalone import JOB_MARKER_ENV, marked_pids
from ..connectors.postgres.cdc.cdc_checks import (
    SCHEMA,
    Event,
    Writer,
    assert_exactly_once,
    assert_topic_matches_table,
    events,
    ops,
    run_transactions,
)
from ..connectors.postgres.cdc.test_postgres_cdc_crash_recovery import crash_phase
from ..connectors.postgres.cdc.test_postgres_cdc_source import (
    create_topics,
    lsn_at_least,
    slot_position,
)

pytestmark = pytest.mark.integration

DEBEZIUM = "io.debezium.connector.postgresql.PostgresConnector"
JSON = "org.apache.kafka.connect.json.JsonConverter"
PER_TRIGGER = 100
JOB_TIMEOUT_S = 240.0
STREAMED_BEFORE_CRASH = 30
"""Streamed account changes committed before the machine crash."""
SENTINELS = 10_000_000
"""Ids of the accounts inserted alone after a run's changes: once one is in Kafka, every
change before it is (one task, commit order)."""
SNAPSHOT_TRANSACTIONS = 100
"""About 190 rows: two micro-batches of the first run."""
BETWEEN_RUNS = 100
"""Transactions committed while no job runs (about 300 records: three micro-batches or more,
so a kill at micro-batch 2 finds records to commit)."""

MACHINE_CRASH = "machine_crash"
"""Not a fault point: every process of the job (driver, Spark, Python workers, task hosts and
their JVMs) SIGKILLed at once from outside, once Kafka holds the snapshot and streamed changes
while a writer commits transactions. A fault point counts micro-batches, and how many the
snapshot takes is not fixed (a micro-batch ends at an empty poll, and Debezium's first polls
trickle)."""
SHORT_PLAN = (MACHINE_CRASH, "lose_jvm_poll@1")
FULL_PLAN = (
    *SHORT_PLAN,
    "after_commit@1",
    "lose_host_after_commit@1",
    "lose_jvm_after_commit@2",
    "before_commit@2",
)
"""The runs before the last check, in order, each without the checkpoint of the one before;
in the long form a last run without a fault keeps the checkpoint of the killed run before it."""


def lsn_text(value: int) -> str:
    """A 64-bit LSN as PostgreSQL writes it (`16/B374D848`)."""
    return f"{value >> 32:X}/{value & 0xFFFFFFFF:X}"


def debezium_options(database: PostgresDatabase, prefix: str) -> dict[str, str]:
    """Debezium's options: schemaless JSON, numerics as doubles, the slot kept across runs,
    polls of at most 50 changes. A micro-batch takes its polls whole (`PER_TRIGGER` is 100), so
    with Debezium's default of 2,048 a restart's first micro-batch could take the whole backlog
    in one poll, leaving none to the micro-batch a fault point waits for."""
    return {
        "plugin.path": str(jars.plugin_path("debezium")),
        "exactly.once.support": "required",
        **database.connector_options(),
        "topic.prefix": prefix,
        "plugin.name": "pgoutput",
        "slot.name": prefix,
        "publication.name": f"{prefix}_pub",
        "publication.autocreate.mode": "filtered",
        "table.include.list": "public.accounts,public.entries",
        "decimal.handling.mode": "double",
        "key.converter": JSON,
        "key.converter.schemas.enable": "false",
        "value.converter": JSON,
        "value.converter.schemas.enable": "false",
        "max.batch.size": "50",
    }


def job_args(name: str, options: dict[str, str], bootstrap: str, checkpoint: Path) -> list[str]:
    """The job's arguments, without `--until-idle`: Debezium's polls come back empty while its
    stream starts, which `--until-idle` would take for the end; a run ends by its kill, by a
    SIGTERM once Kafka holds what the test waits for, or by its `--timeout`."""
    args = ["--name", name, "--connector-class", DEBEZIUM]
    args += ["--max-records-per-trigger", str(PER_TRIGGER)]
    for key, value in options.items():
        args += ["--option", f"{key}={value}"]
    args += ["--bootstrap-servers", bootstrap, "--checkpoint", str(checkpoint)]
    return [*args, "--timeout", str(int(JOB_TIMEOUT_S))]


def committed_lsn(offsets: list[Any], key: bytes) -> int | None:
    """The furthest WAL position the last offset committed to Kafka for `key` names (Debezium
    acks `lsn_commit`, else `lsn_proc`), None before any."""
    values = [r.value for r in offsets if r.key == key and r.value]
    if not values:
        return None
    last = json.loads(values[-1])
    return max(int(last[field]) for field in ("lsn", "lsn_proc", "lsn_commit") if last.get(field))


def streamed(stream: list[Event]) -> list[Event]:
    """The changes read from the slot (not the snapshot's reads, not tombstones)."""
    return [e for e in stream if e.value is not None and e.value["op"] != "r"]


def kill_every_process(marker: str) -> None:
    """SIGKILL every process whose environment holds `JOB_MARKER_ENV=marker`, until none is
    left (one spawned meanwhile is killed on the next round)."""

    def none_left() -> bool:
        pids = marked_pids(marker, JOB_MARKER_ENV)
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        return not pids

    wait_for(none_left, 30, "every process of the job gone")


def start_with_fault(
    start_job: Callable[..., Any],
    monkeypatch: pytest.MonkeyPatch,
    args: list[str],
    fault: str | None,
    marker: Path,
) -> Any:
    """`jobs/source_to_kafka.py` in the background with `fault` armed, every process of it
    marked with `JOB_MARKER_ENV` = its marker's name (`start_job` passes this process's
    environment on)."""
    with monkeypatch.context() as env:
        for name in (FAULT_ENV, MARKER_ENV, HOOKS_ENV):
            env.delenv(name, raising=False)
        for name, value in job_environment(fault, str(marker)).items():
            env.setenv(name, value)
        env.setenv(JOB_MARKER_ENV, marker.name)
        return start_job("source_to_kafka.py", *args)


def test_debezium_killed_and_its_jvm_lost_restarts_from_what_kafka_committed(
    postgres_db: PostgresDatabase,
    bootstrap_servers: str,
    kafka_config: dict[str, Any],
    read_committed: Callable[..., list[Any]],
    run_job: Callable[..., Any],
    start_job: Callable[..., Any],
    monkeypatch: pytest.MonkeyPatch,
    unique_name: Callable[[str], str],
    tmp_path: Path,
) -> None:
    postgres_db.execute(*SCHEMA)
    run_transactions(postgres_db, range(1, SNAPSHOT_TRANSACTIONS + 1))
    name = unique_name("java-dbz-crash")
    prefix = name.replace("-", "_")
    accounts, entries = create_topics(kafka_config, prefix)
    options = debezium_options(postgres_db, prefix)
    checkpoint = tmp_path / "checkpoint"
    args = job_args(name, options, bootstrap_servers, checkpoint)
    key = json.dumps([name, {"server": prefix}], separators=(",", ":")).encode()
    seen = {accounts: 0, entries: 0}
    next_transaction = SNAPSHOT_TRANSACTIONS + 1
    plan = FULL_PLAN if full_run() else SHORT_PLAN

    def assert_slot_not_ahead_of_kafka(after: str) -> int | None:
        position = slot_position(postgres_db, prefix)
        assert position is not None, f"{after}: the slot is gone"
        kafka = committed_lsn(read_committed("eosconnect-offsets"), key)
        if kafka is not None:
            assert lsn_at_least(lsn_text(kafka), position), (
                f"{after}: the slot confirmed {position}, Kafka committed up to {lsn_text(kafka)}"
            )
        return kafka

    def run_until_caught_up(job: Any, step: int, marker: Path | None) -> tuple[int, str]:
        """Insert sentinel `step`, wait until it is in Kafka (and `marker` written), stop the
        job with SIGTERM; its return code and output."""
        sentinel = SENTINELS + step
        postgres_db.execute(f"INSERT INTO accounts VALUES ({sentinel}, 'sentinel', 0)")

        def caught_up() -> bool:
            if job.process.poll() is not None:
                return True  # ended by itself: the assertions on it say how
            if marker is not None and not marker.exists():
                return False
            read = read_committed(accounts, settled=False)
            return any(e.key == json.dumps({"id": sentinel}) for e in events(read, accounts))

        try:
            wait_for(caught_up, JOB_TIMEOUT_S, f"sentinel account {sentinel} in Kafka")
        except AssertionError as timed_out:  # say whether the fault fired, and what the job said
            fired = marker is None or marker.exists()
            raise AssertionError(
                f"{timed_out} (fault fired: {fired}); the job's log ends with:\n"
                + job.log.read_text()[-3000:]
            ) from None
        if job.process.poll() is not None:
            return job.process.returncode, job.log.read_text()
        output = job.stop(signal.SIGTERM, 120)
        return job.process.returncode, output

    def crash_while_streaming(marker: Path, first: int) -> int:
        """Run the job while a writer commits transactions from `first` on (from the slot's
        creation: the snapshot holds what came before); once Kafka holds the snapshot's last
        record and streamed changes, SIGKILL every process of the job. The number of the next
        transaction."""
        job = start_with_fault(start_job, monkeypatch, args, None, marker)
        writer = Writer(postgres_db, first)

        def streaming() -> bool:  # Debezium streams once its snapshot ended
            assert job.process.poll() is None, job.log.read_text()[-3000:]
            read = events(read_committed(accounts, settled=False), accounts)
            return len(streamed(read)) >= STREAMED_BEFORE_CRASH

        try:
            wait_for(lambda: slot_position(postgres_db, prefix) is not None, JOB_TIMEOUT_S, "slot")
            writer.start()
            wait_for(streaming, JOB_TIMEOUT_S, "the snapshot, then streamed changes in Kafka")
            kill_every_process(marker.name)
        finally:
            if writer.is_alive():
                writer.stop()
        assert job.process.wait(10) == -signal.SIGKILL
        return writer.next

    run_start = dict(seen)
    for step, fault in enumerate(plan):
        shutil.rmtree(checkpoint, ignore_errors=True)  # Spark's checkpoint lost as well
        marker = tmp_path / f"fired-{step}-{uuid.uuid4().hex}"
        run_start = dict(seen)
        lost = fault.startswith("lose_")
        if fault == MACHINE_CRASH:
            next_transaction = crash_while_streaming(marker, next_transaction)
        elif lost:  # the job goes on: stopped once Kafka holds every change made before it
            returncode, output = run_until_caught_up(
                start_with_fault(start_job, monkeypatch, args, fault, marker), step, marker
            )
            assert returncode == 0, output[-3000:]
            assert marker.read_text().strip() == fault
            assert re.search(r"Lost task \d+\.0 in stage", output), output[-3000:]
        else:
            ended = run_job("source_to_kafka.py", *args, fault=fault, marker=marker)
            assert ended.returncode == -9, ended.stderr[-3000:]
            assert marker.read_text().strip() == fault
        # a kill before the commit leaves its transaction open until the next run fences it
        committed = read_committed(*seen, settled=fault.startswith(("after", "lose")))
        now = {topic: events(committed, topic) for topic in seen}
        for topic in seen:
            assert len(now[topic]) >= seen[topic]
            assert_exactly_once(now[topic])
        run_events = [e for topic in seen for e in now[topic][seen[topic] :]]
        if not lost and fault != MACHINE_CRASH:
            every = [e for topic in seen for e in now[topic]]
            assert crash_phase(fault, run_events, every) == "streaming", (fault, ops(run_events))
        assert streamed(run_events), f"{fault}: the run streamed no change: {ops(run_events)}"
        assert_slot_not_ahead_of_kafka(f"after {fault}")
        seen = {topic: len(now[topic]) for topic in seen}
        if step < len(plan) - 1 or full_run():  # changes for the next run to stream
            run_transactions(postgres_db, range(next_transaction, next_transaction + BETWEEN_RUNS))
            next_transaction += BETWEEN_RUNS

    if full_run():  # a restart that keeps the killed run's checkpoint
        run_start = dict(seen)
        job = start_with_fault(start_job, monkeypatch, args, None, tmp_path / "unused")
        returncode, output = run_until_caught_up(job, len(plan), None)
        assert returncode == 0, output[-3000:]

    records = read_committed(*seen)
    account_events, entry_events = events(records, accounts), events(records, entries)
    assert_topic_matches_table(account_events, postgres_db, "accounts")
    assert_topic_matches_table(entry_events, postgres_db, "entries")
    assert ops(account_events).get("r", 0) >= SNAPSHOT_TRANSACTIONS
    kafka = assert_slot_not_ahead_of_kafka("the end")
    position = slot_position(postgres_db, prefix)
    last_run = streamed(account_events[run_start[accounts] :] + entry_events[run_start[entries] :])
    assert kafka is not None and position is not None and last_run
    first_lsn = min(e.value["source"]["lsn"] for e in last_run if e.value is not None)
    assert lsn_at_least(position, lsn_text(first_lsn)), (
        f"the slot at {position} was not acked past the last run's first change {first_lsn}"
    )
