"""Whether another driver still runs a connector: the status topic as a liveness record.

A driver leading a source connector re-writes the connector's status record every
`HEARTBEAT_S` (same value: Connect's `{"state","trace","worker_id","generation"}`; the Kafka
record timestamp carries its age). A driver starting the connector finds the current owner in
that record: a RUNNING or PAUSED status written by another `worker_id` (`host:pid`).

- The owner is alive while its heartbeats keep coming: a second start is refused (unless
  `takeover=true`), since it would fence a running query.
- The owner is gone once its last status is `LIVENESS_S` old (three heartbeats missed), or at
  once when it ran on this host and its process no longer exists; the new driver waits for
  that rather than failing, then takes over and says so.

No I/O here: the coordinator reads the status topic and asks these functions.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass

from spark_eos_connect.protocol.status_records import StatusRecord, StatusState

HEARTBEAT_S = 5.0
"""How often a running driver re-writes its connector's status."""
LIVENESS_S = 15.0
"""How old an owner's last status may be before it counts as gone (three heartbeats)."""
OWNING_STATES = (StatusState.RUNNING, StatusState.PAUSED)

log = logging.getLogger(__name__)


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
    """The driver other than `me` that holds the connector (RUNNING or PAUSED), or None."""
    if status is None or status.state not in OWNING_STATES or status.worker_id == me:
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
