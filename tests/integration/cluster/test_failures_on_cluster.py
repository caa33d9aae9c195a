"""Machine-crash failures on the standalone cluster: executor JVMs SIGKILLed in the middle of a
micro-batch (Spark reschedules), and the driver SIGKILLed then resubmitted. The output in Kafka
stays exact."""

from __future__ import annotations

import os
import signal
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from spark_eos_connect.testing import wait_for
from spark_eos_connect.testing.campaigns import full_run

from .conftest import CLUSTER_MARKS, Submitted
from .standalone import StandaloneCluster, executor_pids, read_event_log
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
RATE = ("--option", "rate=150", "--max-records-per-trigger", "400")
"""150 records/s per task, 200 per task per batch: each batch polls for over a second, so an
executor the REST API reports busy is still inside its task when the kill lands (with 100 per
batch, two thirds of a second, a fresh-clone run once saw the second kill land after the task
ended)."""


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
    committed_at_kill = len(read_committed(topic))
    spark_cluster.wait_idle()  # the master saw the driver go and freed its executors
    second = submit("source_to_kafka.py", *args)

    succeeded(second, spark_cluster, timeout_s=400)
    assert first.process.returncode == -signal.SIGKILL
    assert 0 < committed_at_kill < 2 * PER_TASK
    assert_generated_exactly_once([r.value for r in read_committed(topic)], 2, PER_TASK)
    [killed_log] = list(first.events.iterdir())
    assert read_event_log(killed_log).master == spark_cluster.master_url
    assert_ran_on(spark_cluster, second.event_log(), executors=2)
