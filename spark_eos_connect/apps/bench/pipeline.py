"""Modes 3 and 4: the eosconnect source pipeline through its public API,
`readStream.format("eosconnect")` into `writeStream.format("eosconnect")`.

- file -> Kafka, exactly-once: FileStreamSource on the bench's file, timed like the Connect
  worker, from the query's start until every line is visible read_committed.
- generator -> Kafka, exactly-once and at-least-once: the Generator; steady state, the sum of
  `durationMs.triggerExecution` of the micro-batches after batch 0 (the warm-up, which also
  pays for Spark's Python workers and the connector's start).

Every micro-batch with records gives one (records, triggerExecution) point for the costs.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from spark_eos_connect.apps.bench.config import (
    AT_LEAST_ONCE,
    EXACTLY_ONCE,
    JAVA_FILE_SOURCE,
    BenchConfig,
)
from spark_eos_connect.apps.bench.host_memory import PeakHostMemory
from spark_eos_connect.apps.bench.kafka_io import VisibilityWatch
from spark_eos_connect.apps.bench.results import ModeResult, progress_batches
from spark_eos_connect.jvm import jars

MAX_POLL_DURATION_MS = 600_000
"""`maxPollDurationMs`: high, so that every micro-batch has its planned size (a task stops
polling early anyway when its connector has nothing more)."""
QUERY_TIMEOUT_S = 900.0


def generator_options(
    config: BenchConfig, name: str, topic: str, bootstrap: str, exactly_once: bool
) -> dict[str, str]:
    """The Generator with the bench's sizes: each task writes a warm-up batch and its share."""
    return {
        "name": name,
        "connector.class": "Generator",
        "tasks.max": str(config.tasks),
        "topic": topic,
        "value.size": str(config.value_size),
        "records.per.poll": str(config.records_per_poll),
        "max.records": str(config.task_total),
        "maxRecordsPerTrigger": str(config.per_trigger),
        "maxPollDurationMs": str(MAX_POLL_DURATION_MS),
        "exactly.once.source.support": "enabled" if exactly_once else "disabled",
        "kafka.bootstrap.servers": bootstrap,
    }


JAVA_FILE_CONNECTOR = "org.apache.kafka.connect.file.FileStreamSourceConnector"
"""Connect's own file source, run from its plugin folder in a JVM task host."""


def file_options(
    config: BenchConfig, name: str, path: Path, topic: str, bootstrap: str, java: bool = False
) -> dict[str, str]:
    """FileStreamSource on `path`, exactly once: the project's, or Connect's Java connector
    from its `plugin.path` folder when `java`."""
    plugin = {"plugin.path": str(jars.plugin_path("connect-file"))} if java else {}
    return {
        "name": name,
        "connector.class": JAVA_FILE_CONNECTOR if java else "FileStreamSource",
        **plugin,
        "tasks.max": "1",
        "file": str(path),
        "topic": topic,
        "batch.size": str(config.file_batch_size),
        "maxRecordsPerTrigger": str(config.per_trigger),
        "maxPollDurationMs": str(MAX_POLL_DURATION_MS),
        "exactly.once.source.support": "enabled",
        "kafka.bootstrap.servers": bootstrap,
    }


def start_query(spark: Any, options: Mapping[str, str], checkpoint: Path) -> Any:
    """The source query, as the README's quickstart writes it."""
    stream = spark.readStream.format("eosconnect").options(**options).load()
    return (
        stream.writeStream.format("eosconnect")
        .option("name", options["name"])
        .option("kafka.bootstrap.servers", options["kafka.bootstrap.servers"])
        .option("checkpointLocation", str(checkpoint))
        .trigger(processingTime="0 seconds")
        .start()
    )


def finish_query(query: Any, timeout_s: float = QUERY_TIMEOUT_S) -> None:
    """Run until a micro-batch finds nothing, then stop between two micro-batches."""
    from spark_eos_connect.spark.job_support import run_query

    try:
        run_query(query, True, timeout_s, threading.Event())
    finally:
        withdraw_drain_request()
        if query.isActive:
            query.stop()


def withdraw_drain_request() -> None:
    """Remove the drain request a stop left behind: it would stop the next query at once."""
    from spark_eos_connect.spark.drain import DRAIN_ENV

    drain = os.environ.get(DRAIN_ENV)
    if drain:
        Path(drain).unlink(missing_ok=True)


def raise_if_stopped(query: Any) -> None:
    """Raise the query's failure (or say it stopped) once it is no longer active."""
    if not query.isActive:
        error = query.exception()
        raise RuntimeError(f"the query stopped: {error or 'no error reported'}")


def run_generator(
    spark: Any,
    config: BenchConfig,
    work: str,
    name: str,
    topic: str,
    bootstrap: str,
    exactly_once: bool,
    checkpoint: Path,
) -> ModeResult:
    """The Generator query until idle; measured: its micro-batches after batch 0."""
    options = generator_options(config, name, topic, bootstrap, exactly_once)
    query = start_query(spark, options, checkpoint)
    finish_query(query)
    batches = [b for _, b in progress_batches(query.recentProgress, skip_below=1)]
    return ModeResult(
        work,
        EXACTLY_ONCE if exactly_once else AT_LEAST_ONCE,
        sum(n for n, _ in batches),
        sum(s for _, s in batches),
        tuple(batches),
        "sum of triggerExecution over the micro-batches with records after batch 0 (warm-up)",
    )


def run_file(
    spark: Any,
    config: BenchConfig,
    work: str,
    name: str,
    path: Path,
    topic: str,
    kafka: Mapping[str, Any],
    checkpoint: Path,
    java: bool = False,
) -> ModeResult:
    """FileStreamSource exactly-once (Connect's Java one when `java`), timed from the query's
    start until every line is visible read_committed; costs from its micro-batches after
    batch 0 when there are two."""
    bootstrap = kafka["bootstrap.servers"]
    options = file_options(config, name, path, topic, bootstrap, java)
    with VisibilityWatch(kafka, topic, 1, config.file_records) as watch, PeakHostMemory() as hosts:
        started = time.monotonic()
        query = start_query(spark, options, checkpoint)
        try:
            reached = watch.wait(QUERY_TIMEOUT_S, lambda: raise_if_stopped(query))
        finally:
            finish_query(query, timeout_s=120)
    found = progress_batches(query.recentProgress)
    later = [b for batch_id, b in found if batch_id > 0]
    batches = later if len({n for n, _ in later}) > 1 else [b for _, b in found]
    return ModeResult(
        work,
        JAVA_FILE_SOURCE if java else EXACTLY_ONCE,
        config.file_records,
        reached - started,
        tuple(batches),
        "from the query's start until every line is visible read_committed (Spark session "
        "already up)" + (f"; JVM task hosts' peak RSS {hosts.peak_mib:.0f} MiB" if java else ""),
    )
