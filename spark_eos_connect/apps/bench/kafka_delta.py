"""Mode 5, Kafka -> Delta: one topic into a fresh Delta table per round, by Spark's built-in
Kafka source (spark-sql-kafka-0-10) into Delta's own streaming sink (`format("delta")`, the
peer) and into `delta_sink`, and by the eosconnect reader into `delta_sink`, in the same
session, all `Trigger.AvailableNow` with the same records per micro-batch. Each reader first
runs one unmeasured round on a small topic (a first round is cold: JVM classes, Kafka
consumers, Python workers); then the measured rounds alternate between the modes on the full
topic, and a mode's figure is the median of its rounds.

A round lasts from `start()` until the query terminates; it is verified by counting the table.
"""

from __future__ import annotations

import contextlib
import io
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from spark_eos_connect.apps.bench.config import (
    EOSCONNECT_DELTA,
    KAFKA_DELTA_SINK,
    SPARK_KAFKA,
    BenchConfig,
)
from spark_eos_connect.apps.bench.results import (
    Batch,
    ModeResult,
    Verification,
    median,
    progress_batches,
)

ROUND_TIMEOUT_S = 900.0
COLUMNS = ["value", "headers", "topic", "partition", "offset", "timestamp", "key"]
"""What the built-in source's rows keep: the columns of `delta_sink`'s table."""


@dataclass(frozen=True)
class Round:
    """One query of one reader."""

    mode: str
    index: int
    seconds: float
    batches: tuple[Batch, ...]
    path: Path


def spark_kafka_rows(spark: Any, kafka: Mapping[str, Any], topic: str, per_trigger: int) -> Any:
    """Spark's Kafka source, read_committed, with the columns `delta_sink` keeps."""
    return (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", kafka["bootstrap.servers"])
        .option("kafka.isolation.level", "read_committed")
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", str(per_trigger))
        .option("includeHeaders", "true")
        .load()
        .select(*COLUMNS)
    )


def spark_kafka_query(
    spark: Any, kafka: Mapping[str, Any], topic: str, per_trigger: int, path: Path, ck: Path
) -> Any:
    """Spark's Kafka source into Delta's own streaming sink."""
    rows = spark_kafka_rows(spark, kafka, topic, per_trigger)
    return (
        rows.writeStream.format("delta")
        .option("checkpointLocation", str(ck))
        .trigger(availableNow=True)
        .start(str(path))
    )


def quiet(sink: Callable[[Any, int], None]) -> Callable[[Any, int], None]:
    """`sink` without its per-batch line on standard output."""

    def call(df: Any, batch_id: int) -> None:
        with contextlib.redirect_stdout(io.StringIO()):
            sink(df, batch_id)

    return call


def delta_sink_options(kafka: Mapping[str, Any], topic: str, path: Path, name: str) -> dict:
    """The DeltaSink options of one round."""
    return {
        "name": name,
        "topics": topic,
        "path": str(path),
        "kafka.bootstrap.servers": kafka["bootstrap.servers"],
    }


def kafka_delta_sink_query(
    spark: Any,
    kafka: Mapping[str, Any],
    topic: str,
    per_trigger: int,
    path: Path,
    ck: Path,
    name: str,
) -> Any:
    """Spark's Kafka source into `delta_sink`, as the README writes it."""
    from spark_eos_connect.delta import delta_sink

    options = delta_sink_options(kafka, topic, path, name)
    rows = spark_kafka_rows(spark, kafka, topic, per_trigger)
    return (
        rows.writeStream.foreachBatch(quiet(delta_sink(options)))
        .option("checkpointLocation", str(ck))
        .trigger(availableNow=True)
        .start()
    )


def eosconnect_query(
    spark: Any,
    kafka: Mapping[str, Any],
    topic: str,
    per_trigger: int,
    path: Path,
    ck: Path,
    name: str,
) -> Any:
    """The eosconnect reader into `delta_sink`."""
    from spark_eos_connect.delta import delta_sink

    options = delta_sink_options(kafka, topic, path, name)
    rows = (
        spark.readStream.format("eosconnect")
        .options(**options)
        .option("maxRecordsPerTrigger", str(per_trigger))
        .load()
    )
    return (
        rows.writeStream.foreachBatch(quiet(delta_sink(options)))
        .option("checkpointLocation", str(ck))
        .trigger(availableNow=True)
        .start()
    )


