"""Machine-crash failures on the standalone cluster: executor JVMs SIGKILLed in the middle of a
micro-batch (Spark reschedules), also under a Java source (Debezium's PostgresConnector in its
JVM task host, which dies with the executor's Python processes), and the driver SIGKILLed then
resubmitted. The output in Kafka stays exact."""

from __future__ import annotations

import json
import os
import signal
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from spark_eos_connect.testing import wait_for
from spark_eos_connect.testing.campaigns import full_run
from spark_eos_connect.testing.postgres import PostgresDatabase

from ..connectors.postgres.cdc.cdc_checks import (
    SCHEMA,
    Writer,
    assert_topic_matches_table,
    events,
    run_transactions,
)
from ..connectors.postgres.cdc.test_postgres_cdc_source import (
    create_topics,
    lsn_at_least,
    slot_position,
)
from ..jvm_tasks.test_java_debezium_crash_recovery import (
    committed_lsn,
    debezium_options,
    job_args,
    lsn_text,
    streamed,
)
from .conftest import CLUSTER_MARKS, Submitted
from .standalone import (
    JOB_MARKER_ENV,
    StandaloneCluster,
    executor_pids,
    marked_pids,
    process_args,
    read_event_log,
)
from .test_jobs_on_cluster import (
    assert_generated_exactly_once,
    assert_ran_on,
    generator_args,
    succeeded,
)

pytestmark = CLUSTER_MARKS

EXECUTOR_KILLS = 2 if full_run() else 1
"""Executor JVMs SIGKILLed under a running sink job: twice in `make test-failover`'s long form,
once in `make test`'s short form (the source job's test below always kills twice)."""

PER_TASK = 900
RATE = (
    *("--option", "rate=150", "--option", "records.per.poll=50"),
    *("--max-records-per-trigger", "400"),
)
"""150 records/s per task, 200 per task per batch: each batch polls for over a second, so an
executor the REST API reports busy is still inside its task when the kill lands (with 100 per
batch, two thirds of a second, a fresh-clone run once saw the second kill land after the task
ended). Polls of 50: a micro-batch takes whole polls, and the Generator's first poll after a
pause returns what the rate allowed during it (up to `records.per.poll`), which would fill a
batch at once."""


def busy_executor(job: Submitted) -> tuple[str, int] | None:
    """`(executor id, pid)` of an executor JVM of `job` running a task right now."""
    app, executors = job.app_id(), job.rest("executors")
    if app is None or not executors:
        return None
    pids = executor_pids(app)
    for executor in executors:
        if executor["id"] in pids and executor.get("activeTasks", 0) > 0:
            return executor["id"], pids[executor["id"]]
    return None


def kill_busy_executor(job: Submitted, timeout_s: float = 120) -> str:
    """SIGKILL an executor JVM in the middle of a task; its id."""
    found: list[tuple[str, int]] = []

    def busy() -> bool:
        assert job.process.poll() is None, job.output()[-3000:]
        hit = busy_executor(job)
        found[:] = [hit] if hit else []
        return bool(hit)

    wait_for(busy, timeout_s, "an executor running a task")
    executor, pid = found[0]
    os.kill(pid, signal.SIGKILL)
    return executor


def test_executor_jvms_killed_mid_batch_twice(
    spark_cluster: StandaloneCluster,
    submit: Callable[..., Submitted],
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    read_committed: Callable[..., list[Any]],
    tmp_path: Path,
) -> None:
    topic = topic_factory("cluster-executor-kill", partitions=2)
    name = f"kill-{uuid.uuid4().hex[:8]}"
    job = submit(
        "source_to_kafka.py",
        *generator_args(name, topic, bootstrap_servers, tmp_path / "ck", PER_TASK),
        *RATE,
    )
    committed_before_kill: list[int] = []
    killed: list[str] = []
    for _ in range(2):  # the replacement of the first killed executor is killed too
        seen = committed_before_kill[-1] if committed_before_kill else 0
        wait_for(
            lambda s=seen: len(read_committed(topic, settled=False)) > s,
            240,
            "new committed records",
        )
        committed_before_kill.append(len(read_committed(topic)))
        killed.append(kill_busy_executor(job))

    succeeded(job, spark_cluster, timeout_s=400)
    assert committed_before_kill[-1] < 2 * PER_TASK  # both kills hit a running pipeline
    assert_generated_exactly_once([r.value for r in read_committed(topic)], 2, PER_TASK)
    events = job.event_log()
    assert_ran_on(spark_cluster, events, executors=2)
    assert set(killed) <= set(events.executors_removed)
    lost = [reason for reason in events.failed_tasks if reason == "ExecutorLostFailure"]
    assert len(lost) >= 2, events.failed_tasks  # each kill interrupted a running task
    replacements = set(events.executors_added) - {"0", "1"}
    assert len(replacements) >= 2 and replacements & set(events.tasks_per_executor)


