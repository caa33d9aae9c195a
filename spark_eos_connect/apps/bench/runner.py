"""One benchmark run: a local broker, the limits and the Connect worker first (no Spark), then
one Spark session for the eosconnect modes and Kafka -> Delta. Every process started here is
stopped before `run_bench` returns, whatever happens; a mode that fails is reported as FAILED
and the others still run."""

from __future__ import annotations

import shutil
import tempfile
import time
import uuid
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from typing import Any

from spark_eos_connect.apps.bench import (
    connect_peer,
    converters,
    first_record,
    kafka_delta,
    limit,
    pipeline,
    postgres,
    sink,
)
from spark_eos_connect.apps.bench.config import (
    AT_LEAST_ONCE,
    CONNECT,
    CONNECT_FIRST,
    CONVERTERS,
    DELTA,
    DELTA_WARMUP_RECORDS,
    EXACTLY_ONCE,
    FILE,
    FIRST_RECORD,
    GENERATOR,
    JAVA_FILE_SOURCE,
    JOB_FROM_NOTHING,
    LIMIT,
    POSTGRES,
    POSTGRES_CDC,
    QUERY_ON_SESSION,
    READER,
    SINK,
    SINK_TASKS,
    SPARK_FLOOR,
    BenchConfig,
    connect_sink,
    eosconnect_sink,
)
from spark_eos_connect.apps.bench.kafka_io import (
    Ident,
    produce_numbered,
    value_number,
    verify_file,
    verify_topic,
    write_lines,
)
from spark_eos_connect.apps.bench.report import BenchReport
from spark_eos_connect.apps.bench.results import ModeResult, Verification, failed
from spark_eos_connect.connectors.file_stream import FileStreamSourceConnector
from spark_eos_connect.connectors.generator import GeneratorSourceConnector, parse_generated_value

Log = Callable[[str], None]


def generated_id(value: bytes) -> tuple[int, int]:
    """(task, n) of a Generator record."""
    return parse_generated_value(value)


class Run:
    """The state of one run: broker address, topics, where results go."""

    def __init__(
        self, report: BenchReport, kafka: Mapping[str, Any], folder: Path, log: Log
    ) -> None:
        self.report = report
        self.config = report.config
        self.kafka = dict(kafka)
        self.folder = folder
        self.log = log
        self.run_id = uuid.uuid4().hex[:8]

    def topic(self, key: str, partitions: int) -> str:
        """A fresh topic of this run."""
        from spark_eos_connect.kafka.clients import admin_client, ensure_topic

        name = f"bench-{key}-{self.run_id}"
        ensure_topic(admin_client(self.kafka), name, partitions=partitions)
        return name

    def mode(
        self,
        work: str,
        mode: str,
        measure: Callable[[str], ModeResult],
        key: str,
        partitions: int,
        expected: int,
        ident: Ident,
    ) -> None:
        """Measure one Kafka-bound mode into a fresh topic and verify the topic by counting."""
        self.guarded(work, mode, lambda: self._measured(measure, key, partitions, expected, ident))

    def _measured(
        self,
        measure: Callable[[str], ModeResult],
        key: str,
        partitions: int,
        expected: int,
        ident: Ident,
    ) -> tuple[list[ModeResult], list[Verification]]:
        topic = self.topic(key, partitions)
        result = measure(topic)
        verification = verify_topic(
            self.kafka, topic, partitions, result.work, result.mode, expected, ident
        )
        return [result], [verification]

    def sink_mode(self, mode: str, measure: Callable[[Path], ModeResult]) -> None:
        """Measure one sink mode into a fresh file and verify the file's lines; the file is
        deleted afterwards (hundreds of MB)."""
        out = self.folder / f"sink-{uuid.uuid4().hex[:8]}.txt"

        def measured() -> tuple[list[ModeResult], list[Verification]]:
            try:
                result = measure(out)
                return [result], [verify_file(out, SINK, mode, self.config.sink_records)]
            finally:
                out.unlink(missing_ok=True)

        self.guarded(SINK, mode, measured)

    def guarded(
        self,
        work: str,
        mode: str,
        body: Callable[[], tuple[list[ModeResult], list[Verification]]],
    ) -> None:
        """Run `body`, log and keep its results; a failure becomes a FAILED line."""
        self.log(f"{work} / {mode} ...")
        started = time.monotonic()
        try:
            results, verifications = body()
        except Exception as error:  # one mode's failure must not hide the others' figures
            verification = failed(work, mode, error)
            self.report.verifications.append(verification)
            self.log(verification.describe())
            return
        for result in results:
            self.log(f"  {result.mode}: {result.records:,} records in {result.seconds:.2f}s")
        for verification in verifications:
            self.log(f"  {verification.describe()}")
        self.log(f"  ({time.monotonic() - started:.0f}s)")
        self.report.results.extend(results)
        self.report.verifications.extend(verifications)