def run_round(start: Callable[[], Any], mode: str, index: int, path: Path) -> Round:
    """Start a query and wait until availableNow ends it."""
    started = time.monotonic()
    query = start()
    try:
        if not query.awaitTermination(ROUND_TIMEOUT_S):
            raise TimeoutError(f"{mode} round {index} did not end in {ROUND_TIMEOUT_S:.0f}s")
    finally:
        if query.isActive:
            query.stop()
    seconds = time.monotonic() - started
    error = query.exception()
    if error is not None:
        raise RuntimeError(f"{mode} round {index} failed: {error}")
    batches = tuple(b for _, b in progress_batches(query.recentProgress))
    return Round(mode, index, seconds, batches, path)


def summarize(work: str, mode: str, records: int, rounds: list[Round], warmup: Round) -> ModeResult:
    """The median time of the measured rounds."""
    return ModeResult(
        work,
        mode,
        records,
        median([r.seconds for r in rounds]),
        tuple(b for r in rounds for b in r.batches),
        f"median of {len(rounds)} round(s) from start() to the end of availableNow "
        f"({', '.join(f'{r.seconds:.1f}s' for r in rounds)}), after a warm-up round on a "
        f"small topic ({warmup.seconds:.1f}s)",
    )


def verify_table(
    spark: Any, work: str, mode: str, path: Path, expected: int, distinct: bool = True
) -> Verification:
    """Count the table's rows and (when `distinct`, else taken as equal) its distinct values."""
    table = spark.read.format("delta").load(str(path))
    found = table.count()
    different = table.select("value").distinct().count() if distinct else found
    return Verification(work, mode, expected, found, different, where="Delta table")


def start_round(
    spark: Any,
    config: BenchConfig,
    kafka: Mapping[str, Any],
    topic: str,
    mode: str,
    path: Path,
    name: str,
) -> Any:
    """Start one round's query of `mode` writing the table at `path`."""
    ck = path.with_name(path.name + "-checkpoint")
    if mode == SPARK_KAFKA:
        return spark_kafka_query(spark, kafka, topic, config.per_trigger, path, ck)
    if mode == KAFKA_DELTA_SINK:
        return kafka_delta_sink_query(spark, kafka, topic, config.per_trigger, path, ck, name)
    return eosconnect_query(spark, kafka, topic, config.per_trigger, path, ck, name)


def alternating_rounds(
    modes: Sequence[str],
    rounds: int,
    run: Callable[[str, int], Round],
    log: Callable[[str], None],
) -> tuple[dict[str, Round], dict[str, list[Round]]]:
    """A warm-up round per mode (index -1), then `rounds` rounds alternating between the
    modes: `run(mode, index)` runs one. The warm-ups and the measured rounds by mode."""
    warmups: dict[str, Round] = {}
    measured: dict[str, list[Round]] = {mode: [] for mode in modes}
    for index in range(-1, rounds):
        for mode in modes:
            done = run(mode, index)
            log(f"  {'warm-up' if index < 0 else f'round {index + 1}'} {mode}: {done.seconds:.1f}s")
            if index < 0:
                warmups[mode] = done
            else:
                measured[mode].append(done)
    return warmups, measured


def run_kafka_delta(
    spark: Any,
    config: BenchConfig,
    work: str,
    kafka: Mapping[str, Any],
    topics: tuple[str, str],
    warmup_records: int,
    folder: Path,
    run_id: str,
    log: Callable[[str], None],
) -> tuple[list[ModeResult], list[Verification]]:
    """A warm-up round per reader on `topics[0]`, then `config.delta_rounds` alternating rounds
    per reader on `topics[1]`; each round's table is counted."""
    keys = {SPARK_KAFKA: "spark", KAFKA_DELTA_SINK: "kds", EOSCONNECT_DELTA: "eos"}
    verifications: list[Verification] = []

    def run(mode: str, index: int) -> Round:
        last = index == config.delta_rounds - 1
        topic, expected = (topics[0], warmup_records) if index < 0 else (topics[1], config.records)
        path = folder / f"{keys[mode]}-{index + 1}"
        name = f"bench-delta-{run_id}-{keys[mode]}-{index + 1}"
        start = partial(start_round, spark, config, kafka, topic, mode, path, name)
        done = run_round(start, mode, index, path)
        verification = verify_table(spark, work, mode, path, expected, distinct=last)
        if last or not verification.ok:
            verifications.append(verification)
        return done

    warmups, rounds = alternating_rounds(list(keys), config.delta_rounds, run, log)
    results = [summarize(work, mode, config.records, rounds[mode], warmups[mode]) for mode in keys]
    return results, verifications
