"""Draining a source query before a clean stop: no new micro-batch starts once the job's drain
file exists, so the job can stop between batches without interrupting a transaction.

The job names the file in `EOSCONNECT_DRAIN_FILE` before Spark starts (the driver-side reader
process inherits the environment) and creates it when it is asked to stop.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

DRAIN_ENV = "EOSCONNECT_DRAIN_FILE"


def arm_drain_file() -> Path:
    """Driver, before Spark starts: choose this job's drain file."""
    path = Path(tempfile.mkdtemp(prefix="eosconnect-drain-")) / "drain"
    os.environ[DRAIN_ENV] = str(path)
    return path


def request_drain() -> None:
    """Driver: ask the source to start no new micro-batch."""
    configured = os.environ.get(DRAIN_ENV)
    if configured:
        Path(configured).touch()


def draining() -> bool:
    """Source reader: whether the job asked for no new micro-batches."""
    configured = os.environ.get(DRAIN_ENV)
    return bool(configured) and Path(str(configured)).exists()
