"""The driver that owns a connector: its claim, heartbeat and status in the status topic.

A query's driver owns its connector as a Connect worker owns a connector assigned to it, for a
source query (`source.coordinator`) and a sink query (`sink.lifecycle`) alike:

- **claim**, when the query starts (`liveness.claim`): refused while another live driver runs
  the connector, unless `takeover=true`; a silent one is taken over once its liveness lapses.
  The claim clears the task statuses an earlier run left (a failure shown is this run's) and
  takes an epoch above the previous owner's generation.
- **status**: the connector's status follows its target state (`RUNNING_STATES`), FAILED with
  a trace when the connector failed; written once per change, best effort (a failed write is
  logged and tried again at the next change).
- **heartbeat**: the RUNNING or PAUSED status re-written every `HEARTBEAT_S`. The status
  generation is the config topic's, but never below the claim's epoch, so a driver that took
  this one over writes a higher one than this one beats with: a beat that finds such a status
  of another driver stops beating, and `taken_over_by` names that driver (the query stops at
  its next look).
- **leaving**, when the query ends: the connector UNASSIGNED, or FAILED when it or a task
  failed for good (`leaving`), its tasks UNASSIGNED but for the failed ones, as when a Connect
  worker leaves. Nothing once taken over; a STOPPED connector stays STOPPED.

Over the status store port; the driver reads the config topic and says what it found.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from spark_eos_connect.errors import EosConnectError
from spark_eos_connect.ports import StatusStore
from spark_eos_connect.protocol.config_records import ClusterConfigSnapshot, TargetState
from spark_eos_connect.protocol.status_records import StatusSnapshot, StatusState
from spark_eos_connect.runtime.lifecycle import liveness
from spark_eos_connect.runtime.lifecycle.leadership import worker_id
from spark_eos_connect.runtime.lifecycle.leaving import leaving_state
from spark_eos_connect.runtime.lifecycle.liveness import (
    HEARTBEAT_S,
    OWNING_STATES,
    Heartbeat,
    Owner,
    other_owner,
)
from spark_eos_connect.runtime.lifecycle.liveness import (
    ConnectorInUseError as ConnectorInUseError,  # raised by `claim`; importable from here
)

log = logging.getLogger(__name__)

STATE_CHECK_INTERVAL_S = 0.5
"""How often a running query re-reads its connector's target state from the config topic."""
RUNNING_STATES = {
    TargetState.STARTED: StatusState.RUNNING,
    TargetState.PAUSED: StatusState.PAUSED,
    TargetState.STOPPED: StatusState.STOPPED,
}
"""The status a connector and its tasks report in each target state (while not failed)."""


def target_state(snapshot: ClusterConfigSnapshot, name: str) -> TargetState:
    """Connector `name`'s target state in the config topic (no record: STARTED)."""
    return snapshot.target_state(name) or TargetState.STARTED


