"""Time to the first committed record: `jobs/source_to_kafka.py` started from nothing (a fresh
process, as a user runs it, against the bench's broker) until its first record is visible
read_committed; the Kafka Connect worker's figure is taken on a running worker, from
`PUT /connectors/NAME/config` (`connect_peer.first_record`); the job's query on a running
session, from `readStream...load()` (its counterpart: the PUT validates the config too). All
three run FileStreamSource on the bench's file, exactly once. Beside them, Spark's own floor:
`spark_floor`'s one-row Python data source stream, started from nothing the same way, until
its writer's task has its row; its runs alternate with the job's, so that both see the same
machine. Each mode runs `first_record_runs` times and keeps the median."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from spark_eos_connect.apps.bench.config import (
    FIRST_RECORD,
    JOB_FROM_NOTHING,
    QUERY_ON_SESSION,
    SPARK_FLOOR,
)
from spark_eos_connect.apps.bench.kafka_io import LineWatch, VisibilityWatch
from spark_eos_connect.apps.bench.results import ModeResult, median

JOB_SCRIPT = Path(__file__).resolve().parents[3] / "jobs" / "source_to_kafka.py"
"""The job as the README runs it; the wheel's module when the repository is not there."""
JOB_TIMEOUT_S = 180.0
STOP_TIMEOUT_S = 60.0
DROPPED_ENV = ("EOSCONNECT_DRAIN_FILE", "PYSPARK_GATEWAY_PORT", "PYSPARK_GATEWAY_SECRET")
"""The bench's own settings a user's fresh job would not have."""


def job_command(
    name: str, lines: Path, topic: str, bootstrap: str, checkpoint: Path, batch_size: int
) -> list[str]:
    """`python jobs/source_to_kafka.py ...` with FileStreamSource on `lines`, exactly once."""
    script = (
        [str(JOB_SCRIPT)]
        if JOB_SCRIPT.exists()
        else ["-m", "spark_eos_connect.apps.jobs.source_to_kafka"]
    )
    return [
        sys.executable,
        *script,
        "--name", name,
        "--connector-class", "FileStreamSource",
        "--option", f"file={lines}",
        "--option", f"topic={topic}",
        "--option", f"batch.size={batch_size}",
        "--bootstrap-servers", bootstrap,
        "--checkpoint", str(checkpoint),
    ]  # fmt: skip


def job_options(
    name: str, lines: Path, topic: str, bootstrap: str, batch_size: int
) -> dict[str, str]:
    """The source options `job_command`'s job passes (its defaults included): FileStreamSource
    on `lines` into `topic`, exactly once."""
    return {
        "name": name,
        "connector.class": "FileStreamSource",
        "tasks.max": "1",
        "exactly.once.source.support": "enabled",
        "transaction.boundary": "poll",
        "maxRecordsPerTrigger": "100000",
        "file": str(lines),
        "topic": topic,
        "batch.size": str(batch_size),
        "kafka.bootstrap.servers": bootstrap,
    }


