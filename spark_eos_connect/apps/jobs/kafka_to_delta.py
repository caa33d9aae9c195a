"""spark-submit job: Kafka topics into a Delta Lake table, exactly once (the DeltaSink connector).

    spark-submit jobs/kafka_to_delta.py --name orders-delta --topics orders \
        --path /data/orders --checkpoint /tmp/ck --until-idle

Each micro-batch is one Delta commit (txnAppId = --name, txnVersion = batch id) whose rows carry
their Kafka topic, partition and offset; records at or below the offsets the table holds are
never written again, so the job resumes correctly even when its checkpoint and its consumer group
are gone (it then starts after the table's offsets). `--reader kafka` reads with Spark's
built-in Kafka source, the faster reader, instead of the eosconnect reader. Without
--bootstrap-servers it starts an embedded local broker for the run. Each micro-batch prints
one line.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from spark_eos_connect.spark.drain import arm_drain_file
from spark_eos_connect.spark.job_support import (
    add_common_arguments,
    check_kafka,
    job_entry,
    job_session,
    kafka_for_job,
    key_value,
    options_dict,
    plan_job_session,
    quiet_kafka_logs,
    run_query,
    stop_on_sigterm,
)
from spark_eos_connect.testing.faults import install_from_environment

# argparse destination -> connector option (one-to-one)
OPTIONS = {
    "name": "name",
    "topics": "topics",
    "topics_regex": "topics.regex",
    "path": "path",
    "table": "table",
    "delta_mode": "delta.mode",
    "value_schema": "value.schema",
    "starting_offsets": "startingOffsets",
    "max_records_per_trigger": "maxRecordsPerTrigger",
    "errors_tolerance": "errors.tolerance",
    "errors_deadletterqueue_topic_name": "errors.deadletterqueue.topic.name",
    "errors_deadletterqueue_context_headers_enable": (
        "errors.deadletterqueue.context.headers.enable"
    ),
}

READERS = ("eosconnect", "kafka")

SESSION_CONF = {"spark.sql.streaming.noDataProgressEventInterval": "500ms"}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--name", required=True, help="option name: connector, Delta txnAppId")
    topics = parser.add_mutually_exclusive_group(required=True)
    topics.add_argument("--topics", help="option topics (comma-separated)")
    topics.add_argument("--topics-regex", help="option topics.regex")
    table = parser.add_mutually_exclusive_group(required=True)
    table.add_argument("--path", help="option path: the Delta table's location")
    table.add_argument("--table", help="option table: the Delta table's catalog name")
    parser.add_argument("--delta-mode", choices=["append", "upsert"], help="option delta.mode")
    parser.add_argument("--value-schema", help="option value.schema: DDL of JSON values")
    parser.add_argument(
        "--starting-offsets",
        help="option startingOffsets: earliest (default) or latest; used when neither the "
        "consumer group nor the table has offsets (partitions the table does not know then "
        "start at the earliest offset)",
    )
    parser.add_argument("--max-records-per-trigger", type=int, help="option maxRecordsPerTrigger")
    parser.add_argument(
        "--reader",
        choices=READERS,
        default="eosconnect",
        help="eosconnect (default: consumer group connect-<name>, the connector's lifecycle and "
        "REST API, any librdkafka setting) or kafka (Spark's built-in Kafka source, the faster "
        "reader; --kafka settings are translated to the Java client's names)",
    )
    parser.add_argument("--errors-tolerance", choices=["none", "all"], help="errors.tolerance")
    parser.add_argument(
        "--errors-deadletterqueue-topic-name", help="option errors.deadletterqueue.topic.name"
    )
    parser.add_argument(
        "--errors-deadletterqueue-context-headers-enable",
        choices=["true", "false"],
        help="option errors.deadletterqueue.context.headers.enable",
    )
    parser.add_argument(
        "--option",
        action="append",
        type=key_value,
        default=[],
        metavar="KEY=VALUE",
        help="any other connector or reader option (repeatable)",
    )
    add_common_arguments(parser)
    return parser.parse_args(argv)


def connector_options(args: argparse.Namespace, bootstrap: str) -> dict[str, str]:
    """The DeltaSink and reader options the arguments stand for."""
    options = {
        option: str(getattr(args, dest))
        for dest, option in OPTIONS.items()
        if getattr(args, dest) is not None
    }
    options.update(options_dict(args.option))
    options.update({"kafka.bootstrap.servers": bootstrap, **options_dict(args.kafka, "kafka.")})
    return options


def input_stream(spark: Any, reader: str, options: dict[str, str], resume: str | None) -> Any:
    """The rows for `delta_sink(options)`, read by `reader`, resuming at `resume` if given."""
    if reader == "kafka":
        from spark_eos_connect.delta.kafka_input import spark_kafka_stream

        return spark_kafka_stream(spark, options, resume)
    starting = {} if resume is None else {"startingOffsets": resume}
    return spark.readStream.format("eosconnect").options(**{**options, **starting}).load()


@job_entry
def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    install_from_environment()
    arm_drain_file()  # before Spark starts: SIGTERM then stops between two micro-batches
    from spark_eos_connect.delta import delta_sink, starting_offsets

    extra = {**SESSION_CONF, **options_dict(args.conf)}
    plan = plan_job_session(f"kafka_to_delta-{args.name}", args.master, extra)
    with kafka_for_job(args.bootstrap_servers, plan) as bootstrap:
        options = connector_options(args, bootstrap)
        if args.reader == "eosconnect":  # librdkafka's setting; Spark's reader is Java's client
            options = quiet_kafka_logs(options, args.verbose)
        check_kafka(options)
        spark = job_session(plan, args.verbose)
        sink = delta_sink(options)
        resume = starting_offsets(options, spark)
        if resume is not None:
            print(f"resuming after the table's offsets: {resume}", flush=True)
        stream = input_stream(spark, args.reader, options, resume)
        query = (
            stream.writeStream.foreachBatch(sink)
            .option("checkpointLocation", args.checkpoint)
            .trigger(processingTime=args.trigger_interval)
            .start()
        )
        run_query(query, args.until_idle, args.timeout, stop_on_sigterm(query), options)
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
