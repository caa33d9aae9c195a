"""Spare task hosts: started hosts an executor keeps ready for the next task that needs one.

A host started for a task's first micro-batch is a new interpreter that imports the runtime,
the service's modules and, on its first Arrow array, pandas (pyarrow imports it lazily): a
fresh sink host spent 1.7 s of CPU on imports in its first request, more than on the records
of that micro-batch (cProfile of the hosts in `jobs/bench.py --only sink`, 2 tasks).

A spare is such a host with those imports done, listening on a socket of its own beside the
tasks' sockets, `spare-<watch pid>-<k>.sock` (the watch pid names the executor's Python
daemon, so each executor has its own spares). A worker that finds no host for its task claims
a spare by renaming the spare's socket to the task's: `os.rename` is atomic, so one claimer
wins each spare, and the first request tells the host the name it now serves (`TaskHost`).
A slot whose spare is still starting has a `.starting` marker; a claimer waits for it rather
than start another interpreter beside it.

Spares are started by a host that has been idle for `TOP_UP_AFTER_IDLE_S` while no other host
of its executor serves a request (each marks itself busy while it does, `busy`), so never
while micro-batches run or follow each other: a start takes a core for most of a second. At
most `spare_count()` per executor. An unclaimed spare exits after `SPARE_IDLE_S` or when its
executor is gone; it retires by renaming its socket away first, so a claim and a retirement
cannot both take it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from spark_eos_connect.runtime.lifecycle.liveness import pid_alive

log = logging.getLogger(__name__)

SPARE_HOSTS = 2
"""Spares kept per executor by default: as many as tasks that commonly start together on a
small one. `EOSCONNECT_SPARE_HOSTS` in the executors' environment (`spark.executorEnv.`) sets
another number; 0 keeps none."""

SPARES_ENV = "EOSCONNECT_SPARE_HOSTS"

SPARE_IDLE_S = 600.0
"""An unclaimed spare exits after this long."""

TOP_UP_AFTER_IDLE_S = 0.5
"""A host idle this long (no micro-batch of its task running) starts the missing spares."""

STARTING_STALE_S = 60.0
"""A `.starting` marker older than this belongs to a spare that never came up."""

Connect = Callable[[Path], "socket.socket | None"]
Spawn = Callable[[Path], None]


def spare_count() -> int:
    """How many spares an executor keeps (`SPARES_ENV`, else `SPARE_HOSTS`)."""
    value = os.environ.get(SPARES_ENV, "").strip()
    return int(value) if value.isdigit() else SPARE_HOSTS


def spare_paths(folder: Path, watch_pid: int) -> list[Path]:
    """The sockets of the executor's spare slots (its Python daemon is `watch_pid`)."""
    return [folder / f"spare-{watch_pid}-{slot}.sock" for slot in range(spare_count())]


def starting_marker(spare: Path) -> Path:
    """The file that says `spare`'s host is starting."""
    return spare.with_suffix(".starting")


def is_starting(spare: Path) -> bool:
    """Whether `spare`'s host is starting (its marker exists and is not stale)."""
    try:
        age = time.time() - starting_marker(spare).stat().st_mtime
    except FileNotFoundError:
        return False
    return age < STARTING_STALE_S


def claim_spare(
    path: Path, watch_pid: int, connect: Connect, wait_s: float
) -> socket.socket | None:
    """A connection to a spare that now serves `path` (its socket renamed to it), waiting up to
    `wait_s` for a spare still starting; None when there is none. Hold `path`'s lock."""
    deadline = time.monotonic() + wait_s
    while True:
        starting = False
        for spare in spare_paths(path.parent, watch_pid):
            try:
                os.rename(spare, path)
            except FileNotFoundError:
                starting = starting or is_starting(spare)
                continue
            sock = connect(path)
            if sock is not None:
                return sock
            path.unlink(missing_ok=True)  # a spare that died: nobody listens
        if not starting or time.monotonic() > deadline:
            return None
        time.sleep(0.02)


def ready_spares(folder: Path) -> int:
    """How many spares of live executors are up and unclaimed in `folder` (starting ones not
    counted)."""
    ready = 0
    for spare in folder.glob("spare-*-*.sock"):
        pid = spare.name.split("-", 2)[1]
        if pid.isdigit() and pid_alive(int(pid)) and not is_starting(spare):
            ready += 1
    return ready


def sweep_gone_executors(folder: Path) -> None:
    """Remove the spare files of executors that are gone (killed spares leave their sockets)."""
    for stale in [*folder.glob("spare-*-*.*"), *folder.glob("busy-*-*")]:
        _, pid, _ = stale.name.split("-", 2)
        if pid.isdigit() and not pid_alive(int(pid)):
            stale.unlink(missing_ok=True)


@contextlib.contextmanager
def busy(folder: Path, watch_pid: int) -> Iterator[None]:
    """Mark this host as serving a request (`executor_busy` sees it) while in the block."""
    marker = folder / f"busy-{watch_pid}-{os.getpid()}"
    marker.touch()
    try:
        yield
    finally:
        marker.unlink(missing_ok=True)


def executor_busy(folder: Path, watch_pid: int) -> bool:
    """Whether a host of the executor serves a request (the markers of killed hosts, which
    could not remove theirs, are removed)."""
    serving = False
    for marker in folder.glob(f"busy-{watch_pid}-*"):
        pid = marker.name.rsplit("-", 1)[1]
        if pid.isdigit() and pid_alive(int(pid)):
            serving = True
        else:
            marker.unlink(missing_ok=True)
    return serving


def top_up_spares(folder: Path, watch_pid: int, spawn: Spawn) -> list[Path]:
    """Start a spare in each free slot (nothing listening, nothing starting); the slots
    started. Gone executors' spare files are swept first."""
    sweep_gone_executors(folder)
    started = []
    for spare in spare_paths(folder, watch_pid):
        if spare.exists() or is_starting(spare):
            continue
        marker = starting_marker(spare)
        marker.unlink(missing_ok=True)  # stale, if any
        try:
            os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
        except FileExistsError:  # another host took the slot just now
            continue
        try:
            spawn(spare)
        except Exception as error:  # a spare is an optimisation: the next task starts a host
            marker.unlink(missing_ok=True)
            log.warning("starting a spare task host failed: %s", error)
            continue
        started.append(spare)
    return started


def spare_ready(spare: Path) -> None:
    """Called by a spare once it listens: its slot is no longer starting."""
    starting_marker(spare).unlink(missing_ok=True)


def retire(spare: Path) -> bool:
    """Take an idle spare's socket away from claimers; False when a claimer renamed it first
    (the spare then serves the task that claimed it)."""
    retired = spare.with_suffix(".retired")
    try:
        os.rename(spare, retired)
    except FileNotFoundError:
        return False
    with contextlib.suppress(FileNotFoundError):
        retired.unlink()
    return True
