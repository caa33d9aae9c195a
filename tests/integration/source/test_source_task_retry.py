"""A source task that fails inside a real Spark task, before or after its commit, or whose task
host is killed after its commit (as when an executor is lost with it): Spark retries the task
(`local[N,4]`: four attempts). Before the commit, the retry starts afresh from the committed
offsets; after it, the retry finds the failed attempt's transaction in the offsets topic, emits
the rows it committed and runs nothing. Either way every record is in Kafka exactly once, the
micro-batches' rows (what a downstream sink gets) are every committed record once, and the task's
status is RUNNING again after the retry.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from spark_eos_connect.runtime.task_host import SPOOL_ENV
from spark_eos_connect.testing.job_output import spark_log

from .test_source_crash_recovery import (
    PER_TRIGGER,
    RECORDS_PER_TASK,
    TASKS,
    assert_each_record_exactly_once,
    pipeline_args,
)

pytestmark = pytest.mark.integration

FAILING_BATCH = 1
STALE_WARNING = "an earlier attempt already committed offsets"


@pytest.fixture
def host_logs(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[], str]]:
    """The job's task hosts log to a spool folder of its own (short: it holds Unix sockets);
    the fixture's value reads all their logs."""
    spool = Path(tempfile.mkdtemp(prefix="eos-retry-"))
    monkeypatch.setenv(SPOOL_ENV, str(spool))
    yield lambda: "\n".join(log.read_text() for log in sorted(spool.glob("hosts/*.log")))
    shutil.rmtree(spool, ignore_errors=True)


def retried_batch_line(records: str) -> re.Pattern[str]:
    """The host's line for the retried attempt of the failing batch: a fresh task (without the
    fault the batch would run on the task kept since batch 0)."""
    return re.compile(
        rf"batch {FAILING_BATCH}: {records} records committed in \d+ transactions, "
        r"[\d.]+ s \(fresh task\)"
    )


REPLAY_LINE = re.compile(  # the failed task's whole share: 500 records, one poll
    rf"batch {FAILING_BATCH}: {PER_TRIGGER // TASKS} records committed by an earlier attempt of "
    "this micro-batch, replayed"
)
BATCH_LINE = re.compile(r"^batch \d+: (\d+) records committed to Kafka", re.MULTILINE)


def rows_seen_by_the_sink(stdout: str) -> int:
    """The rows Spark handed the writer, summed over the micro-batches the job printed."""
    return sum(int(count) for count in BATCH_LINE.findall(stdout))


def task_states(status: list[Any], connector: str) -> dict[int, list[str]]:
    """Each task's states in the status topic, in the order they were written."""
    states: dict[int, list[str]] = {}
    prefix = f"status-task-{connector}-"
    for record in status:
        key = record.key.decode() if record.key else ""
        if key.startswith(prefix) and record.value is not None:
            states.setdefault(int(key[len(prefix) :]), []).append(json.loads(record.value)["state"])
    return states


@pytest.mark.parametrize(
    ("point", "retry_line", "failure"),
    [
        ("fail_before_commit", retried_batch_line(r"[1-9]\d*"), "InjectedFault"),
        ("fail_after_commit", REPLAY_LINE, "InjectedFault"),
        ("lose_host_after_commit", REPLAY_LINE, "the other end closed the connection"),
    ],
    ids=["before-commit", "after-commit", "host-lost-after-commit"],
)
def test_a_task_failing_inside_spark_is_retried_and_writes_each_record_once(
    point: str,
    retry_line: re.Pattern[str],
    failure: str,
    host_logs: Callable[[], str],
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    read_committed: Callable[..., list[Any]],
    run_job: Callable[..., Any],
    unique_name: Callable[[str], str],
    tmp_path: Path,
) -> None:
    topic, name = topic_factory("retry", partitions=2), unique_name("retry")
    args = pipeline_args(name, topic, bootstrap_servers, tmp_path / "ck")
    fault = f"{point}@{FAILING_BATCH}"
    marker = tmp_path / "fired"

    job = run_job("source_to_kafka.py", *args, fault=fault, marker=marker)

    assert job.returncode == 0, job.stderr[-3000:]  # Spark retried the failed task
    assert marker.read_text().strip() == fault  # fired once (the retry found the marker)
    assert re.search(r"Lost task \d+\.0 in stage", job.stderr), job.stderr[-3000:]
    assert failure in spark_log(job.stdout), (
        "the console has one line per lost task, the log its cause"
    )
    logs = host_logs()
    assert retry_line.search(logs), logs[-3000:]
    assert STALE_WARNING not in logs, logs[-3000:]
    assert_each_record_exactly_once(read_committed(topic))
    output = job.stdout + job.stderr  # the summaries are printed from a py4j callback
    assert rows_seen_by_the_sink(output) == TASKS * RECORDS_PER_TASK, output[-3000:]
    states = task_states(read_committed("eosconnect-status"), name)
    failed = [task for task, written in states.items() if "FAILED" in written]
    assert len(failed) == (1 if point.startswith("fail_") else 0), states  # a lost host says none
    for task in failed:  # the retry's success is recorded after the failure
        assert "RUNNING" in states[task][states[task].index("FAILED") :], states
