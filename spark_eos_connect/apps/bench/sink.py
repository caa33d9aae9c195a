"""The sink side, on the sink topic (`sink_records` records of `value_size` bytes, numbered,
`sink_partitions` partitions), in the bench's Spark session (already up):

- **Kafka -> file**: the eosconnect reader into the eosconnect writer with FileStreamSink
  (`jobs/kafka_to_sink.py`'s query), `tasks.max` 1 and 2, timed from `start()` until the
  file has every line, like Kafka Connect's FileStreamSinkConnector (`connect_peer`); each
  mode on either side after an untimed warm-up run of the same connector over the topic's
  first `SINK_WARMUP_RECORDS` records (a cold JVM's first query spent 7-9 more CPU-seconds,
  compiling and loading classes, than the next one), and on this side once the executor has
  started the spare task hosts the warm-up claimed again (`await_spare_hosts`).
- **Kafka -> noop**: the eosconnect reader and Spark's built-in Kafka source into Spark's
  `noop` sink, `Trigger.AvailableNow`; a warm-up round each on a small topic, then rounds
  alternating between them, the median kept (`kafka_delta.alternating_rounds`).
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from typing import Any

from spark_eos_connect.apps.bench.config import (
    EOSCONNECT_READER,
    SPARK_KAFKA,
    BenchConfig,
    eosconnect_sink,
)
from spark_eos_connect.apps.bench.kafka_delta import (
    Round,
    alternating_rounds,
    run_round,
    spark_kafka_rows,
    summarize,
)
from spark_eos_connect.apps.bench.kafka_io import LineWatch
from spark_eos_connect.apps.bench.pipeline import QUERY_TIMEOUT_S, finish_query, raise_if_stopped
from spark_eos_connect.apps.bench.results import ModeResult, Verification

CONVERTER = "org.apache.kafka.connect.storage.StringConverter"
"""The values' converter on both sides (the Connect worker's default in the bench)."""


def sink_options(
    config: BenchConfig, name: str, topic: str, bootstrap: str, out: Path, tasks: int
) -> dict[str, str]:
    """FileStreamSink from `topic` into `out`, as `jobs/kafka_to_sink.py` passes them."""
    return {
        "name": name,
        "connector.class": "FileStreamSink",
        "tasks.max": str(tasks),
        "topics": topic,
        "file": str(out),
        "value.converter": CONVERTER,
        "maxRecordsPerTrigger": str(config.sink_per_trigger),
        "kafka.bootstrap.servers": bootstrap,
    }


SINK_WARMUP_RECORDS = 300_000
"""Records of the untimed run before each sink mode (as `connect_peer.SINK_WARMUP_RECORDS`)."""


def warm_up_sink(
    spark: Any, config: BenchConfig, name: str, topic: str, bootstrap: str, tasks: int, out: Path
) -> None:
    """An untimed run of the sink query (its own connector name and checkpoint) until `out`
    has the topic's first `SINK_WARMUP_RECORDS` lines, then stopped between two micro-batches."""
    from spark_eos_connect.apps.jobs.kafka_to_sink import sink_query
    from spark_eos_connect.spark.job_support import stop_between_batches

    options = sink_options(config, name, topic, bootstrap, out, tasks)
    options["maxRecordsPerTrigger"] = str(SINK_WARMUP_RECORDS)
    checkpoint = out.with_name(f"{out.name}.checkpoint")
    with LineWatch(out, SINK_WARMUP_RECORDS) as watch:
        query = sink_query(spark, options, str(checkpoint), "0 seconds")
        try:
            watch.wait(QUERY_TIMEOUT_S, lambda: raise_if_stopped(query))
        finally:
            stop_between_batches(query)
    shutil.rmtree(checkpoint, ignore_errors=True)
    await_spare_hosts()


SPARES_WAIT_S = 10.0
"""How long the bench waits for the executor's spare task hosts after a warm-up run."""


def await_spare_hosts() -> None:
    """Wait (up to `SPARES_WAIT_S`) until the executor has its spare task hosts up again: the
    warm-up run's tasks claimed them, and the executor starts new ones once its hosts are idle
    (`runtime.host_spares`), each a new interpreter taking a core for most of a second. An
    executor that runs for a while has them ready; the timed run starts as on one, rather than
    beside those starts."""
    from spark_eos_connect.runtime.host_spares import ready_spares, spare_count
    from spark_eos_connect.runtime.task_host import hosts_folder

    deadline = time.monotonic() + SPARES_WAIT_S
    while ready_spares(hosts_folder()) < spare_count() and time.monotonic() < deadline:
        time.sleep(0.1)


