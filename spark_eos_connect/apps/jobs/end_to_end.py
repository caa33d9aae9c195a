"""spark-submit job: generator source -> Kafka -> Delta Lake, exactly once end to end.

    spark-submit jobs/end_to_end.py

With no arguments it starts an embedded local broker, streams the deterministic generator
connector into a Kafka topic (records and source offsets in one transaction per task), streams
that topic into a Delta table (DeltaSink: idempotent commits, offsets kept in the table), then
counts the table's rows against the generated records and prints one verification line.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from spark_eos_connect.connectors.generator import parse_generated_value
from spark_eos_connect.kafka.clients import admin_client, ensure_topic
from spark_eos_connect.spark.drain import arm_drain_file
from spark_eos_connect.spark.job_support import (
    add_session_arguments,
    check_kafka,
    job_entry,
    job_kafka_client,
    job_session,
    kafka_for_job,
    key_value,
    options_dict,
    plan_job_session,
    run_query,
    stop_on_sigterm,
)
from spark_eos_connect.testing.faults import install_from_environment


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bootstrap-servers", help="default: an embedded local broker")
    parser.add_argument("--name", default="end-to-end", help="prefix of connector names")
    parser.add_argument("--topic", default="end-to-end-events", help="the Kafka topic")
    parser.add_argument("--tasks", type=int, default=2, help="source option tasks.max")
    parser.add_argument(
        "--records-per-task", type=int, default=20000, help="source option max.records"
    )
    parser.add_argument("--work-dir", type=Path, help="checkpoints and table (default: temp)")
    add_session_arguments(parser)
    for flag, what in (
        ("--source-option", "any other Generator source option"),
        ("--sink-option", "any other DeltaSink or Kafka reader option"),
        ("--kafka", "Kafka client setting, passed to both stages as option kafka.KEY"),
        ("--conf", "Spark configuration for the job's session"),
    ):
        parser.add_argument(
            flag,
            action="append",
            type=key_value,
            default=[],
            metavar="KEY=VALUE",
            help=f"{what} (repeatable)",
        )
    return parser.parse_args(argv)


def source_options(args: argparse.Namespace, bootstrap: str) -> dict[str, str]:
    """The generator source stage's options."""
    return {
        "name": f"{args.name}-source",
        "connector.class": "Generator",
        "topic": args.topic,
        "tasks.max": str(args.tasks),
        "max.records": str(args.records_per_task),
        **options_dict(args.source_option),
        **kafka_options(args, bootstrap),
    }


def sink_options(args: argparse.Namespace, bootstrap: str, work: Path) -> dict[str, str]:
    """The Delta stage's options."""
    return {
        "name": f"{args.name}-delta",
        "topics": args.topic,
        "path": str(work / "table"),
        **options_dict(args.sink_option),
        **kafka_options(args, bootstrap),
    }


def kafka_options(args: argparse.Namespace, bootstrap: str) -> dict[str, str]:
    """`kafka.bootstrap.servers` and the `--kafka` settings."""
    return {"kafka.bootstrap.servers": bootstrap, **options_dict(args.kafka, "kafka.")}


def stopped_by_signal(spark: Any) -> int:
    """SIGTERM/SIGINT: the query stopped between micro-batches; nothing left to verify."""
    spark.stop()
    print("stopped by signal between micro-batches; verification skipped", flush=True)
    return 0


@job_entry
def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    install_from_environment()
    arm_drain_file()
    from spark_eos_connect.delta import delta_sink

    work = args.work_dir or Path(tempfile.mkdtemp(prefix="eosconnect-e2e-"))
    plan = plan_job_session("end_to_end", args.master, options_dict(args.conf))
    with kafka_for_job(args.bootstrap_servers, plan) as bootstrap:
        source = source_options(args, bootstrap)
        check_kafka(source)
        ensure_topic(admin_client(job_kafka_client(source)), args.topic, partitions=2)
        spark = job_session(plan, args.verbose)
        records = spark.readStream.format("eosconnect").options(**source).load()
        to_kafka = (
            records.writeStream.format("eosconnect")
            .options(**source)
            .option("checkpointLocation", str(work / "source-checkpoint"))
            .start()
        )
        if not run_query(to_kafka, True, None, stop_on_sigterm(to_kafka)):
            return stopped_by_signal(spark)

        sink = sink_options(args, bootstrap, work)
        events = spark.readStream.format("eosconnect").options(**sink).load()
        to_delta = (
            events.writeStream.foreachBatch(delta_sink(sink))
            .option("checkpointLocation", str(work / "delta-checkpoint"))
            .start()
        )
        if not run_query(to_delta, True, None, stop_on_sigterm(to_delta)):
            return stopped_by_signal(spark)

        values = [r.value for r in spark.read.format("delta").load(str(work / "table")).collect()]
        spark.stop()
    counts = Counter(parse_generated_value(value) for value in values)
    expected = {(t, n) for t in range(args.tasks) for n in range(args.records_per_task)}
    duplicates = sum(count - 1 for count in counts.values() if count > 1)
    missing = len(expected - set(counts))
    print(
        f"verification: source records {len(expected)}, Delta rows {len(values)}, "
        f"duplicates {duplicates}, missing {missing}",
        flush=True,
    )
    return 0 if duplicates == 0 and missing == 0 and len(values) == len(expected) else 1


if __name__ == "__main__":
    sys.exit(main())
