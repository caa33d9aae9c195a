"""Failure injection for crash tests: kill the whole pipeline at a named point.

`EOSCONNECT_FAULT=<point>@<batch>[,<point>@<batch>...]` arms a point for one micro-batch; when it
is reached the process group is killed with SIGKILL (driver, JVM and Python workers alike), as a
machine crash would. `EOSCONNECT_FAULT_MARKER=<file>` gets written first so a test can tell the
crash happened where it asked. Points: `poll` (reader, after the first poll), `before_commit`
(writer, records and offsets produced, transaction not committed), `after_commit` (writer,
transaction committed, Spark not yet told). Sink side: `put` (executor, after the first `put`
chunk of a sink task, or inside the Delta sink's write job before its commit),
`before_group_commit` (driver, the sink's data is durable - Delta committed - and `pre_commit`
answered, consumer group not yet written), `during_group_commit` (driver, in the commit step:
consumer group written when there was anything to commit, Spark's commit log not yet).
Spark's Python daemon runs its workers in a process group of their own, so the job publishes
its driver's group in `EOSCONNECT_FAULT_PGID` (see `arm_driver_group`) and both groups are killed.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

FAULT_ENV = "EOSCONNECT_FAULT"
MARKER_ENV = "EOSCONNECT_FAULT_MARKER"
DRIVER_GROUP_ENV = "EOSCONNECT_FAULT_PGID"
POINTS = (
    "poll",
    "before_commit",
    "after_commit",
    "put",
    "before_group_commit",
    "during_group_commit",
)


def armed_batches(point: str, spec: str | None) -> set[int]:
    """The batch ids for which `point` is armed in `spec` (pure, for tests)."""
    batches: set[int] = set()
    for item in (spec or "").split(","):
        name, _, batch = item.strip().partition("@")
        if name == point and batch.strip().lstrip("-").isdigit():
            batches.add(int(batch))
    return batches


def maybe_crash(point: str, batch_id: int | None) -> None:
    """SIGKILL the process group if `point` is armed for `batch_id`."""
    if batch_id is None or batch_id not in armed_batches(point, os.environ.get(FAULT_ENV)):
        return
    marker = os.environ.get(MARKER_ENV)
    if marker:
        Path(marker).write_text(f"{point}@{batch_id}\n")
    driver_group = os.environ.get(DRIVER_GROUP_ENV)
    if driver_group:
        os.killpg(int(driver_group), signal.SIGKILL)
    os.killpg(os.getpgrp(), signal.SIGKILL)


def arm_driver_group() -> None:
    """Driver: let injected faults kill this process group too (call before Spark starts)."""
    if os.environ.get(FAULT_ENV):
        os.environ[DRIVER_GROUP_ENV] = str(os.getpgrp())