class ConnectorOwner:
    """Driver: this driver's ownership of connector `name`, kept in the status topic.

    `me` is the driver's worker id (default `leadership.worker_id()`). Thread-safe: `beat` runs
    on the heartbeat's thread, the rest on the driver's.
    """

    def __init__(
        self, name: str, statuses: StatusStore, takeover: bool = False, me: str | None = None
    ) -> None:
        self.name = name
        self.statuses = statuses
        self.takeover = takeover
        """Take the connector over from a live driver (option `takeover`)."""
        self.me = worker_id() if me is None else me
        self.epoch = 0
        """Above the generation of the previous owner's status (set by `claim`)."""
        self.config_generation = 0
        """The connector's generation in the config topic, as the driver last read it."""
        self.reported: tuple[StatusState, str | None, int] | None = None
        """The (state, trace, generation) last written for the connector."""
        self.taken_over_by: str | None = None
        """The driver that took the connector over while this one ran it."""
        self._leaving = False
        self._heartbeat: Heartbeat | None = None
        self._lock = threading.Lock()

    @property
    def generation(self) -> int:
        """The generation of this driver's status records."""
        return max(self.config_generation, self.epoch)

    @property
    def owns(self) -> bool:
        """Whether this driver reported the connector RUNNING, PAUSED or FAILED and was not
        taken over (STOPPED: the connector is nobody's)."""
        reported = self.reported
        return (
            reported is not None
            and reported[0] is not StatusState.STOPPED
            and self.taken_over_by is None
        )

    def claim(
        self,
        now_ms: Callable[[], int] = lambda: int(time.time() * 1000),
        sleep: Callable[[float], None] = time.sleep,
        alive: Callable[[int], bool] | None = None,
    ) -> None:
        """Make sure no other live driver runs the connector (`liveness.claim`, whose clock
        `now_ms`, `sleep` and `alive` tests replace), then clear the task statuses an earlier
        run left and take an epoch above the previous owner's generation."""
        reads: list[StatusSnapshot] = []

        def read_owner() -> Owner | None:
            reads.append(self.statuses.read_to_end())
            snapshot = reads[-1]
            written_at = snapshot.connector_written_at(self.name)
            return other_owner(snapshot.connector_status(self.name), written_at, self.me)

        liveness.claim(self.name, self.takeover, read_owner, now_ms, sleep, alive)
        snapshot = reads[-1]  # the claim's last read (it reads at least once)
        prior = snapshot.connector_status(self.name)
        self.epoch = 0 if prior is None else prior.generation + 1
        for task in list(snapshot.task_statuses(self.name)):
            self.statuses.delete_task_status(self.name, task)

    def start_heartbeat(self, every_s: float = HEARTBEAT_S) -> None:
        """Beat every `every_s` seconds on a daemon thread until `leave`."""
        self._heartbeat = Heartbeat(self.beat, every_s).start()

    def follow(
        self, target: TargetState, config_generation: int | None = None, failure: str | None = None
    ) -> None:
        """Report the status of `target` (FAILED with the trace `failure`, when given) for the
        connector's `config_generation` (default: the last one given)."""
        if config_generation is not None:
            self.config_generation = config_generation
        self.report(RUNNING_STATES[target] if failure is None else StatusState.FAILED, failure)

    def report(self, state: StatusState, trace: str | None = None) -> None:
        """Write the connector's status when it changed (failures logged, tried again at the
        next change); nothing once leaving or taken over."""
        with self._lock:
            current = (state, trace, self.generation)
            if self._leaving or self.taken_over_by is not None or current == self.reported:
                return
            try:
                self.statuses.put_connector_status(
                    self.name, state, self.me, self.generation, trace
                )
            except EosConnectError as error:
                log.warning("could not report %s as %s: %s", self.name, state.value, error)
                return
            self.reported = current

    def report_tasks(self, running: int, state: StatusState | None, slots: int) -> None:
        """The driver's tasks `0..running-1` in `state`, and no status (a tombstone) for the
        other `slots`, or for all of them when `state` is None."""
        for task in range(slots):
            if state is not None and task < running:
                self.statuses.put_task_status(self.name, task, state, self.me, self.generation)
            else:
                self.statuses.delete_task_status(self.name, task)

    def beat(self) -> None:
        """Re-write the RUNNING or PAUSED status: this driver is alive; unless another driver
        took the connector over (`taken_over_by` then names it, and the beats end)."""
        if not self._beating():
            return
        snapshot = self.statuses.read_to_end()
        with self._lock:
            if not self._beating() or self._notice_takeover(snapshot):
                return
            assert self.reported is not None
            state, trace, _ = self.reported
            self.statuses.put_connector_status(self.name, state, self.me, self.generation, trace)

    def _beating(self) -> bool:
        """Whether a beat is due: RUNNING or PAUSED reported, neither leaving nor taken over."""
        reported = self.reported
        return (
            not self._leaving
            and self.taken_over_by is None
            and reported is not None
            and reported[0] in OWNING_STATES
        )

    def _notice_takeover(self, snapshot: StatusSnapshot) -> bool:
        """Whether the latest connector status is another driver's RUNNING or PAUSED one of a
        higher generation: it took the connector over (then `taken_over_by` names it)."""
        latest = snapshot.connector_status(self.name)
        if latest is None or other_owner(latest, None, self.me) is None:
            return False
        if latest.generation <= self.generation:
            return False  # a late beat of an earlier owner
        self.taken_over_by = latest.worker_id
        log.warning("connector %s: driver %s took it over; stopping", self.name, latest.worker_id)
        return True

    def stop_heartbeat(self) -> None:
        """No beat after this returns."""
        with self._lock:
            self._leaving = True
        if self._heartbeat is not None:
            self._heartbeat.stop()

    def leave(
        self, failure: str | None = None, ran: int = 0, of_this_generation: bool = False
    ) -> None:
        """The query ends: stop beating and, while this driver owns the connector, report it
        UNASSIGNED, or FAILED with `failure` (the connector's trace) or `leaving_state`'s (a
        task failed for good: counted only in this driver's generation when
        `of_this_generation`), and report its tasks UNASSIGNED (the `ran` first ones and any
        other RUNNING or PAUSED one) but for the failed ones, which keep their status."""
        self.stop_heartbeat()
        if not self.owns:
            return
        snapshot = self._read_statuses()
        if snapshot is not None and self._notice_takeover(snapshot):
            return
        tasks = {} if snapshot is None else snapshot.task_statuses(self.name)
        state, trace, failed = leaving_state(
            self.name, tasks, self.generation if of_this_generation else None
        )
        if failure is not None:
            state, trace = StatusState.FAILED, failure
        generation = self.generation
        self.statuses.put_connector_status(self.name, state, self.me, generation, trace)
        owned = {task for task, record in tasks.items() if record.state in OWNING_STATES}
        for task in sorted((set(range(ran)) | owned) - set(failed)):
            self.statuses.put_task_status(
                self.name, task, StatusState.UNASSIGNED, self.me, generation
            )

    def _read_statuses(self) -> StatusSnapshot | None:
        """The status topic (None when it cannot be read)."""
        try:
            return self.statuses.read_to_end()
        except EosConnectError as error:
            log.warning("connector %s: could not read its statuses: %s", self.name, error)
            return None
