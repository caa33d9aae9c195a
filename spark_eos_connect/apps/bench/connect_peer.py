"""The peer: one Kafka Connect 4.3.1 distributed worker with
`exactly.once.source.support=enabled` (`spark_eos_connect.apps.connect_worker`) for the whole run.
Each mode is a connector created on it with `PUT /connectors/NAME/config` and timed from
there: FileStreamSourceConnector on the bench's file until every line is visible
read_committed, or until its first record is; FileStreamSinkConnector from the sink topic
until its file has every line."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from spark_eos_connect.apps.bench.config import CONNECT, connect_sink
from spark_eos_connect.apps.bench.kafka_io import LineWatch, VisibilityWatch
from spark_eos_connect.apps.bench.results import ModeResult
from spark_eos_connect.apps.connect_worker import (
    FILE_SOURCE,
    ConnectRestError,
    ConnectWorker,
    worker_properties,
)

__all__ = [
    "ConnectWorker",
    "file_connector_config",
    "file_sink_config",
    "first_record",
    "run_connect",
    "run_file_sink",
    "running_worker",
    "worker_properties",
]

RUN_TIMEOUT_S = 900.0
FILE_SINK = "org.apache.kafka.connect.file.FileStreamSinkConnector"


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


def file_sink_config(topic: str, path: Path, tasks: int) -> dict[str, str]:
    """FileStreamSinkConnector from `topic` into `path` (string values, one line each)."""
    return {
        "connector.class": FILE_SINK,
        "tasks.max": str(tasks),
        "topics": topic,
        "file": str(path),
    }


@contextlib.contextmanager
def running_worker(
    kafka: Mapping[str, Any],
    name: str,
    work_dir: Path,
    extra: Mapping[str, str] | None = None,
) -> Iterator[tuple[ConnectWorker, float]]:
    """A started worker and its start-up time (from the JVM's start until the REST API
    lists connectors); stopped on exit. `extra` adds worker properties (`plugin.path`)."""
    worker = ConnectWorker(kafka["bootstrap.servers"], name, work_dir, extra=extra)
    started = time.monotonic()
    with worker:
        yield worker, time.monotonic() - started


def _deleted(worker: ConnectWorker, name: str) -> None:
    with contextlib.suppress(OSError, ValueError, ConnectRestError):
        worker.request("DELETE", f"/connectors/{name}")


def time_source(
    worker: ConnectWorker,
    kafka: Mapping[str, Any],
    name: str,
    config: Mapping[str, str],
    expected: int,
) -> float:
    """Seconds from creating a source connector until `expected` records of its topic (one
    partition) are visible read_committed; the connector is deleted afterwards."""
    with VisibilityWatch(kafka, config["topic"], 1, expected) as watch:
        started = time.monotonic()
        worker.put_connector(name, config)
        try:
            reached = watch.wait(RUN_TIMEOUT_S, lambda: worker.raise_if_failed(name))
        finally:
            _deleted(worker, name)
    return reached - started


def run_connect(
    worker: ConnectWorker,
    kafka: Mapping[str, Any],
    work: str,
    path: Path,
    topic: str,
    lines: int,
    batch_size: int,
    name: str,
) -> ModeResult:
    """FileStreamSourceConnector on `path`, timed until every line is visible."""
    seconds = time_source(
        worker, kafka, name, file_connector_config(path, topic, batch_size), lines
    )
    return ModeResult(
        work,
        CONNECT,
        lines,
        seconds,
        (),
        "from PUT /connectors/NAME/config until every line is visible read_committed",
    )


def first_record(
    worker: ConnectWorker,
    kafka: Mapping[str, Any],
    path: Path,
    topic: Callable[[str], str],
    runs: int,
    batch_size: int,
    name: str,
) -> list[float]:
    """`runs` connectors on the running worker, each timed until its first record is visible
    (`topic(key)` creates each one's topic)."""
    seconds = []
    for index in range(runs):
        config = file_connector_config(path, topic(f"first-connect-{index}"), batch_size)
        seconds.append(time_source(worker, kafka, f"{name}-first-{index}", config, 1))
    return seconds


SINK_WARMUP_RECORDS = 300_000
"""Records of the untimed run before each sink mode, on either side (`sink.SINK_WARMUP_RECORDS`
is the same figure): the worker's consumer and file task run warm, as a long-running worker's
do, and as the readers into `noop` are compared."""


def warm_up_file_sink(worker: ConnectWorker, topic: str, tasks: int, name: str, out: Path) -> None:
    """An untimed FileStreamSinkConnector run until `out` has the topic's first
    `SINK_WARMUP_RECORDS` lines (or all of them), then deleted."""
    with LineWatch(out, SINK_WARMUP_RECORDS) as watch:
        worker.put_connector(name, file_sink_config(topic, out, tasks))
        try:
            watch.wait(RUN_TIMEOUT_S, lambda: worker.raise_if_failed(name))
        finally:
            _deleted(worker, name)


def run_file_sink(
    worker: ConnectWorker, work: str, topic: str, records: int, tasks: int, name: str, out: Path
) -> ModeResult:
    """FileStreamSinkConnector with `tasks` tasks, timed until `out` has every record's line,
    after an untimed warm-up run of the same connector (`warm_up_file_sink`)."""
    warmup = out.with_name(f"{out.stem}-warmup{out.suffix}")
    try:
        warm_up_file_sink(worker, topic, tasks, f"{name}-warmup", warmup)
    finally:
        warmup.unlink(missing_ok=True)
    with LineWatch(out, records) as watch:
        started = time.monotonic()
        worker.put_connector(name, file_sink_config(topic, out, tasks))
        try:
            reached = watch.wait(RUN_TIMEOUT_S, lambda: worker.raise_if_failed(name))
        finally:
            _deleted(worker, name)
    return ModeResult(
        work,
        connect_sink(tasks),
        records,
        reached - started,
        (),
        "from PUT /connectors/NAME/config until the file has every line (after a warm-up run)",
    )