def run_sink(
    spark: Any,
    config: BenchConfig,
    work: str,
    name: str,
    topic: str,
    bootstrap: str,
    tasks: int,
    checkpoint: Path,
    out: Path,
) -> ModeResult:
    """FileStreamSink from `topic` into `out` until the file has every line (then until idle,
    and stopped), after an untimed warm-up run (`warm_up_sink`)."""
    from spark_eos_connect.apps.jobs.kafka_to_sink import sink_query

    warmup = out.with_name(f"{out.stem}-warmup{out.suffix}")
    try:
        warm_up_sink(spark, config, f"{name}-warmup", topic, bootstrap, tasks, warmup)
    finally:
        warmup.unlink(missing_ok=True)
    options = sink_options(config, name, topic, bootstrap, out, tasks)
    with LineWatch(out, config.sink_records) as watch:
        started = time.monotonic()
        query = sink_query(spark, options, str(checkpoint), "0 seconds")
        try:
            reached = watch.wait(QUERY_TIMEOUT_S, lambda: raise_if_stopped(query))
        finally:
            finish_query(query, timeout_s=120)
    return ModeResult(
        work,
        eosconnect_sink(tasks),
        config.sink_records,
        reached - started,
        (),  # a sink connector's stream carries each task's ranges, not its records
        "from the query's start until the file has every line (Spark session already up; "
        "after a warm-up run)",
    )


def eosconnect_rows(spark: Any, kafka: Mapping[str, Any], topic: str, per_trigger: int) -> Any:
    """The eosconnect reader on `topic` from the beginning (no consumer group)."""
    return (
        spark.readStream.format("eosconnect")
        .option("topics", topic)
        .option("kafka.bootstrap.servers", kafka["bootstrap.servers"])
        .option("maxRecordsPerTrigger", str(per_trigger))
        .load()
    )


def noop_query(
    spark: Any, kafka: Mapping[str, Any], topic: str, mode: str, per_trigger: int, ck: Path
) -> Any:
    """`mode`'s reader into `noop`, availableNow."""
    read = spark_kafka_rows if mode == SPARK_KAFKA else eosconnect_rows
    rows = read(spark, kafka, topic, per_trigger)
    return (
        rows.writeStream.format("noop")
        .option("checkpointLocation", str(ck))
        .trigger(availableNow=True)
        .start()
    )


def rows_read(work: str, mode: str, expected: int, done: Round) -> Verification:
    """What a `noop` round read, from its progress (`numInputRows`)."""
    found = sum(n for n, _ in done.batches)
    return Verification(work, mode, expected, found, found, where="numInputRows")


def run_readers(
    spark: Any,
    config: BenchConfig,
    work: str,
    kafka: Mapping[str, Any],
    topics: tuple[str, str],
    warmup_records: int,
    folder: Path,
    log: Callable[[str], None],
) -> tuple[list[ModeResult], list[Verification]]:
    """Both readers into `noop`: a warm-up round on `topics[0]`, then `reader_rounds`
    alternating rounds on `topics[1]`; every round's rows are counted."""
    modes = (SPARK_KAFKA, EOSCONNECT_READER)
    verifications: list[Verification] = []

    def run(mode: str, index: int) -> Round:
        topic, expected = (
            (topics[0], warmup_records) if index < 0 else (topics[1], config.sink_records)
        )
        ck = folder / f"noop-{modes.index(mode)}-{index + 1}"
        start = partial(noop_query, spark, kafka, topic, mode, config.sink_per_trigger, ck)
        done = run_round(start, mode, index, ck)
        verification = rows_read(work, mode, expected, done)
        if index == config.reader_rounds - 1 or not verification.ok:
            verifications.append(verification)
        return done

    warmups, rounds = alternating_rounds(modes, config.reader_rounds, run, log)
    results = [
        summarize(work, mode, config.sink_records, rounds[mode], warmups[mode]) for mode in modes
    ]
    return results, verifications