def generator_props(config: BenchConfig, name: str, topic: str) -> dict[str, str]:
    """The Generator as the limit runs it: the pipeline's options without Spark's."""
    return {
        "name": name,
        "connector.class": "Generator",
        "tasks.max": str(config.tasks),
        "topic": topic,
        "value.size": str(config.value_size),
        "records.per.poll": str(config.records_per_poll),
        "max.records": str(config.task_total),
    }


def run_without_spark(run: Run, lines: Path | None, sink_topic: str | None) -> None:
    """The limits, the Connect worker's modes, and the jobs started from nothing."""
    c, rid = run.config, run.run_id
    if POSTGRES in c.works:
        run.guarded(
            POSTGRES, "PostgreSQL modes", partial(postgres.run_postgres, c, POSTGRES, run.log)
        )
    if GENERATOR in c.works:
        batches = [c.task_batch, *c.generator_batches()]
        run.mode(
            GENERATOR,
            LIMIT,
            lambda topic: limit.run_limit(
                run.kafka,
                GENERATOR,
                GeneratorSourceConnector(),
                generator_props(c, f"bench-limit-gen-{rid}", topic),
                c.tasks,
                batches,
                warmup=1,
            ),
            "limit-gen",
            c.tasks,
            c.generator_total,
            generated_id,
        )
    if FILE in c.works and lines is not None:
        run.mode(
            FILE,
            LIMIT,
            lambda topic: limit.run_limit(
                run.kafka,
                FILE,
                FileStreamSourceConnector(),
                {
                    "name": f"bench-limit-file-{rid}",
                    "file": str(lines),
                    "topic": topic,
                    "batch.size": str(c.file_batch_size),
                },
                1,
                c.file_batches(),
            ),
            "limit-file",
            1,
            c.file_records,
            value_number,
        )
    if {FILE, SINK, FIRST_RECORD} & set(c.works):
        run_connect_modes(run, lines, sink_topic)
    if FIRST_RECORD in c.works and lines is not None:
        modes = f"{JOB_FROM_NOTHING}, {SPARK_FLOOR}"
        run.guarded(FIRST_RECORD, modes, partial(from_nothing, run, lines))


def from_nothing(run: Run, lines: Path) -> tuple[list[ModeResult], list[Verification]]:
    """`jobs/source_to_kafka.py` and Spark's one-row floor job started from nothing, in turn,
    `first_record_runs` times each."""
    runs = source_runs(run, lines, "first-job")
    return first_record.run_from_nothing(runs, run.folder / "spark-floor"), []


def query_on_session(
    run: Run, spark: Any, lines: Path
) -> tuple[list[ModeResult], list[Verification]]:
    """The job's query started on the bench's session, `first_record_runs` times."""
    runs = source_runs(run, lines, "first-query")
    return [first_record.run_query_on_session(spark, runs)], []


def source_runs(run: Run, lines: Path, key: str) -> first_record.SourceRuns:
    """The first-record runs' settings: one-partition topics, the bench's file and batch."""
    return first_record.SourceRuns(
        kafka=run.kafka,
        lines=lines,
        topic=lambda name: run.topic(name, 1),
        runs=run.config.first_record_runs,
        batch_size=run.config.file_batch_size,
        folder=run.folder / key,
        name=f"bench-{key}-{run.run_id}",
        log=run.log,
    )


