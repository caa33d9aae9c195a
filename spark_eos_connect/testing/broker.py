"""A real local broker as a child process, to restart or kill under a test.

`BrokerProcess` runs `eosconnect kafka` (exactly what a user runs) and can restart it on the same
port and data folder, or kill it, to inject broker failures.
"""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import TracebackType

from spark_eos_connect.errors import SetupError
from spark_eos_connect.jvm.broker import free_port
from spark_eos_connect.jvm.processes import terminate

BOOTSTRAP_PREFIX = "bootstrap.servers="


class BrokerProcess:
    """`eosconnect kafka --port P --data-dir D` as a child process."""

    def __init__(self, data_dir: str | Path, port: int | None = None, timeout_s: float = 120.0):
        self.data_dir = Path(data_dir)
        self.port = port or free_port()
        self.timeout_s = timeout_s
        self._process: subprocess.Popen[str] | None = None

    @property
    def bootstrap_servers(self) -> str:
        """Where clients reach the broker."""
        return f"127.0.0.1:{self.port}"

    def start(self) -> BrokerProcess:
        """Start the broker and wait for its `bootstrap.servers=` line."""
        command = [
            sys.executable,
            "-m",
            "spark_eos_connect.apps.cli",
            "kafka",
            "--port",
            str(self.port),
            "--data-dir",
            str(self.data_dir),
        ]
        process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=os.environ
        )
        self._process = process
        lines: queue.Queue[str] = queue.Queue()

        def pump() -> None:
            assert process.stdout is not None
            for line in process.stdout:
                lines.put(line)

        threading.Thread(target=pump, daemon=True).start()
        deadline = time.monotonic() + self.timeout_s
        while time.monotonic() < deadline:
            try:
                line = lines.get(timeout=0.5)
            except queue.Empty:
                if process.poll() is not None:
                    break
                continue
            if line.startswith(BOOTSTRAP_PREFIX):
                announced = line[len(BOOTSTRAP_PREFIX) :].strip()
                if announced != self.bootstrap_servers:
                    raise SetupError(f"broker announced {announced}, expected {self}")
                return self
        stderr = process.stderr.read() if process.poll() is not None and process.stderr else ""
        self.kill()
        raise SetupError(f"`eosconnect kafka` did not announce itself in time: {stderr[-3000:]}")

    def stop(self, timeout_s: float = 60.0) -> int | None:
        """SIGTERM the broker and wait for a clean exit; returns the exit code."""
        process, self._process = self._process, None
        return None if process is None else terminate(process, timeout_s)

    def kill(self) -> None:
        """SIGKILL the command and its broker JVM, as a machine crash would."""
        process, self._process = self._process, None
        if process is None:
            return
        _kill_children(process.pid)
        process.kill()
        process.wait()

    def restart(self) -> BrokerProcess:
        """Stop cleanly and start again on the same port and data folder."""
        self.stop()
        return self.start()

    def __enter__(self) -> BrokerProcess:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def _kill_children(pid: int) -> None:
    children = Path(f"/proc/{pid}/task/{pid}/children")
    try:
        child_pids = [int(p) for p in children.read_text().split()]
    except OSError:
        return
    for child in child_pids:
        _kill_children(child)
        with contextlib.suppress(OSError):
            os.kill(child, signal.SIGKILL)
