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
Spark's Python daemon runs its workers in a process group of their own, so the hooks remember the
driver's group and both groups are killed.

A test arms faults through the job's environment (`job_environment`): the fault variables and
`EOSCONNECT_COMMIT_HOOKS` naming `EnvironmentFaults`. The job's driver installs the hooks that
variable names before Spark starts (`runtime.commit_hooks.install_from_environment`); the plans
the driver sends to executors carry them (they pickle), so no executor reads the environment
and production code never imports this module.

Failures instead of crashes: `fail_before_commit@<batch>` and `fail_after_commit@<batch>` raise
`InjectedFault` inside the source task (in its task host, at the same places as `before_commit`
and `after_commit`), which fails the Spark task as any error of a task would; Spark then retries
it. With a marker the fault fires once per run: the first attempt to reach it creates the marker
(exclusively, so concurrent tasks cannot both fire) and raises, later attempts find the marker
and go on. Without a marker it fires every time it is reached, as a persistent error would.

A lost task host: `lose_host_after_commit@<batch>` SIGKILLs only the task's host process once
its transaction committed, as when an executor is lost with its host: the Spark task fails on
the broken connection and its retry starts a new host that knows nothing of the first (fires
once per marker, like the failures). A Java plugin's task runs in a JVM task host the Python
host spawned (`jvm_tasks.client`): that JVM is SIGKILLed first, so it dies as an executor loss
would kill it rather than ending in order when its input closes.

A lost JVM task host alone: `lose_jvm_<point>@<batch>` (e.g. `lose_jvm_poll@1`,
`lose_jvm_after_commit@1`) SIGKILLs only the JVM task hosts of the process that reaches the
point, the Python task host going on: the Java task's next request to its JVM fails, the Spark
task fails (an open transaction aborted) and its retry starts a new JVM from the committed
offsets (fires once per marker). Nothing happens in a process without a JVM task host.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from spark_eos_connect.errors import EosConnectError
from spark_eos_connect.plugins.loader import class_path
from spark_eos_connect.runtime import commit_hooks

FAULT_ENV = "EOSCONNECT_FAULT"
MARKER_ENV = "EOSCONNECT_FAULT_MARKER"
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
    "lose_jvm_poll",
    "lose_jvm_before_commit",
    "lose_jvm_after_commit",
)
FAIL_PREFIX = "fail_"
LOSE_HOST_PREFIX = "lose_host_"
LOSE_JVM_PREFIX = "lose_jvm_"
VARIANTS = (FAIL_PREFIX, LOSE_HOST_PREFIX, LOSE_JVM_PREFIX)
"""What may prefix a point: a failure, a lost task host, a lost JVM task host."""


class InjectedFault(EosConnectError):
    """A failure raised on purpose at a `fail_<point>`: the Spark task fails and is retried."""


def armed_batches(point: str, spec: str | None) -> set[int]:
    """The batch ids for which `point` is armed in `spec` (pure, for tests)."""
    batches: set[int] = set()
    for item in (spec or "").split(","):
        name, _, batch = item.strip().partition("@")
        if name == point and batch.strip().lstrip("-").isdigit():
            batches.add(int(batch))
    return batches


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


