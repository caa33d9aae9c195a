"""Failure injection for tests: kill the whole pipeline, or fail one Spark task, at a named point.

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

Failures instead of crashes: `fail_before_commit@<batch>` and `fail_after_commit@<batch>` raise
`InjectedFault` inside the source task (in its task host, at the same places as `before_commit`
and `after_commit`), which fails the Spark task as any error of a task would; Spark then retries
it. With a marker the fault fires once per run: the first attempt to reach it creates the marker
(exclusively, so concurrent tasks cannot both fire) and raises, later attempts find the marker
and go on. Without a marker it fires every time it is reached, as a persistent error would.

A lost task host: `lose_host_after_commit@<batch>` SIGKILLs only the task's host process once
its transaction committed, as when an executor is lost with its host: the Spark task fails on
the broken connection and its retry starts a new host that knows nothing of the first (fires
once per marker, like the failures).
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

from spark_eos_connect.errors import EosConnectError

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
    "fail_before_commit",
    "fail_after_commit",
    "lose_host_after_commit",
)
FAIL_PREFIX = "fail_"
LOSE_HOST_PREFIX = "lose_host_"


class InjectedFault(EosConnectError):
    """A failure raised on purpose by `maybe_fail`: the Spark task fails and is retried."""


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


def claim_marker(marker: str | None, text: str) -> bool:
    """Whether this attempt fires: always without a marker, else only the one that creates it."""
    if not marker:
        return True
    try:
        with open(marker, "x") as file:
            file.write(text)
    except FileExistsError:
        return False
    return True


def maybe_fail(point: str, batch_id: int | None) -> None:
    """Raise `InjectedFault` if `fail_<point>` is armed for `batch_id` and has not fired yet."""
    name = FAIL_PREFIX + point
    if batch_id is None or batch_id not in armed_batches(name, os.environ.get(FAULT_ENV)):
        return
    if claim_marker(os.environ.get(MARKER_ENV), f"{name}@{batch_id}\n"):
        raise InjectedFault(f"injected fault {name}@{batch_id} (EOSCONNECT_FAULT)")


def maybe_lose_host(point: str, batch_id: int | None) -> None:
    """SIGKILL this process alone if `lose_host_<point>` is armed for `batch_id` and has not
    fired yet."""
    name = LOSE_HOST_PREFIX + point
    if batch_id is None or batch_id not in armed_batches(name, os.environ.get(FAULT_ENV)):
        return
    if claim_marker(os.environ.get(MARKER_ENV), f"{name}@{batch_id}\n"):
        os.kill(os.getpid(), signal.SIGKILL)


def inject(point: str, batch_id: int | None) -> None:
    """`point` reached: crash if `point` is armed, raise if `fail_<point>` is, end this process
    if `lose_host_<point>` is."""
    maybe_crash(point, batch_id)
    maybe_fail(point, batch_id)
    maybe_lose_host(point, batch_id)


def arm_driver_group() -> None:
    """Driver: let injected faults kill this process group too (call before Spark starts)."""
    if os.environ.get(FAULT_ENV):
        os.environ[DRIVER_GROUP_ENV] = str(os.getpgrp())