def run_connect_modes(run: Run, lines: Path | None, sink_topic: str | None) -> None:
    """The Kafka Connect modes, on one worker started for them: its first records (on the
    worker just up), FileStreamSource on the file, FileStreamSinkConnector with each of
    `SINK_TASKS` tasks."""
    c, rid = run.config, run.run_id
    name = f"bench-connect-{rid}"
    with connect_peer.running_worker(run.kafka, name, run.folder / "connect") as (
        worker,
        startup_s,
    ):
        run.log(f"Kafka Connect worker {worker.url} up in {startup_s:.1f}s (log {worker.log_path})")
        if FIRST_RECORD in c.works and lines is not None:

            def first() -> tuple[list[ModeResult], list[Verification]]:
                seconds = connect_peer.first_record(
                    worker,
                    run.kafka,
                    lines,
                    lambda key: run.topic(key, 1),
                    c.first_record_runs,
                    c.file_batch_size,
                    name,
                )
                result = first_record.first_record_result(
                    CONNECT_FIRST,
                    seconds,
                    "from PUT /connectors/NAME/config (FileStreamSourceConnector, exactly once) "
                    "on a running worker until its first record is visible read_committed",
                    f"the worker itself took {startup_s:.1f}s to start (JVM start until its "
                    "REST API answers)",
                )
                return [result], []

            run.guarded(FIRST_RECORD, CONNECT_FIRST, first)
        if FILE in c.works and lines is not None:
            run.mode(
                FILE,
                CONNECT,
                lambda topic: connect_peer.run_connect(
                    worker,
                    run.kafka,
                    FILE,
                    lines,
                    topic,
                    c.file_records,
                    c.file_batch_size,
                    f"{name}-file",
                ),
                "connect",
                1,
                c.file_records,
                value_number,
            )
        if SINK in c.works and sink_topic is not None:
            for tasks in SINK_TASKS:
                measure = partial(
                    connect_peer.run_file_sink,
                    worker, SINK, sink_topic, c.sink_records, tasks, f"{name}-sink-{tasks}",
                )  # fmt: skip
                run.sink_mode(connect_sink(tasks), measure)


def generator_measure(
    spark: Any, config: BenchConfig, name: str, bootstrap: str, exactly_once: bool, ck: Path
) -> Callable[[str], ModeResult]:
    """The Generator query of one mode, given its topic."""

    def measure(topic: str) -> ModeResult:
        return pipeline.run_generator(
            spark, config, GENERATOR, name, topic, bootstrap, exactly_once, ck
        )

    return measure


def run_with_spark(run: Run, spark: Any, lines: Path | None, sink_topic: str | None) -> None:
    """The eosconnect modes and Kafka -> Delta, in one session: first the job's query on the
    session just up (as Connect's first records are timed on its worker just up), then the
    generator modes, so that the file mode, timed from its start like the Connect worker's
    connector, starts in a session whose Python workers are up, as the Connect worker's JVM
    is."""
    c, rid, bootstrap = run.config, run.run_id, run.kafka["bootstrap.servers"]
    checkpoints = run.folder / "checkpoints"
    if FIRST_RECORD in c.works and lines is not None:  # first, as Connect's on its worker just up
        run.guarded(FIRST_RECORD, QUERY_ON_SESSION, partial(query_on_session, run, spark, lines))
    if GENERATOR in c.works:
        for key, exactly_once in (("eos", True), ("alos", False)):
            run.mode(
                GENERATOR,
                EXACTLY_ONCE if exactly_once else AT_LEAST_ONCE,
                generator_measure(
                    spark, c, f"bench-{key}-{rid}", bootstrap, exactly_once, checkpoints / key
                ),
                f"gen-{key}",
                c.tasks,
                c.generator_total,
                generated_id,
            )
    if FILE in c.works and lines is not None:
        for key, mode, java in (("eos", EXACTLY_ONCE, False), ("java", JAVA_FILE_SOURCE, True)):
            measure = partial(
                pipeline.run_file,
                spark, c, FILE, f"bench-file-{key}-{rid}", lines,
                kafka=run.kafka, checkpoint=checkpoints / f"file-{key}", java=java,
            )  # fmt: skip
            run.mode(FILE, mode, measure, f"file-{key}", 1, c.file_records, value_number)
    if DELTA in c.works:

        def delta() -> tuple[list[ModeResult], list[Verification]]:
            small = min(c.records, DELTA_WARMUP_RECORDS)
            topics = (
                run.topic("delta-warmup", c.delta_partitions),
                run.topic("delta", c.delta_partitions),
            )
            for topic, count in zip(topics, (small, c.records), strict=True):
                produce_numbered(run.kafka, topic, count, c.value_size, c.delta_partitions)
            return kafka_delta.run_kafka_delta(
                spark, c, DELTA, run.kafka, topics, small, run.folder / "delta", rid, run.log
            )

        run.guarded(DELTA, "Spark Kafka source, delta_sink, eosconnect reader", delta)
    if SINK in c.works and sink_topic is not None:
        for tasks in SINK_TASKS:
            measure = partial(
                sink.run_sink,
                spark, c, SINK, f"bench-sink-{rid}-{tasks}", sink_topic, bootstrap, tasks,
                checkpoints / f"sink-{tasks}",
            )  # fmt: skip
            run.sink_mode(eosconnect_sink(tasks), measure)
    if POSTGRES_CDC in c.works:
        from spark_eos_connect.apps.bench.postgres_cdc import run_postgres_cdc
        from spark_eos_connect.apps.bench.postgres_cdc_peer import run_side_by_side

        cdc = partial(run_postgres_cdc, spark, c.records, c.value_size, run.kafka)
        run.guarded(POSTGRES_CDC, "slot alone, eosconnect exactly-once", cdc)
        peer = partial(
            run_side_by_side,
            spark, c.records, c.value_size, run.kafka, run.folder / "cdc-peer", run.log,
        )  # fmt: skip
        run.guarded(POSTGRES_CDC, "eosconnect and Debezium: snapshot, streaming", peer)
    if READER in c.works and sink_topic is not None:

        def readers() -> tuple[list[ModeResult], list[Verification]]:
            small = min(c.sink_records, DELTA_WARMUP_RECORDS)
            warmup = run.topic("noop-warmup", c.sink_partitions)
            produce_numbered(run.kafka, warmup, small, c.value_size, c.sink_partitions)
            return sink.run_readers(
                spark,
                c,
                READER,
                run.kafka,
                (warmup, sink_topic),
                small,
                run.folder / "noop",
                run.log,
            )

        run.guarded(READER, "Spark Kafka source, eosconnect reader", readers)