@dataclass(frozen=True)
class EnvironmentFaults:
    """Commit hooks that crash, fail or lose the task host where `spec` says (see above)."""

    spec: str
    marker: str | None = None
    driver_group: int | None = None
    """The driver's process group, killed with the current one by a crash."""

    @classmethod
    def from_environment(cls, environ: Mapping[str, str]) -> EnvironmentFaults | None:
        """The faults `EOSCONNECT_FAULT` arms, or None. The driver's group is the one
        `commit_hooks.install_from_environment` recorded, else this process's."""
        spec = environ.get(FAULT_ENV)
        if not spec:
            return None
        group = environ.get(commit_hooks.DRIVER_GROUP_ENV, "")
        driver_group = int(group) if group.isdigit() else os.getpgrp()
        return cls(spec, environ.get(MARKER_ENV) or None, driver_group)

    def armed(self, point: str) -> bool:
        """Whether any variant of `point` is armed for some batch."""
        names = (point, *(prefix + point for prefix in VARIANTS))
        return any(armed_batches(name, self.spec) for name in names)

    def reached(self, point: str, batch_id: int | None) -> None:
        """`point` reached: crash if `point` is armed, raise if `fail_<point>` is, end this
        process if `lose_host_<point>` is, its JVM task hosts if `lose_jvm_<point>` is."""
        if batch_id is None:
            return
        self._crash(point, batch_id)
        self._fail(point, batch_id)
        self._lose_jvm(point, batch_id)
        self._lose_host(point, batch_id)

    def _crash(self, point: str, batch_id: int) -> None:
        """SIGKILL the driver's and this process group if `point` is armed for `batch_id`."""
        if batch_id not in armed_batches(point, self.spec):
            return
        if self.marker:
            Path(self.marker).write_text(f"{point}@{batch_id}\n")
        if self.driver_group is not None:
            os.killpg(self.driver_group, signal.SIGKILL)
        os.killpg(os.getpgrp(), signal.SIGKILL)

    def _fail(self, point: str, batch_id: int) -> None:
        """Raise `InjectedFault` if `fail_<point>` is armed for `batch_id` and has not fired."""
        name = FAIL_PREFIX + point
        if batch_id in armed_batches(name, self.spec) and claim_marker(
            self.marker, f"{name}@{batch_id}\n"
        ):
            raise InjectedFault(f"injected fault {name}@{batch_id} (EOSCONNECT_FAULT)")

    def _lose_host(self, point: str, batch_id: int) -> None:
        """SIGKILL this process alone if `lose_host_<point>` is armed for `batch_id` and has
        not fired yet."""
        name = LOSE_HOST_PREFIX + point
        if batch_id in armed_batches(name, self.spec) and claim_marker(
            self.marker, f"{name}@{batch_id}\n"
        ):
            kill_jvm_hosts()
            os.kill(os.getpid(), signal.SIGKILL)

    def _lose_jvm(self, point: str, batch_id: int) -> None:
        """SIGKILL this process's JVM task hosts alone if `lose_jvm_<point>` is armed for
        `batch_id`, this process has one, and the point has not fired yet."""
        name = LOSE_JVM_PREFIX + point
        if batch_id not in armed_batches(name, self.spec):
            return
        from spark_eos_connect.jvm_tasks.client import running_hosts

        if any(host.alive() for host in running_hosts()) and claim_marker(
            self.marker, f"{name}@{batch_id}\n"
        ):
            kill_jvm_hosts()


def kill_jvm_hosts() -> list[int]:
    """SIGKILL every live JVM task host this process spawned and wait until each is gone (not
    reaped: its owner finds it dead at its next request). Returns their pids."""
    from spark_eos_connect.jvm_tasks.client import running_hosts

    killed = []
    for host in running_hosts():
        if host.alive():
            with contextlib.suppress(ProcessLookupError):
                os.kill(host.pid, signal.SIGKILL)
            killed.append(host.pid)
    for pid in killed:
        wait_until_dead(pid)
    return killed


def wait_until_dead(pid: int, timeout_s: float = 10.0) -> None:
    """Wait until the child `pid` has exited (a zombie counts), without reaping it."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return
        if state in ("Z", "X"):
            return
        time.sleep(0.01)
    raise TimeoutError(f"process {pid} still runs {timeout_s:g} s after SIGKILL")


def job_environment(spec: str | None, marker: str | None = None) -> dict[str, str]:
    """The variables that arm `spec` (`point@batch,...`) in a job started with them: the faults,
    their marker file and the commit hooks class the job's driver installs. Empty without a
    spec."""
    if not spec:
        return {}
    env = {FAULT_ENV: spec, commit_hooks.HOOKS_ENV: class_path(EnvironmentFaults)}
    if marker:
        env[MARKER_ENV] = marker
    return env
