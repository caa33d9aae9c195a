"""A source task that fails inside a real Spark task, before or after its commit: Spark retries
the task (`local[N,4]`: four attempts). Before the commit, the retry starts afresh from the
committed offsets; after it, the task's host replays the rows the failed attempt committed and
runs nothing. Either way every record is in Kafka exactly once, and the micro-batch's rows (what
a downstream sink gets) are all its committed records.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from spark_eos_connect.runtime.source_plan import SPOOL_ENV

from .test_source_crash_recovery import (
    PER_TRIGGER,
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


@pytest.mark.parametrize(
    ("point", "retry_line"),
    [
        ("fail_before_commit", retried_batch_line(r"[1-9]\d*")),
        ("fail_after_commit", REPLAY_LINE),
    ],
    ids=["before-commit", "after-commit"],
)
def test_a_task_failing_inside_spark_is_retried_and_writes_each_record_once(
    point: str,
    retry_line: re.Pattern[str],
    host_logs: Callable[[], str],
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    read_committed: Callable[..., list[Any]],
    run_job: Callable[..., Any],
    unique_name: Callable[[str], str],
    tmp_path: Path,
) -> None:
    topic = topic_factory("retry", partitions=2)
    args = pipeline_args(unique_name("retry"), topic, bootstrap_servers, tmp_path / "ck")
    fault = f"{point}@{FAILING_BATCH}"
    marker = tmp_path / "fired"

    job = run_job("source_to_kafka.py", *args, fault=fault, marker=marker)

    assert job.returncode == 0, job.stderr[-3000:]  # Spark retried the failed task
    assert marker.read_text().strip() == fault  # fired once (the retry found the marker)
    assert re.search(r"Lost task \d+\.0 in stage", job.stderr), job.stderr[-3000:]
    assert "InjectedFault" in job.stderr
    logs = host_logs()
    assert retry_line.search(logs), logs[-3000:]
    assert STALE_WARNING not in logs, logs[-3000:]
    assert_each_record_exactly_once(read_committed(topic))
