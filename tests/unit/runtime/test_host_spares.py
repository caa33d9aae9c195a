"""Spare task hosts (`runtime.host_spares`): a claim takes a listening spare once, waits for
one still starting, drops a dead one; a top-up fills free slots only; a retiring spare loses
to a claim."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from spark_eos_connect.runtime import host_spares
from spark_eos_connect.runtime.host_spares import (
    busy,
    claim_spare,
    executor_busy,
    is_starting,
    retire,
    spare_paths,
    starting_marker,
    top_up_spares,
)
from spark_eos_connect.runtime.task_host import _connect

WATCH = os.getpid()
"""The executor the spares belong to (alive: a top-up sweeps the files of gone ones)."""


@pytest.fixture(autouse=True)
def two_slots(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(host_spares.SPARES_ENV, "2")


def listening(path: Path) -> socket.socket:
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(1)
    return listener


def test_a_claim_takes_a_listening_spare_once_and_renames_it_to_the_task(tmp_path: Path) -> None:
    spare = spare_paths(tmp_path, WATCH)[1]
    listener = listening(spare)
    task_a, task_b = tmp_path / "a.sock", tmp_path / "b.sock"

    sock = claim_spare(task_a, WATCH, _connect, wait_s=0)

    assert sock is not None and task_a.exists() and not spare.exists()
    conn, _ = listener.accept()  # the spare's listener got the claimer's connection
    sock.sendall(b"x")
    assert conn.recv(1) == b"x"
    assert claim_spare(task_b, WATCH, _connect, wait_s=0) is None
    for closing in (sock, conn, listener):
        closing.close()


def test_another_executors_spares_are_not_claimed(tmp_path: Path) -> None:
    listener = listening(spare_paths(tmp_path, WATCH + 1)[0])

    assert claim_spare(tmp_path / "a.sock", WATCH, _connect, wait_s=0) is None
    listener.close()


def test_a_dead_spares_socket_is_dropped(tmp_path: Path) -> None:
    spare = spare_paths(tmp_path, WATCH)[0]
    listening(spare).close()  # the file stays, nobody listens
    task = tmp_path / "a.sock"

    assert claim_spare(task, WATCH, _connect, wait_s=0) is None
    assert not spare.exists() and not task.exists()


def test_a_claim_waits_for_a_spare_that_is_starting(tmp_path: Path) -> None:
    spare = spare_paths(tmp_path, WATCH)[0]
    starting_marker(spare).touch()
    listeners: list[socket.socket] = []
    starter = threading.Timer(0.3, lambda: listeners.append(listening(spare)))
    starter.start()

    sock = claim_spare(tmp_path / "a.sock", WATCH, _connect, wait_s=10)

    starter.join()
    assert sock is not None
    sock.close()
    listeners[0].close()


def test_a_claim_does_not_wait_past_its_bound(tmp_path: Path) -> None:
    starting_marker(spare_paths(tmp_path, WATCH)[0]).touch()
    began = time.monotonic()

    assert claim_spare(tmp_path / "a.sock", WATCH, _connect, wait_s=0.2) is None
    assert time.monotonic() - began < 5


def test_a_top_up_starts_free_slots_only_and_marks_them_starting(tmp_path: Path) -> None:
    busy, free = spare_paths(tmp_path, WATCH)
    listener = listening(busy)
    spawned: list[Path] = []

    assert top_up_spares(tmp_path, WATCH, spawned.append) == [free]
    assert spawned == [free] and is_starting(free)
    assert top_up_spares(tmp_path, WATCH, spawned.append) == []  # still starting

    old = time.time() - host_spares.STARTING_STALE_S - 1
    os.utime(starting_marker(free), (old, old))  # that spare never came up
    assert top_up_spares(tmp_path, WATCH, spawned.append) == [free]
    listener.close()


def test_a_failed_start_frees_its_slot(tmp_path: Path) -> None:
    def refuse(spare: Path) -> None:
        raise OSError("no interpreter")

    assert top_up_spares(tmp_path, WATCH, refuse) == []
    assert not any(is_starting(spare) for spare in spare_paths(tmp_path, WATCH))


def test_no_spares_when_the_environment_says_zero(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(host_spares.SPARES_ENV, "0")
    spawned: list[Path] = []

    assert spare_paths(tmp_path, WATCH) == []
    assert top_up_spares(tmp_path, WATCH, spawned.append) == [] and spawned == []


def test_a_retiring_spare_loses_to_a_claim(tmp_path: Path) -> None:
    kept, claimed = spare_paths(tmp_path, WATCH)
    first, second = listening(kept), listening(claimed)
    os.rename(claimed, tmp_path / "task.sock")

    assert retire(claimed) is False
    assert retire(kept) is True and not kept.exists()
    first.close()
    second.close()


def test_a_top_up_sweeps_the_spare_files_of_executors_that_are_gone(tmp_path: Path) -> None:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    left = [tmp_path / f"spare-{gone.pid}-0.sock", tmp_path / f"spare-{gone.pid}-0.log"]
    mine = tmp_path / f"spare-{os.getpid()}-0.log"
    for path in [*left, mine]:
        path.touch()

    top_up_spares(tmp_path, os.getpid(), lambda spare: None)

    assert not any(path.exists() for path in left) and mine.exists()


def test_the_executor_is_busy_while_a_host_serves_and_a_killed_hosts_mark_is_dropped(
    tmp_path: Path,
) -> None:
    assert not executor_busy(tmp_path, WATCH)
    with busy(tmp_path, WATCH):
        assert executor_busy(tmp_path, WATCH)
        assert not executor_busy(tmp_path, WATCH + 1)  # another executor's hosts
    assert not executor_busy(tmp_path, WATCH)

    killed = subprocess.Popen([sys.executable, "-c", "pass"])
    killed.wait()
    mark = tmp_path / f"busy-{WATCH}-{killed.pid}"
    mark.touch()
    assert not executor_busy(tmp_path, WATCH) and not mark.exists()


def test_ready_spares_counts_live_executors_spares_that_finished_starting(tmp_path: Path) -> None:
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], check=True, capture_output=True
    )
    dead = int(gone.stdout)
    up, starting = spare_paths(tmp_path, WATCH)
    up.touch()
    starting.touch()
    starting_marker(starting).touch()
    (tmp_path / f"spare-{dead}-0.sock").touch()  # its executor is gone

    assert host_spares.ready_spares(tmp_path) == 1
    starting_marker(starting).unlink()
    assert host_spares.ready_spares(tmp_path) == 2