def job_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The environment of a user's shell: the bench's own settings left out."""
    return {k: v for k, v in environ.items() if k not in DROPPED_ENV}


def time_job(command: Sequence[str], kafka: Mapping[str, Any], topic: str, log_path: Path) -> float:
    """Seconds from starting `command` until the first record of `topic` (one partition) is
    visible read_committed; the job is stopped (SIGTERM, as a user stops it) afterwards."""
    with VisibilityWatch(kafka, topic, 1, 1) as watch:
        return _time_until(command, watch.wait, log_path)


def floor_command(marker: Path, checkpoint: Path) -> list[str]:
    """`python -m spark_eos_connect.apps.bench.spark_floor MARKER CHECKPOINT`."""
    from spark_eos_connect.apps.bench.spark_floor import MODULE

    return [sys.executable, "-m", MODULE, str(marker), str(checkpoint)]


def time_floor_job(command: Sequence[str], marker: Path, log_path: Path) -> float:
    """Seconds from starting `command` until `marker` has its first line."""
    with LineWatch(marker, 1) as watch:
        return _time_until(command, watch.wait, log_path)


def _time_until(
    command: Sequence[str], wait: Callable[[float, Callable[[], None]], float], log_path: Path
) -> float:
    """Start `command` (a user's environment, output to `log_path`), `wait` for what it should
    do (the time it did it), then stop it with SIGTERM; seconds from its start."""
    from spark_eos_connect.jvm.processes import terminate

    with log_path.open("ab") as log:
        started = time.monotonic()
        process = subprocess.Popen(
            list(command), stdout=log, stderr=subprocess.STDOUT, env=job_env(os.environ)
        )
        try:
            reached = wait(JOB_TIMEOUT_S, lambda: _raise_if_exited(process, log_path))
        finally:
            terminate(process, STOP_TIMEOUT_S)
    return reached - started


def _raise_if_exited(process: subprocess.Popen[bytes], log_path: Path) -> None:
    if process.poll() is not None:
        tail = log_path.read_text(errors="replace")[-3000:]
        raise RuntimeError(f"the job exited ({process.returncode}) before it was timed: {tail}")


def first_record_result(
    mode: str, seconds: Sequence[float], timing: str, note: str = ""
) -> ModeResult:
    """One first-record row: the median of the runs, every run named in the timing text."""
    runs = ", ".join(f"{s:.1f}s" for s in seconds)
    text = f"{timing}; median of {len(seconds)} run(s): {runs}"
    return ModeResult(
        FIRST_RECORD, mode, 1, median(seconds), (), text + (f"; {note}" if note else "")
    )


@dataclass(frozen=True)
class SourceRuns:
    """What each run of the job's FileStreamSource query needs."""

    kafka: Mapping[str, Any]
    lines: Path
    topic: Callable[[str], str]
    """Creates a fresh topic for a run's key and returns its name."""
    runs: int
    batch_size: int
    folder: Path
    name: str
    log: Callable[[str], None]


def run_from_nothing(c: SourceRuns, floor_folder: Path) -> list[ModeResult]:
    """`c.runs` fresh jobs (each into a fresh topic) and as many `spark_floor` jobs (each with
    its own marker and checkpoint), one after the other in turn."""
    c.folder.mkdir(parents=True, exist_ok=True)
    floor_folder.mkdir(parents=True, exist_ok=True)

    def job(index: int) -> float:
        target = c.topic(f"first-job-{index}")
        command = job_command(
            f"{c.name}-{index}", c.lines, target, c.kafka["bootstrap.servers"],
            c.folder / f"ck-{index}", c.batch_size,
        )  # fmt: skip
        return time_job(command, c.kafka, target, c.folder / f"job-{index}.log")

    def floor(index: int) -> float:
        marker = floor_folder / f"marker-{index}"
        command = floor_command(marker, floor_folder / f"ck-{index}")
        return time_floor_job(command, marker, floor_folder / f"job-{index}.log")

    jobs: list[float] = []
    floors: list[float] = []
    for index in range(c.runs):
        jobs.append(job(index))
        c.log(f"  run {index + 1}: the job's first record visible after {jobs[-1]:.2f}s")
        floors.append(floor(index))
        c.log(f"  run {index + 1}: Spark's one-row stream had its row after {floors[-1]:.2f}s")
    return [
        first_record_result(
            JOB_FROM_NOTHING,
            jobs,
            "from starting `python jobs/source_to_kafka.py` (FileStreamSource, exactly once) "
            "until its first record is visible read_committed",
        ),
        first_record_result(
            SPARK_FLOOR,
            floors,
            "from starting `python -m spark_eos_connect.apps.bench.spark_floor` (a one-row "
            "Python data source stream, the jobs' session, no Kafka) until its writer's task "
            "has the row; its runs alternate with the job's",
        ),
    ]


def run_query_on_session(spark: Any, c: SourceRuns) -> ModeResult:
    """`c.runs` queries with the job's options (`job_options`) started on `spark`, each into a
    fresh topic, timed from `readStream...load()` until the first record is visible
    read_committed, then stopped between two micro-batches."""

    def run(index: int) -> float:
        target = c.topic(f"first-query-{index}")
        bootstrap = c.kafka["bootstrap.servers"]
        options = job_options(f"{c.name}-{index}", c.lines, target, bootstrap, c.batch_size)
        return _time_query(spark, c.kafka, options, c.folder / f"ck-{index}")

    seconds = []
    for index in range(c.runs):
        seconds.append(run(index))
        c.log(f"  run {index + 1}: the query's first record visible after {seconds[-1]:.2f}s")
    return first_record_result(
        QUERY_ON_SESSION,
        seconds,
        "from `readStream...load()` of the job's query on a running session (the options' "
        "validation included) until its first record is visible read_committed; the first run "
        "is the session's first query, which starts its Python workers",
    )


def _time_query(
    spark: Any, kafka: Mapping[str, Any], options: Mapping[str, str], checkpoint: Path
) -> float:
    """Seconds from `load()` of the source query until its first record is visible; the query
    is then stopped between two micro-batches, and the drain request withdrawn in any case."""
    from spark_eos_connect.apps.bench.pipeline import (
        raise_if_stopped,
        start_query,
        withdraw_drain_request,
    )
    from spark_eos_connect.spark.job_support import stop_between_batches

    with VisibilityWatch(kafka, options["topic"], 1, 1) as watch:
        started = time.monotonic()
        query = start_query(spark, options, checkpoint)
        try:
            reached = watch.wait(JOB_TIMEOUT_S, lambda: raise_if_stopped(query))
        finally:
            try:
                stop_between_batches(query)
            finally:
                withdraw_drain_request()
    return reached - started