def test_driver_killed_mid_run_then_resubmitted(
    spark_cluster: StandaloneCluster,
    submit: Callable[..., Submitted],
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    read_committed: Callable[..., list[Any]],
    tmp_path: Path,
) -> None:
    topic = topic_factory("cluster-driver-kill", partitions=2)
    args = [
        *generator_args(
            f"driver-{uuid.uuid4().hex[:8]}", topic, bootstrap_servers, tmp_path / "ck", PER_TASK
        ),
        *RATE,
    ]
    first = submit("source_to_kafka.py", *args)
    wait_for(lambda: len(read_committed(topic, settled=False)) > 0, 240, "committed records")
    wait_for(lambda: busy_executor(first) is not None, 120, "a running task")

    first.kill()  # spark-submit's JVM and the Python driver, as a machine crash would
    # what Kafka holds at the kill: a killed task's transaction stays open until fenced
    committed_at_kill = len(read_committed(topic, settled=False))
    spark_cluster.wait_idle()  # the master saw the driver go and freed its executors
    second = submit("source_to_kafka.py", *args)

    succeeded(second, spark_cluster, timeout_s=400)
    assert first.process.returncode == -signal.SIGKILL
    assert 0 < committed_at_kill < 2 * PER_TASK
    assert_generated_exactly_once([r.value for r in read_committed(topic)], 2, PER_TASK)
    [killed_log] = list(first.events.iterdir())
    assert read_event_log(killed_log).master == spark_cluster.master_url
    assert_ran_on(spark_cluster, second.event_log(), executors=2)


def test_executor_killed_under_a_java_debezium_source(
    spark_cluster: StandaloneCluster,
    submit: Callable[..., Submitted],
    postgres_db: PostgresDatabase,
    bootstrap_servers: str,
    kafka_config: dict[str, Any],
    read_committed: Callable[..., list[Any]],
    tmp_path: Path,
) -> None:
    """Debezium's one task streams changes a writer commits while an executor running it is
    SIGKILLed: its JVM task host goes with it, Spark runs the task on another executor, which
    starts Debezium again from the offsets in Kafka (the slot behind them or at them); every
    change once, the slot never ahead. The job runs without `--until-idle` (Debezium's polls
    are empty while its stream starts) and is stopped with SIGTERM once Kafka holds a last
    change made after all others."""
    postgres_db.execute(*SCHEMA)
    run_transactions(postgres_db, range(1, 51))
    name = f"java-dbz-exec-{uuid.uuid4().hex[:8]}"
    prefix = name.replace("-", "_")
    topics = create_topics(kafka_config, prefix)
    args = job_args(name, debezium_options(postgres_db, prefix), bootstrap_servers, tmp_path / "ck")
    job = submit("source_to_kafka.py", *args)

    def changes() -> int:
        return len(streamed(events(read_committed(topics[0], settled=False), topics[0])))

    def more_changes(than: int, what: str) -> None:
        wait_for(lambda: changes() > than, 240, what)

    writer = Writer(postgres_db, 51, pause_s=0.2)
    killed: list[str] = []
    try:  # from the slot's creation on: the snapshot holds what came before
        wait_for(lambda: slot_position(postgres_db, prefix) is not None, 240, "the slot")
        writer.start()
        for _ in range(EXECUTOR_KILLS):
            more_changes(changes(), "changes streamed since the last kill")
            killed.append(kill_busy_executor(job))
        more_changes(changes(), "changes streamed after the last kill")
    finally:
        if writer.is_alive():
            writer.stop()
    # a last account alone: once it is in Kafka, every change before it is (commit order)
    last = json.dumps({"id": 10_000_000})
    postgres_db.execute("INSERT INTO accounts VALUES (10000000, 'last', 0)")
    wait_for(
        lambda: any(e.key == last for e in events(read_committed(topics[0]), topics[0])),
        240,
        "the last account in Kafka",
    )
    [driver] = [
        pid
        for pid in marked_pids(job.marker, JOB_MARKER_ENV)
        if any(arg.endswith("source_to_kafka.py") for arg in process_args(pid)[1:2])
    ]
    os.kill(driver, signal.SIGTERM)  # the job stops its query and exits 0
    succeeded(job, spark_cluster, timeout_s=400)
    records = read_committed(*topics)
    for topic, table in zip(topics, ("accounts", "entries"), strict=True):
        assert_topic_matches_table(events(records, topic), postgres_db, table)
    key = json.dumps([name, {"server": prefix}], separators=(",", ":")).encode()
    kafka = committed_lsn(read_committed("eosconnect-offsets"), key)
    position = slot_position(postgres_db, prefix)
    assert kafka is not None and position is not None
    assert lsn_at_least(lsn_text(kafka), position), (position, lsn_text(kafka))
    log = job.event_log()
    assert set(killed) <= set(log.executors_removed)
    lost = [reason for reason in log.failed_tasks if reason == "ExecutorLostFailure"]
    assert len(lost) >= EXECUTOR_KILLS, log.failed_tasks  # each kill interrupted the task
