"""Whether another driver still runs a connector: the status topic as a liveness record.

A driver running a connector (source or sink) re-writes the connector's status record every
`HEARTBEAT_S` (same value: Connect's `{"state","trace","worker_id","generation"}`; the Kafka
record timestamp carries its age). A driver starting the connector finds the current owner in
that record: a RUNNING or PAUSED status written by another `worker_id` (`host:pid`).

- The owner is alive while its heartbeats keep coming: a second start is refused (unless
  `takeover=true`), since it would fence a running query.
- The owner is gone once its last status is `LIVENESS_S` old (three heartbeats missed), or at
  once when it ran on this host and its process no longer exists; the new driver waits for
  that rather than failing, then takes over and says so.

Drivers use this through `connector_owner`, which `claim`s the connector when a query starts and
runs a `Heartbeat` while it runs; the herder shows statuses through `as_seen_now`. No I/O here:
the owner reads the status topic and passes `claim` a function that does.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Final

from spark_eos_connect.errors import EosConnectError
from spark_eos_connect.protocol.status_records import StatusRecord, StatusState

HEARTBEAT_S = 5.0
"""How often a running driver re-writes its connector's status."""
LIVENESS_S = 15.0
"""How old an owner's last status may be before it counts as gone (three heartbeats)."""
OWNING_STATES = (StatusState.RUNNING, StatusState.PAUSED)
HERDER_WORKER_SUFFIX: Final = ":eosconnect-herder"
"""The end of a herder's default worker id: the statuses a herder (REST API, CLI) writes for a
connector no query runs (PAUSED among them) are no driver's claim."""

log = logging.getLogger(__name__)


class ConnectorInUseError(EosConnectError, RuntimeError):
    """Another driver, alive, runs the connector: starting it here would fence that query."""


@dataclass(frozen=True)
class Owner:
    """Another driver's claim on a connector, as its latest status record shows it."""

    worker_id: str
    state: StatusState
    written_at_ms: int | None
    """The status record's Kafka timestamp; None when unknown (counted as fresh)."""

    def age_s(self, now_ms: int) -> float:
        """Seconds since the record was written (0 when unknown)."""
        return 0.0 if self.written_at_ms is None else max(0.0, (now_ms - self.written_at_ms) / 1000)

    def lapsed(self, now_ms: int) -> bool:
        """Whether its last heartbeat is `LIVENESS_S` old."""
        return self.age_s(now_ms) >= LIVENESS_S


def other_owner(status: StatusRecord | None, written_at_ms: int | None, me: str) -> Owner | None:
    """The driver other than `me` that holds the connector (RUNNING or PAUSED), or None; a
    herder's status is no driver's."""
    if status is None or status.state not in OWNING_STATES or status.worker_id == me:
        return None
    if status.worker_id.endswith(HERDER_WORKER_SUFFIX):
        return None
    return Owner(status.worker_id, status.state, written_at_ms)


def process_gone(worker_id: str, my_host: str, alive: Callable[[int], bool]) -> bool:
    """Whether `worker_id` (`host:pid`) ran on this host and its process no longer exists."""
    host, _, pid = worker_id.rpartition(":")
    return host == my_host and pid.isdigit() and not alive(int(pid))


def still_there(owner: Owner, latest: Owner | None) -> bool:
    """Whether `latest` (the status read again) is a newer heartbeat of the same owner."""
    return (
        latest is not None
        and latest.worker_id == owner.worker_id
        and latest.written_at_ms is not None
        and (owner.written_at_ms is None or latest.written_at_ms > owner.written_at_ms)
    )


def in_use_error(name: str, owner: Owner, now_ms: int) -> ConnectorInUseError:
    """The refusal naming the driver that runs connector `name`."""
    return ConnectorInUseError(
        f"connector {name} is {owner.state.value} on another driver, "
        f"{owner.worker_id}, which is alive (status written {owner.age_s(now_ms):.0f} s "
        "ago): starting it here would fence that query. Stop that query, use another "
        "name, or set option takeover=true to take the connector over"
    )


