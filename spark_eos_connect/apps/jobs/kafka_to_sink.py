"""spark-submit job: Kafka topics into a sink connector, as a Kafka Connect sink worker runs it.

    spark-submit jobs/kafka_to_sink.py --name orders-file --connector-class FileStreamSink \
        --topics orders --option file=/data/orders.txt --checkpoint /tmp/ck --until-idle

The eosconnect reader reads the topics (read_committed) from consumer group `connect-<name>`'s
offsets; each micro-batch goes to the connector's tasks (`put`, `flush`/`pre_commit`) and the
offsets `pre_commit` returns are committed to the group, so a restarted job, with or without
its checkpoint, goes on from there. The connector is registered in the config topic, so the
REST API and CLI can stop it and move its offsets. Without --bootstrap-servers it starts an
embedded local broker for the run. Each micro-batch prints one line.
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

# argparse destination -> connector or reader option (one-to-one)
OPTIONS = {
    "name": "name",
    "connector_class": "connector.class",
    "tasks_max": "tasks.max",
    "topics": "topics",
    "topics_regex": "topics.regex",
    "starting_offsets": "startingOffsets",
    "max_records_per_trigger": "maxRecordsPerTrigger",
}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--name", required=True, help="connector name (option name)")
    parser.add_argument("--connector-class", required=True, help="option connector.class")
    parser.add_argument("--tasks-max", type=int, help="option tasks.max")
    topics = parser.add_mutually_exclusive_group(required=True)
    topics.add_argument("--topics", help="option topics (comma-separated)")
    topics.add_argument("--topics-regex", help="option topics.regex")
    parser.add_argument(
        "--starting-offsets",
        help="option startingOffsets: earliest (default) or latest, where the consumer group "
        "has no offsets",
    )
    parser.add_argument("--max-records-per-trigger", type=int, help="option maxRecordsPerTrigger")
    parser.add_argument(
        "--option",
        action="append",
        type=key_value,
        default=[],
        metavar="KEY=VALUE",
        help="any other connector, framework or reader option (repeatable)",
    )
    add_common_arguments(parser)
    return parser.parse_args(argv)


def connector_options(args: argparse.Namespace, bootstrap: str) -> dict[str, str]:
    """The sink connector and reader options the arguments stand for."""
    options = {
        option: str(getattr(args, dest))
        for dest, option in OPTIONS.items()
        if getattr(args, dest) is not None
    }
    options.update(options_dict(args.option))
    options.update({"kafka.bootstrap.servers": bootstrap, **options_dict(args.kafka, "kafka.")})
    return options


def sink_query(spark: Any, options: dict[str, str], checkpoint: str, trigger: str) -> Any:
    """The eosconnect reader's rows into the eosconnect sink writer, same options for both."""
    return (
        spark.readStream.format("eosconnect")
        .options(**options)
        .load()
        .writeStream.format("eosconnect")
        .options(**options)
        .option("checkpointLocation", checkpoint)
        .trigger(processingTime=trigger)
        .start()
    )


@job_entry
def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    install_from_environment()
    arm_drain_file()  # before Spark starts: SIGTERM then stops between two micro-batches
    plan = plan_job_session(
        f"kafka_to_sink-{args.name}", args.master, options_dict(args.conf), delta=False
    )
    with kafka_for_job(args.bootstrap_servers, plan) as bootstrap:
        options = quiet_kafka_logs(connector_options(args, bootstrap), args.verbose)
        check_kafka(options)
        spark = job_session(plan, args.verbose)
        query = sink_query(spark, options, args.checkpoint, args.trigger_interval)
        run_query(query, args.until_idle, args.timeout, stop_on_sigterm(query), options)
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
