"""`make bench`: records/s of the exactly-once source pipeline next to its physical limit.

One run on one local broker measures three modes writing the same Generator records in the
same batch sizes:

1. **raw producer**: `tasks` processes, each polling a `GeneratorSourceTask` directly and writing
   every batch of the pipeline's per-task micro-batch size with a confluent-kafka transactional
   producer (the pipeline's `PRODUCER_DEFAULTS`) in one transaction, together with one record
   for the offsets topic. The tasks start each batch together (a barrier), as Spark runs a
   micro-batch's tasks; a batch's time is from the first task's `begin_transaction` to the last
   task's committed transaction. Polling the generator is not timed.
2. **eosconnect exactly-once**: `readStream.format("eosconnect")` with the Generator connector
   into `writeStream.format("eosconnect")`, `exactly.once.source.support=enabled`.
3. **eosconnect at-least-once**: the same with `exactly.once.source.support=disabled`.

Pipeline time is the sum of `durationMs.triggerExecution` of the micro-batches that carried
records, from the streaming query's progress. Every mode first writes one warm-up batch per task
that is not measured (for the pipeline: micro-batch 0, which also pays for Spark's Python
workers and the connector's start), so each mode writes `records` measured records plus
the warm-up. Afterwards a read_committed consumer counts every mode's topic.
"""

from __future__ import annotations

import math
import multiprocessing
import os
import shutil
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spark_eos_connect.api.source import InMemoryOffsetStorageReader, SourceTaskContext
from spark_eos_connect.connectors.generator import (
    GeneratorSourceConnector,
    GeneratorSourceTask,
    parse_generated_value,
)
from spark_eos_connect.kafka.clients import admin_client, ensure_topic, read_to_end
from spark_eos_connect.kafka.producers import produce, transactional_producer
from spark_eos_connect.runtime.records import to_bytes
from spark_eos_connect.storage.offsets import ensure_offsets_topic, offset_messages

RAW = "raw producer"
EXACTLY_ONCE = "eosconnect exactly-once"
AT_LEAST_ONCE = "eosconnect at-least-once"

RECORDS_PER_POLL = 10_000
"""The Generator's `records.per.poll` (its default), in every mode."""

MAX_POLL_DURATION_MS = 600_000
"""`maxPollDurationMs` of the pipeline: high, so that every micro-batch has its planned size."""

OFFSETS_TOPIC = "eosconnect-offsets"
OFFSETS_PARTITIONS = 25
COMMIT_TIMEOUT_S = 120.0
QUERY_TIMEOUT_S = 1800.0
VERIFY_TIMEOUT_S = 600.0


# -- configuration and pure arithmetic ------------------------------------------------------


