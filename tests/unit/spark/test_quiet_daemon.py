"""Spark's Python worker daemon, as `eosconnect-spark-python` runs it: no traceback when the JVM
has closed a worker's socket, the daemon of pyspark otherwise."""

from __future__ import annotations

import os
import selectors
import socket
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from spark_eos_connect.spark import quiet_daemon
from spark_eos_connect.testing.waiting import wait_for

SECRET = b"not-a-real-secret"


def worker_has_ended(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/status").read_text().split("State:")[1].split()[0] in "ZX"
    except (FileNotFoundError, IndexError):
        return True


def daemon_stderr_after_a_closed_socket(command: list[str]) -> str:
    """Run a daemon as Spark's JVM does, have a worker forked, and close its socket the way a
    JVM that gave up on the task does (reset, with the worker's answer unread)."""
    env = {
        **os.environ,
        "PYTHON_WORKER_FACTORY_SECRET": SECRET.decode(),
        "PYTHON_DAEMON_KILL_WORKER_ON_FLUSH_FAILURE": "1",  # what Spark sets by default
    }
    daemon = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )
    assert daemon.stdout is not None and daemon.stdin is not None and daemon.stderr is not None
    try:
        (port,) = struct.unpack(">i", daemon.stdout.read(4))
        with socket.create_connection(("127.0.0.1", port), timeout=30) as connection:
            (worker_pid,) = struct.unpack(">i", connection.recv(4))
            connection.sendall(struct.pack(">i", len(SECRET)) + SECRET)
            with selectors.DefaultSelector() as selector:  # select() refuses descriptors >= 1024
                selector.register(connection, selectors.EVENT_READ)
                selector.select(30)  # its "ok" arrived, and stays unread
            connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        wait_for(lambda: worker_has_ended(worker_pid), 30, "the forked worker to end")
    finally:
        daemon.stdin.close()  # how the JVM tells the daemon to stop
        daemon.wait(30)
    return daemon.stderr.read().decode()


def test_pysparks_own_daemon_prints_a_broken_pipe_traceback() -> None:
    stderr = daemon_stderr_after_a_closed_socket([sys.executable, "-m", "pyspark.daemon"])
    assert "BrokenPipeError" in stderr or "ConnectionResetError" in stderr


def test_the_daemon_spark_gets_ends_such_a_worker_quietly() -> None:
    command = Path(sys.executable).parent / "eosconnect-spark-python"
    if not command.exists():
        pytest.skip("eosconnect-spark-python is not installed beside this interpreter")
    stderr = daemon_stderr_after_a_closed_socket([str(command), "-m", "pyspark.daemon"])
    assert stderr == ""


def test_other_worker_errors_still_end_loudly(monkeypatch: pytest.MonkeyPatch) -> None:
    def fails(sock: socket.socket, authenticated: bool) -> int:
        raise ValueError("a real failure")

    monkeypatch.setattr(quiet_daemon, "_serve", fails)
    with pytest.raises(ValueError, match="a real failure"), socket.socket() as sock:
        quiet_daemon.worker(sock, authenticated=True)


def test_a_worker_whose_peer_has_gone_ends_with_code_1(monkeypatch: pytest.MonkeyPatch) -> None:
    def peer_gone(sock: socket.socket, authenticated: bool) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(quiet_daemon, "_serve", peer_gone)
    with socket.socket() as sock:
        assert quiet_daemon.worker(sock, authenticated=True) == 1
