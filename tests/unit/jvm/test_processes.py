"""`terminate`: SIGTERM first, SIGKILL for a process that ignores it."""

from __future__ import annotations

import signal
import subprocess
import sys

from spark_eos_connect.jvm.processes import terminate

IGNORES_SIGTERM = (
    "import signal, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
    "print('ready', flush=True); time.sleep(60)"
)


def started(code: str) -> subprocess.Popen[str]:
    process = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None and process.stdout.readline() == "ready\n"
    return process


def test_a_process_that_stops_on_sigterm_exits_by_it() -> None:
    process = started("import time; print('ready', flush=True); time.sleep(60)")

    assert terminate(process, timeout_s=30) == -signal.SIGTERM


def test_a_process_ignoring_sigterm_is_killed_after_the_timeout() -> None:
    process = started(IGNORES_SIGTERM)

    assert terminate(process, timeout_s=0.5) == -signal.SIGKILL


def test_an_exited_process_keeps_its_exit_code() -> None:
    process = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
    process.wait()

    assert terminate(process, timeout_s=1) == 3