@dataclass(frozen=True)
class BenchConfig:
    """What one benchmark run writes: the same for every mode."""

    records: int = 1_000_000
    """Measured records per mode, across all tasks (warm-up not included)."""
    tasks: int = 2
    """`tasks.max`: tasks (Spark partitions, raw producer processes) writing in parallel."""
    per_trigger: int = 200_000
    """`maxRecordsPerTrigger`: records per micro-batch across all tasks."""
    value_size: int = 100
    """The Generator's `value.size`."""
    records_per_poll: int = RECORDS_PER_POLL
    """The Generator's `records.per.poll`."""

    def __post_init__(self) -> None:
        for name in ("records", "tasks", "per_trigger", "records_per_poll"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, not {getattr(self, name)}")
        if self.value_size < 0:
            raise ValueError(f"value_size must be at least 0, not {self.value_size}")
        if self.records % self.tasks:
            raise ValueError(
                f"records ({self.records}) must be a multiple of tasks ({self.tasks}): every "
                "task writes the same number of records"
            )

    @property
    def task_records(self) -> int:
        """Measured records of one task."""
        return self.records // self.tasks

    @property
    def task_batch(self) -> int:
        """Records of one task in a full micro-batch.

        The driver gives each task `ceil(per_trigger / tasks)` records and the task polls whole
        polls until it has at least that many, so a full batch is a whole number of polls.
        """
        share = math.ceil(self.per_trigger / self.tasks)
        return math.ceil(share / self.records_per_poll) * self.records_per_poll

    @property
    def warmup_per_task(self) -> int:
        """Records of one task in the unmeasured warm-up batch (one full batch)."""
        return self.task_batch

    @property
    def task_total(self) -> int:
        """Everything one task writes: warm-up plus measured records (its `max.records`)."""
        return self.warmup_per_task + self.task_records

    @property
    def expected_total(self) -> int:
        """Everything one mode writes to its topic, across all tasks."""
        return self.task_total * self.tasks

    def measured_batches(self) -> list[int]:
        """One task's measured batch sizes, in order (the last may be partial)."""
        sizes = []
        left = self.task_records
        while left > 0:
            size = min(self.task_batch, left)
            sizes.append(size)
            left -= size
        return sizes


@dataclass(frozen=True)
class ModeResult:
    """The measured part of one mode's run."""

    mode: str
    records: int
    seconds: float
    batches: int = 0
    notes: dict[str, float] = field(default_factory=dict)

    @property
    def records_per_s(self) -> float:
        """Records per second (0 when nothing was timed)."""
        return self.records / self.seconds if self.seconds > 0 else 0.0


def ratio(result: ModeResult, baseline: ModeResult) -> float:
    """`result`'s records/s as a fraction of `baseline`'s (0 when the baseline has no rate)."""
    base = baseline.records_per_s
    return result.records_per_s / base if base > 0 else 0.0


def format_table(results: Sequence[ModeResult], baseline: str = RAW) -> str:
    """`mode | records | seconds | records/s | ratio to raw producer` as a Markdown table."""
    base = next((r for r in results if r.mode == baseline), None)
    header = ["mode", "records", "seconds", "records/s", f"ratio to {baseline}"]
    rows = [
        [
            r.mode,
            f"{r.records:,}",
            f"{r.seconds:.2f}",
            f"{r.records_per_s:,.0f}",
            "n/a" if base is None else f"{ratio(r, base):.2f}",
        ]
        for r in results
    ]
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        padded = [
            cell.ljust(width) if i == 0 else cell.rjust(width)
            for i, (cell, width) in enumerate(zip(cells, widths, strict=True))
        ]
        return "| " + " | ".join(padded) + " |"

    rule = "|" + "|".join(
        "-" * (w + 1) + ":" if i else ":" + "-" * (w + 1) for i, w in enumerate(widths)
    )
    return "\n".join([line(header), rule + "|", *(line(row) for row in rows)])


def measure_progress(
    progress: Iterable[Mapping[str, Any]], mode: str, skip_batches: int = 1
) -> ModeResult:
    """Records and time of the micro-batches that carried records, from a query's progress.

    Batches with an id below `skip_batches` (the warm-up) and batches without input rows are
    left out; time is the sum of their `durationMs.triggerExecution`. The other phases of
    those batches are summed into `notes` (`<phase>_s`).
    """
    by_batch: dict[int, Mapping[str, Any]] = {}
    for entry in progress:
        by_batch[int(entry["batchId"])] = entry
    records = 0
    millis = 0
    batches = 0
    phases: dict[str, float] = {}
    for batch_id in sorted(by_batch):
        entry = by_batch[batch_id]
        rows = int(entry.get("numInputRows") or 0)
        if batch_id < skip_batches or rows == 0:
            continue
        durations = entry.get("durationMs") or {}
        records += rows
        millis += int(durations.get("triggerExecution", 0))
        batches += 1
        for phase, value in durations.items():
            if phase != "triggerExecution":
                phases[f"{phase}_s"] = phases.get(f"{phase}_s", 0.0) + value / 1000
    return ModeResult(mode, records, millis / 1000, batches, phases)


def measure_raw_batches(
    timings: Mapping[int, Sequence[tuple[float, float, int]]], mode: str = RAW
) -> ModeResult:
    """Records and time of the raw producer's batches from every task's `(start, end, rows)`.

    Batch `i` of every task ran together (after a barrier): its time is from the earliest start
    to the latest end among the tasks. Timestamps are `time.monotonic()`, one clock for every
    process of the machine on Linux.
    """
    if not timings:
        return ModeResult(mode, 0, 0.0)
    counts = {len(t) for t in timings.values()}
    if len(counts) != 1:
        raise ValueError(f"tasks ran different numbers of batches: {sorted(counts)}")
    records = 0
    seconds = 0.0
    batches = counts.pop()
    for i in range(batches):
        column = [task_timings[i] for task_timings in timings.values()]
        seconds += max(end for _, end, _ in column) - min(start for start, _, _ in column)
        records += sum(rows for _, _, rows in column)
    return ModeResult(mode, records, seconds, batches)


# -- verification ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Verification:
    """What a read_committed consumer found in one mode's topic."""

    mode: str
    expected: int
    found: int
    distinct: int

    @property
    def ok(self) -> bool:
        """Every expected record is there, once."""
        return self.found == self.expected == self.distinct

    def describe(self) -> str:
        """One line for the report."""
        status = "OK" if self.ok else "MISMATCH"
        return (
            f"{status} {self.mode}: read_committed found {self.found:,} records "
            f"({self.distinct:,} distinct), expected {self.expected:,}"
        )


def verify_topic(kafka: Mapping[str, Any], topic: str, mode: str, expected: int) -> Verification:
    """Count the committed records of `topic` and the distinct generated records among them."""
    records = read_to_end(kafka, [topic], "read_committed", VERIFY_TIMEOUT_S)
    distinct = {parse_generated_value(r.value) for r in records if r.value is not None}
    return Verification(mode, expected, len(records), len(distinct))


# -- mode 1: the raw transactional producer ---------------------------------------------------


def generator_task_configs(config: BenchConfig, connector: str, topic: str) -> list[dict[str, str]]:
    """The Generator's task configs, exactly as the pipeline's driver makes them."""
    props = {
        "name": connector,
        "connector.class": "Generator",
        "tasks.max": str(config.tasks),
        "topic": topic,
        "value.size": str(config.value_size),
        "records.per.poll": str(config.records_per_poll),
        "max.records": str(config.task_total),
    }
    connector_obj = GeneratorSourceConnector()
    connector_obj.start(props)
    return connector_obj.task_configs(config.tasks)


def _poll_batch(
    task: GeneratorSourceTask, size: int
) -> tuple[list[tuple[bytes | None, bytes | None]], dict[str, Any], dict[str, Any]]:
    """Poll like the pipeline's reader (whole polls until `size`): (key, value) pairs and the
    last record's source partition and offset."""
    pairs: list[tuple[bytes | None, bytes | None]] = []
    partition: dict[str, Any] = {}
    offset: dict[str, Any] = {}
    while len(pairs) < size:
        records = task.poll()
        if not records:
            break
        pairs.extend((to_bytes(r.key), to_bytes(r.value)) for r in records)
        partition = dict(records[-1].source_partition or {})
        offset = dict(records[-1].source_offset or {})
    return pairs, partition, offset


def raw_task_worker(
    kafka: dict[str, Any],
    config: BenchConfig,
    connector: str,
    topic: str,
    task_id: int,
    task_config: dict[str, str],
    barrier: Any,
    results: Any,
) -> None:
    """One raw producer process: every batch of one task in its own transaction.

    Puts `(task_id, [(start, end, rows), ...])` (the warm-up batch first) or
    `(task_id, "error: ...")` on `results`.
    """
    try:
        task = GeneratorSourceTask()
        task.initialize(
            SourceTaskContext(
                task_config, InMemoryOffsetStorageReader(), None, task_id, connector_name=connector
            )
        )
        task.start(dict(task_config))
        producer = transactional_producer(kafka, f"bench-{connector}-{task_id}")
        timings: list[tuple[float, float, int]] = []
        for size in [config.warmup_per_task, *config.measured_batches()]:
            pairs, partition, offset = _poll_batch(task, size)
            barrier.wait()
            start = time.monotonic()
            producer.begin_transaction()
            for key, value in pairs:
                try:
                    producer.produce(topic, value, key)
                except BufferError:
                    produce(producer, topic, value, key)
            producer.poll(0)
            for message in offset_messages(
                OFFSETS_TOPIC, OFFSETS_PARTITIONS, connector, [(partition, offset)]
            ):
                produce(
                    producer,
                    message.topic,
                    message.value,
                    message.key,
                    partition=message.partition,
                )
            producer.commit_transaction(COMMIT_TIMEOUT_S)
            timings.append((start, time.monotonic(), len(pairs)))
        task.stop()
        results.put((task_id, timings))
    except BaseException as error:
        barrier.abort()
        results.put((task_id, f"error: {error!r}"))
        raise


def run_raw_producer(
    kafka: Mapping[str, Any], config: BenchConfig, connector: str, topic: str
) -> ModeResult:
    """Mode 1: `tasks` producer processes, one transaction per batch (warm-up batch left out)."""
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(config.tasks)
    results = context.Queue()
    task_configs = generator_task_configs(config, connector, topic)
    processes = [
        context.Process(
            target=raw_task_worker,
            args=(dict(kafka), config, connector, topic, t, task_configs[t], barrier, results),
            name=f"bench-raw-{t}",
        )
        for t in range(config.tasks)
    ]
    for process in processes:
        process.start()
    collected: dict[int, list[tuple[float, float, int]]] = {}
    errors: list[str] = []
    try:
        for _ in processes:
            task_id, outcome = results.get(timeout=QUERY_TIMEOUT_S)
            if isinstance(outcome, str):
                errors.append(f"task {task_id}: {outcome}")
            else:
                collected[task_id] = outcome
    finally:
        for process in processes:
            process.join(60)
            if process.is_alive():
                process.terminate()
    if errors:
        raise RuntimeError("raw producer failed: " + "; ".join(errors))
    measured = {t: timings[1:] for t, timings in collected.items()}
    return measure_raw_batches(measured)


# -- modes 2 and 3: the eosconnect pipeline ---------------------------------------------------


def pipeline_options(
    config: BenchConfig, connector: str, topic: str, bootstrap: str, exactly_once: bool
) -> dict[str, str]:
    """The reader's options: the Generator with the bench's sizes."""
    return {
        "name": connector,
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


def run_pipeline(
    spark: Any,
    bootstrap: str,
    config: BenchConfig,
    connector: str,
    topic: str,
    exactly_once: bool,
    checkpoint: Path,
) -> ModeResult:
    """Modes 2 and 3: run the query until a micro-batch finds no records, then measure it."""
    from spark_eos_connect.spark.drain import DRAIN_ENV
    from spark_eos_connect.spark.jobs import run_query

    options = pipeline_options(config, connector, topic, bootstrap, exactly_once)
    stream = spark.readStream.format("eosconnect").options(**options).load()
    query = (
        stream.writeStream.format("eosconnect")
        .option("name", connector)
        .option("kafka.bootstrap.servers", bootstrap)
        .option("checkpointLocation", str(checkpoint))
        .trigger(processingTime="0 seconds")
        .start()
    )
    try:
        run_query(query, True, QUERY_TIMEOUT_S, threading.Event())
    finally:
        # The drain file stops every later query of this driver too: remove it.
        drain = os.environ.get(DRAIN_ENV)
        if drain:
            Path(drain).unlink(missing_ok=True)
    mode = EXACTLY_ONCE if exactly_once else AT_LEAST_ONCE
    return measure_progress(query.recentProgress, mode)


# -- the whole run ----------------------------------------------------------------------------


@dataclass
class BenchReport:
    """Results and verifications of one run."""

    config: BenchConfig
    results: list[ModeResult] = field(default_factory=list)
    verifications: list[Verification] = field(default_factory=list)

    def measured_mismatches(self) -> list[str]:
        """Modes whose measured batches did not carry exactly `records` records."""
        return [
            f"MISMATCH {r.mode}: measured {r.records:,} records, expected {self.config.records:,}"
            for r in self.results
            if r.records != self.config.records
        ]

    @property
    def ok(self) -> bool:
        """Whether every mode wrote exactly what it should have and measured all of it."""
        return (
            bool(self.verifications)
            and all(v.ok for v in self.verifications)
            and not self.measured_mismatches()
        )

    def render(self) -> str:
        """The table, how it was measured, and the verification lines."""
        c = self.config
        lines = [
            f"records={c.records:,} (+{c.warmup_per_task * c.tasks:,} warm-up per mode) "
            f"tasks={c.tasks} maxRecordsPerTrigger={c.per_trigger:,} value.size={c.value_size} "
            f"records.per.poll={c.records_per_poll:,} -> {c.task_batch:,} records per task per "
            f"batch, {len(c.measured_batches())} measured batches",
            "",
            format_table(self.results),
            "",
            "seconds: raw producer = sum over batches of (last task's commit - first task's "
            "begin_transaction), generator polling not timed; pipeline = sum of the query "
            "progress's durationMs.triggerExecution over the micro-batches with numInputRows > 0, "
            "micro-batch 0 (warm-up) excluded.",
        ]
        for result in self.results:
            if result.notes:
                phases = ", ".join(f"{k}={v:.2f}" for k, v in sorted(result.notes.items()))
                lines.append(f"{result.mode} phases (s): {phases}")
        lines.extend(v.describe() for v in self.verifications)
        lines.extend(self.measured_mismatches())
        return "\n".join(lines)


def _verify_logged(
    kafka: Mapping[str, Any], topic: str, mode: str, expected: int, log: Callable[[str], None]
) -> Verification:
    started = time.monotonic()
    verification = verify_topic(kafka, topic, mode, expected)
    log(f"{verification.describe()} (read in {time.monotonic() - started:.0f}s)")
    return verification


def run_bench(config: BenchConfig, log: Callable[[str], None] = print) -> BenchReport:
    """Start a local broker, run the three modes one after another, verify every topic."""
    from spark_eos_connect.kafka.broker import LocalKafkaBroker
    from spark_eos_connect.spark.drain import arm_drain_file

    arm_drain_file()  # before Spark starts: lets each query stop between two micro-batches
    report = BenchReport(config)
    started = time.monotonic()
    run_id = uuid.uuid4().hex[:8]
    checkpoints = Path(tempfile.mkdtemp(prefix="eosconnect-bench-"))
    try:
        with LocalKafkaBroker() as broker:
            bootstrap = broker.bootstrap_servers
            kafka = {"bootstrap.servers": bootstrap}
            log(f"local broker at {bootstrap}")
            admin = admin_client(kafka)
            ensure_offsets_topic(kafka, OFFSETS_TOPIC, OFFSETS_PARTITIONS)
            topics = {}
            for key in ("raw", "eos", "alos"):
                topics[key] = f"bench-{key}-{run_id}"
                ensure_topic(admin, topics[key], partitions=config.tasks)

            log(f"{RAW}: {config.tasks} processes ...")
            raw = run_raw_producer(kafka, config, f"bench-raw-{run_id}", topics["raw"])
            report.results.append(raw)
            report.verifications.append(
                _verify_logged(kafka, topics["raw"], RAW, config.expected_total, log)
            )

            from spark_eos_connect.spark.session import local_spark_session

            spark = local_spark_session(app_name="eosconnect-bench")
            try:
                for key, exactly_once in (("eos", True), ("alos", False)):
                    mode = EXACTLY_ONCE if exactly_once else AT_LEAST_ONCE
                    log(f"{mode} ...")
                    result = run_pipeline(
                        spark,
                        bootstrap,
                        config,
                        f"bench-{key}-{run_id}",
                        topics[key],
                        exactly_once,
                        checkpoints / key,
                    )
                    report.results.append(result)
                    report.verifications.append(
                        _verify_logged(kafka, topics[key], mode, config.expected_total, log)
                    )
            finally:
                spark.stop()
    finally:
        shutil.rmtree(checkpoints, ignore_errors=True)
    log(f"bench finished in {time.monotonic() - started:.0f}s")
    return report
