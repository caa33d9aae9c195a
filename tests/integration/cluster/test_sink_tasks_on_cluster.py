"""Live sink tasks on the standalone cluster: executor JVMs SIGKILLed while a sink query runs.
Spark runs the task again on another executor, whose task host starts it afresh; a sink keeping
its offsets in its output (`OffsetsInOutputSinkTask`, which rewinds in `open`) and PostgresSink
(offsets in the table's own transaction) end with every record exactly once."""

from __future__ import annotations

import os
import signal
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg

from spark_eos_connect.testing import wait_for
from spark_eos_connect.testing.postgres import PostgresDatabase

from ..sink.test_live_sink_tasks import produce_values, written
from ..sink.test_postgres_sink_query import (
    QUICK_IDLE,
    TWO_SINKS_JOB,
    assert_each_id_once,
    assert_upsert_state,
    produce_both,
    second_sink_args,
    sink_options,
    table_rows,
)
from .conftest import CLUSTER_MARKS, Submitted
from .standalone import StandaloneCluster, executor_pids
from .test_failures_on_cluster import EXECUTOR_KILLS, kill_busy_executor
from .test_jobs_on_cluster import succeeded

pytestmark = CLUSTER_MARKS

CONNECTORS = Path(__file__).parents[1] / "sink" / "sink_test_connectors.py"
RECORDS = 1600

# The job's driver imports the test connectors from their folder (the executors get the module
# through spark.submit.pyFiles); set before the cluster fixture starts its processes.
os.environ["PYTHONPATH"] = os.pathsep.join(
    p for p in (str(CONNECTORS.parent), os.environ.get("PYTHONPATH")) if p
)


def wrote_more(job: Submitted, out: Path, seen: int) -> bool:
    """Whether the sink wrote past `seen` lines (failing at once if the job ended)."""
    assert job.process.poll() is None, job.output()[-3000:]
    return len(written(out)) > seen


def test_sink_tasks_rerun_elsewhere_after_executor_kills_write_each_record_once(
    spark_cluster: StandaloneCluster,
    submit: Callable[..., Submitted],
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    produce: Callable[..., None],
    read_committed: Callable[..., list[Any]],
    tmp_path: Path,
) -> None:
    topic = topic_factory("cluster-sink-kill", partitions=2)
    produce_values(produce, topic, range(RECORDS))
    out = tmp_path / "out.txt"
    job = submit(
        "kafka_to_sink.py",
        *("--name", f"sinkkill-{uuid.uuid4().hex[:8]}", "--tasks-max", "2", "--topics", topic),
        *("--connector-class", "sink_test_connectors.OffsetsInOutputSinkConnector"),
        *("--option", f"file={out}", "--option", "put.delay.ms=100"),
        *("--option", "consumer.override.max.poll.records=25"),
        *("--max-records-per-trigger", "200", "--bootstrap-servers", bootstrap_servers),
        *("--checkpoint", str(tmp_path / "ck"), "--until-idle", "--timeout", "300"),
        conf={"spark.submit.pyFiles": str(CONNECTORS)},
    )
    killed = []
    for _ in range(EXECUTOR_KILLS):
        seen = len(written(out))
        wait_for(lambda s=seen: wrote_more(job, out, s), 240, "the sink to write more")
        killed.append(kill_busy_executor(job))

    succeeded(job, spark_cluster, timeout_s=400)
    lines = written(out)
    assert len(killed) == EXECUTOR_KILLS and len(lines) == len(set(lines)), (
        "a record was written twice"
    )
    assert sorted(lines) == sorted(
        (r.partition, r.offset, r.value.decode()) for r in read_committed(topic)
    )
    lost = [r for r in job.event_log().failed_tasks if r == "ExecutorLostFailure"]
    assert len(lost) >= EXECUTOR_KILLS  # each kill interrupted a running sink task


def killed_executor(job: Submitted) -> str:
    """SIGKILL an executor JVM of `job`, one running a task if one shows within a few seconds
    (PostgresSink's tasks are short), else any; its id."""
    try:
        return kill_busy_executor(job, timeout_s=10)
    except AssertionError:  # no task showed: any executor (the driver's REST API may be slow)
        found: dict[str, int] = {}

        def any_executor() -> bool:
            app = job.app_id()
            found.update(executor_pids(app) if app is not None else {})
            return bool(found)

        wait_for(any_executor, 120, "the job's application id and an executor of it")
        executor, pid = sorted(found.items())[0]
        os.kill(pid, signal.SIGKILL)
        return executor


def test_postgres_sink_writes_each_record_once_through_executor_kills(
    spark_cluster: StandaloneCluster,
    submit: Callable[..., Submitted],
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    produce: Callable[..., None],
    postgres_db: PostgresDatabase,
    tmp_path: Path,
) -> None:
    """One job runs two sinks, so each kill hits both: insert mode with `pk.mode=kafka`, and
    upsert by record key with tombstones deleting (`delete.enabled`)."""
    topic = topic_factory("cluster-pg-kill", partitions=2)
    upsert_topic = topic_factory("cluster-pg-kill-up", partitions=2)
    produce_both(produce, topic, upsert_topic, range(RECORDS))
    name = f"pgkill-{uuid.uuid4().hex[:8]}"
    options = sink_options(postgres_db, name, topic, bootstrap_servers)
    job = submit(
        TWO_SINKS_JOB,
        *("--name", options.pop("name"), "--connector-class", options.pop("connector.class")),
        *("--topics", options.pop("topics"), "--tasks-max", "2"),
        *("--bootstrap-servers", options.pop("kafka.bootstrap.servers")),
        *(f"--option={key}={value}" for key, value in options.items()),
        *("--max-records-per-trigger", "100", "--checkpoint", str(tmp_path / "ck")),
        *("--until-idle", "--timeout", "300"),
        *second_sink_args(f"{name}-up", upsert_topic, tmp_path / "ck-upsert"),
        conf=dict([QUICK_IDLE.split("=")]),
    )

    def rows() -> int:
        assert job.process.poll() is None, job.output()[-3000:]
        try:
            return len(table_rows(postgres_db, "SELECT id FROM orders"))
        except psycopg.errors.UndefinedTable:
            return 0

    for _ in range(EXECUTOR_KILLS):
        seen = rows()
        wait_for(lambda s=seen: rows() > s, 240, "more rows in the table")
        killed_executor(job)

    succeeded(job, spark_cluster, timeout_s=400)
    assert_each_id_once(postgres_db, RECORDS)
    assert_upsert_state(postgres_db, RECORDS)
