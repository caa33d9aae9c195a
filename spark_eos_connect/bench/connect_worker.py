"""Mode 2, the peer: a Kafka Connect 4.3.1 distributed worker with
`exactly.once.source.support=enabled` (`spark_eos_connect.connect_worker`) running
FileStreamSourceConnector on the bench's file, timed from `PUT /connectors/NAME/config` until
every line is visible read_committed."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from spark_eos_connect.bench.config import CONNECT
from spark_eos_connect.bench.kafka_io import VisibilityWatch
from spark_eos_connect.bench.results import ModeResult
from spark_eos_connect.connect_worker import (
    FILE_SOURCE,
    ConnectRestError,
    ConnectWorker,
    worker_properties,
)

__all__ = ["ConnectWorker", "file_connector_config", "run_connect", "worker_properties"]

RUN_TIMEOUT_S = 900.0


def file_connector_config(path: Path, topic: str, batch_size: int) -> dict[str, str]:
    """FileStreamSourceConnector on `path`, one transaction per poll (Connect's default)."""
    return {
        "connector.class": FILE_SOURCE,
        "tasks.max": "1",
        "file": str(path),
        "topic": topic,
        "batch.size": str(batch_size),
        "exactly.once.support": "required",
    }


def run_connect(
    kafka: Mapping[str, Any],
    work: str,
    path: Path,
    topic: str,
    lines: int,
    batch_size: int,
    name: str,
    work_dir: Path,
    log: Any = print,
) -> ModeResult:
    """Start a worker, create the connector, time it until every line is visible."""
    with ConnectWorker(kafka["bootstrap.servers"], name, work_dir) as worker:
        log(f"  Connect worker {worker.url} up (log {worker.log_path})")
        with VisibilityWatch(kafka, topic, 1, lines) as watch:
            started = time.monotonic()
            worker.put_connector(name, file_connector_config(path, topic, batch_size))
            reached = watch.wait(RUN_TIMEOUT_S, lambda: worker.raise_if_failed(name))
        with contextlib.suppress(OSError, ValueError, ConnectRestError):
            worker.request("DELETE", f"/connectors/{name}")
    return ModeResult(
        work,
        CONNECT,
        lines,
        reached - started,
        (),
        "from PUT /connectors/NAME/config until every line is visible read_committed",
    )