def sink_input(run: Run) -> str | None:
    """The topic the sinks and the readers into `noop` read (None when neither runs)."""
    c = run.config
    if not {SINK, READER} & set(c.works):
        return None
    started = time.monotonic()
    topic = run.topic("sink", c.sink_partitions)
    produce_numbered(run.kafka, topic, c.sink_records, c.value_size, c.sink_partitions)
    run.log(f"sink topic {topic}: {c.sink_records:,} records in {time.monotonic() - started:.0f}s")
    return topic


def bench_session(config: BenchConfig) -> Any:
    """The local session of the eosconnect modes (with Delta and Spark's Kafka source)."""
    from spark_eos_connect.spark.session import local_spark_session

    return local_spark_session(app_name="eosconnect-bench")


def run_bench(config: BenchConfig, log: Log = print) -> BenchReport:
    """Start a local broker, run every selected work, verify each mode, stop everything."""
    from spark_eos_connect.jvm.broker import LocalKafkaBroker
    from spark_eos_connect.jvm.jars import ensure_jars
    from spark_eos_connect.spark.drain import arm_drain_file

    started = time.monotonic()
    report = BenchReport(config)
    folder = Path(tempfile.mkdtemp(prefix="eosconnect-bench-"))
    try:
        if {FILE, SINK, FIRST_RECORD} & set(config.works):
            log(f"Kafka Connect jars: {ensure_jars('connect')}")  # Maven, first run only
        if {DELTA, READER} & set(config.works):
            log(f"Spark Kafka source jars: {ensure_jars('spark-kafka')}")
        if CONVERTERS in config.works:  # no Kafka, no Spark
            modes = "AvroConverter and JsonConverter, source and sink paths"
            count = min(config.records, converters.MAX_RECORDS)
            converter_work = partial(converters.run_converters, count)
            Run(report, {}, folder, log).guarded(CONVERTERS, modes, converter_work)
            if set(config.works) == {CONVERTERS}:
                report.seconds = time.monotonic() - started
                return report
        arm_drain_file()  # before Spark starts: lets each query stop between two micro-batches
        with LocalKafkaBroker() as broker:
            run = Run(report, {"bootstrap.servers": broker.bootstrap_servers}, folder, log)
            log(f"local broker at {broker.bootstrap_servers}")
            lines = None
            if {FILE, FIRST_RECORD} & set(config.works):
                count = config.file_records if FILE in config.works else config.records
                lines = write_lines(folder / "lines.txt", count, config.value_size)
            sink_topic = sink_input(run)
            run_without_spark(run, lines, sink_topic)
            spark = bench_session(config)
            try:
                run_with_spark(run, spark, lines, sink_topic)
            finally:
                spark.stop()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    report.seconds = time.monotonic() - started
    return report
