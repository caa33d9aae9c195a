"""Child processes the project starts (the broker, a Kafka Connect worker): ending them."""

from __future__ import annotations

import signal
import subprocess


def terminate(process: subprocess.Popen[str] | subprocess.Popen[bytes], timeout_s: float) -> int:
    """SIGTERM `process` and wait for its exit; SIGKILL it if it outlives `timeout_s`.

    Returns its exit code (negative: the signal that ended it).
    """
    if process.poll() is not None:
        return process.returncode
    process.send_signal(signal.SIGTERM)
    try:
        return process.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        process.kill()
        return process.wait()