def claim(
    name: str,
    takeover: bool,
    read_owner: Callable[[], Owner | None],
    now_ms: Callable[[], int] = lambda: int(time.time() * 1000),
    sleep: Callable[[float], None] = time.sleep,
    alive: Callable[[int], bool] | None = None,
) -> None:
    """Make sure no other driver that is alive runs connector `name`.

    `read_owner` reads the status topic again and returns `other_owner`'s answer. Refuses with
    `ConnectorInUseError` while the owner is alive, unless `takeover`; waits for a silent
    owner's liveness to lapse (at most `LIVENESS_S` after its last heartbeat), or not at all
    when it ran on this host and its process is gone; says when it took over.
    """
    owner = read_owner()
    if owner is None:
        return
    if takeover:
        log.warning(
            "connector %s: taking it over from driver %s, which runs it (takeover=true); "
            "that driver's query is fenced and stops",
            name,
            owner.worker_id,
        )
        return
    if process_gone(owner.worker_id, socket.gethostname(), alive or pid_alive):
        log.warning(
            "connector %s: took over from driver %s, whose process is gone",
            name,
            owner.worker_id,
        )
        return
    if owner.written_at_ms is None:
        raise in_use_error(name, owner, now_ms())
    log.warning(
        "connector %s: driver %s ran it %.0f s ago; waiting up to %.0f s for a sign of "
        "life before taking it over",
        name,
        owner.worker_id,
        owner.age_s(now_ms()),
        LIVENESS_S - owner.age_s(now_ms()),
    )
    while not owner.lapsed(now_ms()):
        sleep(0.5)
        latest = read_owner()
        if latest is None:
            return  # it left, reporting it
        if still_there(owner, latest):
            raise in_use_error(name, latest, now_ms())
        owner = latest if latest.worker_id != owner.worker_id else owner
    log.warning(
        "connector %s: took over from driver %s, silent for %.0f s (liveness bound %g s)",
        name,
        owner.worker_id,
        owner.age_s(now_ms()),
        LIVENESS_S,
    )


def stale_note(record: StatusRecord, written_at_ms: int | None, now_ms: int) -> str | None:
    """Why a RUNNING or PAUSED connector status no longer holds: its driver stopped re-writing
    it `LIVENESS_S` ago; None while it holds (or its age is unknown)."""
    if record.state not in OWNING_STATES or written_at_ms is None:
        return None
    owner = Owner(record.worker_id, record.state, written_at_ms)
    if not owner.lapsed(now_ms):
        return None
    return (
        f"No heartbeat from driver {record.worker_id} for {owner.age_s(now_ms):.0f} s (a driver "
        f"re-writes its {record.state.value} status every {HEARTBEAT_S:g} s; liveness bound "
        f"{LIVENESS_S:g} s): its query is not running. Its last status was {record.state.value}."
    )


def as_seen_now(
    connector: StatusRecord | None,
    written_at_ms: int | None,
    tasks: Mapping[int, StatusRecord],
    now_ms: int,
) -> tuple[StatusRecord | None, dict[int, StatusRecord]]:
    """The connector's and its tasks' statuses as status views show them: when the driver
    that ran the connector stopped heartbeating (`stale_note`), the connector and its RUNNING
    or PAUSED tasks are UNASSIGNED, the last driver kept as `worker_id` and the note as
    `trace`, as Connect shows work no live worker runs."""
    note = None if connector is None else stale_note(connector, written_at_ms, now_ms)
    if connector is None or note is None:
        return connector, dict(tasks)

    def unassigned(record: StatusRecord) -> StatusRecord:
        if record.state not in OWNING_STATES:
            return record
        return StatusRecord(StatusState.UNASSIGNED, record.worker_id, record.generation, note)

    return unassigned(connector), {task: unassigned(r) for task, r in tasks.items()}


def pid_alive(pid: int) -> bool:
    """Whether a process `pid` exists on this host."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class Heartbeat:
    """Calls `beat` every `every_s` seconds on a daemon thread until `stop`; a failing beat is
    logged and the next one tried."""

    def __init__(self, beat: Callable[[], None], every_s: float = HEARTBEAT_S) -> None:
        self._beat = beat
        self._every_s = every_s
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name="eosconnect-heartbeat", daemon=True)

    def start(self) -> Heartbeat:
        """Start beating."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """No beat after this returns."""
        self._stopped.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout=30)

    def _run(self) -> None:
        while not self._stopped.wait(self._every_s):
            try:
                self._beat()
            except Exception as error:  # the next beat may succeed; the query goes on
                log.warning("status heartbeat failed: %s", error)
