"""A stream reader's `stop` runs to its end in the Python process Spark plans it in.

Spark's driver runs a Python data source's stream reader in a Python process of its own. When
the query stops, the JVM sends that process SIGTERM (twice, measured with Spark 4.2), and when
the Python program that started the query exits, the JVM goes away with the process's socket.
pyspark calls the reader's `stop()` in a `finally` once its wait for the JVM ends; Python's
default SIGTERM action kills the process before or during that `stop()`, which then neither
writes the connector's UNASSIGNED status nor aborts the tasks' open transactions.

The SIGTERM may also come after `stop()` began: when the process sees its socket to the JVM
close before the signal arrives (nothing orders the two; a busy machine can delay either),
pyspark is already inside `stop()` when the signal lands. So a reader's `stop()` first calls
`stop_has_begun`, and from then on SIGTERM is ignored.
"""

from __future__ import annotations

import signal
import threading
from types import FrameType

_installed = False


def _leave(signum: int, frame: FrameType | None) -> None:
    """The first SIGTERM ends the process's wait for the JVM (pyspark then calls the reader's
    `stop()`); later ones are ignored until `stop()` is done and the process exits."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise SystemExit(128 + signum)


def stop_has_begun() -> None:
    """The reader's `stop()` runs: SIGTERM no longer interrupts this process (where
    `finish_stop_on_sigterm` was installed; elsewhere nothing changes)."""
    if _installed and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, signal.SIG_IGN)


def finish_stop_on_sigterm() -> None:
    """Install `_leave` for SIGTERM in this process (once; main thread only)."""
    global _installed
    if _installed or threading.current_thread() is not threading.main_thread():
        return
    signal.signal(signal.SIGTERM, _leave)
    _installed = True
