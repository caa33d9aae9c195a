"""The resident memory of the JVM task hosts while a mode runs (Linux `/proc`)."""

from __future__ import annotations

import threading
from pathlib import Path
from types import TracebackType

from spark_eos_connect.jvm_tasks.classpath import MAIN_CLASS

SAMPLE_EVERY_S = 0.25


def resident_kib(status: str) -> int | None:
    """`VmRSS` in KiB from the text of a `/proc/<pid>/status` file (None when absent)."""
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return None


def task_host_pids(proc: Path = Path("/proc")) -> list[int]:
    """The processes whose command line runs the JVM task host's main class."""
    found = []
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:  # ended since the listing, or not ours to read
            continue
        if MAIN_CLASS.encode() in command:
            found.append(int(entry.name))
    return found


class PeakHostMemory:
    """Samples the task hosts' RSS in a thread while the `with` block runs; `peak_mib` is
    the largest one seen (0 when no host ran)."""

    def __init__(self, proc: Path = Path("/proc")) -> None:
        self._proc = proc
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, name="host-memory", daemon=True)
        self.peak_mib = 0.0

    def _sample(self) -> None:
        while not self._stop.wait(SAMPLE_EVERY_S):
            for pid in task_host_pids(self._proc):
                try:
                    kib = resident_kib((self._proc / str(pid) / "status").read_text())
                except OSError:
                    continue
                if kib is not None:
                    self.peak_mib = max(self.peak_mib, kib / 1024)

    def __enter__(self) -> PeakHostMemory:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._thread.join()
