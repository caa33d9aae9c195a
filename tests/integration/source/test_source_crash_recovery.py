"""I2: kill -9 the whole source pipeline at chosen points, restart, and count with read_committed:
every generated record exactly once, also when Spark's checkpoint is lost before the restart."""

from __future__ import annotations

import shutil
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from spark_eos_connect.connectors.generator import parse_generated_value
from spark_eos_connect.testing.campaigns import full_run

pytestmark = pytest.mark.integration

TASKS = 2
RECORDS_PER_TASK = 3000
PER_TRIGGER = 1000  # 500 per task, one poll each: six batches with records, crashes in 1 to 3


def pipeline_args(name: str, topic: str, bootstrap: str, checkpoint: Path) -> list[str]:
    return [
        "--name",
        name,
        "--connector-class",
        "Generator",
        "--tasks-max",
        str(TASKS),
        "--max-records-per-trigger",
        str(PER_TRIGGER),
        "--option",
        f"topic={topic}",
        "--option",
        f"max.records={RECORDS_PER_TASK}",
        "--option",
        "records.per.poll=500",
        "--bootstrap-servers",
        bootstrap,
        "--checkpoint",
        str(checkpoint),
        "--until-idle",
        "--timeout",
        "240",
    ]


def assert_each_record_exactly_once(records: list[Any]) -> None:
    counts = Counter(parse_generated_value(r.value) for r in records)
    duplicates = {key: n for key, n in counts.items() if n > 1}
    expected = {(task, n) for task in range(TASKS) for n in range(RECORDS_PER_TASK)}
    missing = expected - set(counts)
    assert not duplicates, f"{len(duplicates)} duplicated records, e.g. {list(duplicates)[:5]}"
    assert not missing, f"{len(missing)} missing records, e.g. {sorted(missing)[:5]}"
    assert set(counts) == expected


KEPT_CHECKPOINT_CRASHES = (
    ("poll@1", "before_commit@2", "after_commit@3") if full_run() else ("before_commit@1",)
)
"""Short form: a transaction open at the kill (`make demo`'s test kills after a commit)."""
LOST_CHECKPOINT_CRASHES = (
    ("before_commit@1", "after_commit@1") if full_run() else ("after_commit@1",)
)
"""Short form: a committed transaction Spark never recorded, then no checkpoint: the hardest."""


@pytest.mark.parametrize(
    ("crashes", "lose_checkpoint"),
    [(KEPT_CHECKPOINT_CRASHES, False), (LOST_CHECKPOINT_CRASHES, True)],
    ids=["checkpoint-kept", "checkpoint-lost"],
)
def test_killed_pipeline_restarts_without_duplicates_or_loss(
    crashes: tuple[str, ...],
    lose_checkpoint: bool,
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    read_committed: Callable[..., list[Any]],
    run_job: Callable[..., Any],
    unique_name: Callable[[str], str],
    tmp_path: Path,
) -> None:
    """One pipeline killed at each point in turn (each run resumes what the last one left, with
    Spark's checkpoint or without it), then run to the end."""
    topic = topic_factory("crash", partitions=2)
    name = unique_name("crash")
    checkpoint = tmp_path / "checkpoint"
    args = pipeline_args(name, topic, bootstrap_servers, checkpoint)
    committed = 0

    for fault in crashes:
        marker = tmp_path / f"fired-{fault}"
        crashed = run_job("source_to_kafka.py", *args, fault=fault, marker=marker)

        assert crashed.returncode == -9, crashed.stderr[-3000:]
        assert marker.read_text().strip() == fault
        committed_so_far = len(read_committed(topic, settled=False))  # a transaction may be open
        assert committed <= committed_so_far < TASKS * RECORDS_PER_TASK
        committed = committed_so_far
        if lose_checkpoint:
            shutil.rmtree(checkpoint)

    restarted = run_job("source_to_kafka.py", *args)

    assert restarted.returncode == 0, restarted.stderr[-3000:]
    assert_each_record_exactly_once(read_committed(topic))
