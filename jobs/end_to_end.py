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

from spark_eos_connect.connectors.generator import parse_generated_value
from spark_eos_connect.kafka.clients import admin_client, ensure_topic
from spark_eos_connect.runtime.faults import arm_driver_group
from spark_eos_connect.spark.drain import arm_drain_file
from spark_eos_connect.spark.jobs import kafka_for_job, run_query, stop_on_sigterm


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bootstrap-servers", help="default: an embedded local broker")
    parser.add_argument("--name", default="end-to-end", help="prefix of connector names")
    parser.add_argument("--topic", default="end-to-end-events", help="the Kafka topic")
    parser.add_argument("--tasks", type=int, default=2, help="source tasks.max")
    parser.add_argument("--records-per-task", type=int, default=20000, help="generator records")
    parser.add_argument("--work-dir", type=Path, help="checkpoints and table (default: temp)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    arm_driver_group()
    arm_drain_file()
    from spark_eos_connect.spark.delta import delta_sink
    from spark_eos_connect.spark.session import local_spark_session

    work = args.work_dir or Path(tempfile.mkdtemp(prefix="eosconnect-e2e-"))
    with kafka_for_job(args.bootstrap_servers) as bootstrap:
        kafka = {"kafka.bootstrap.servers": bootstrap}
        ensure_topic(admin_client({"bootstrap.servers": bootstrap}), args.topic, partitions=2)
        spark = local_spark_session(app_name="end_to_end")
        source_name = f"{args.name}-source"
        records = (
            spark.readStream.format("eosconnect")
            .options(name=source_name, topic=args.topic, **kafka)
            .option("connector.class", "Generator")
            .option("tasks.max", str(args.tasks))
            .option("max.records", str(args.records_per_task))
            .load()
        )
        to_kafka = (
            records.writeStream.format("eosconnect")
            .options(name=source_name, **kafka)
            .option("checkpointLocation", str(work / "source-checkpoint"))
            .start()
        )
        run_query(to_kafka, True, None, stop_on_sigterm(to_kafka))

        sink_options = {
            "name": f"{args.name}-delta",
            "topics": args.topic,
            "path": str(work / "table"),
            **kafka,
        }
        events = spark.readStream.format("eosconnect").options(**sink_options).load()
        to_delta = (
            events.writeStream.foreachBatch(delta_sink(sink_options))
            .option("checkpointLocation", str(work / "delta-checkpoint"))
            .start()
        )
        run_query(to_delta, True, None, stop_on_sigterm(to_delta))

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
