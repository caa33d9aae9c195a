"""spark-submit job: a Connect-style source connector into Kafka, exactly once (KIP-618).

    spark-submit jobs/source_to_kafka.py --name gen --connector-class Generator \
        --option topic=events --checkpoint /tmp/ck --until-idle

Without --bootstrap-servers it starts an embedded local broker for the run. Each micro-batch
prints one line: records, transactions and offsets committed.
"""

from __future__ import annotations

import argparse
import sys

from spark_eos_connect.spark.drain import arm_drain_file
from spark_eos_connect.spark.job_support import (
    add_common_arguments,
    check_kafka,
    job_entry,
    job_kafka_client,
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


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--name", required=True, help="connector name (option name)")
    parser.add_argument("--connector-class", required=True, help="option connector.class")
    parser.add_argument("--tasks-max", type=int, default=1, help="option tasks.max")
    parser.add_argument(
        "--exactly-once-source-support",
        default="enabled",
        choices=["enabled", "preparing", "disabled"],
        help="option exactly.once.source.support",
    )
    parser.add_argument(
        "--transaction-boundary",
        default="poll",
        choices=["poll", "interval", "connector"],
        help="option transaction.boundary",
    )
    parser.add_argument(
        "--max-records-per-trigger", type=int, default=100000, help="option maxRecordsPerTrigger"
    )
    parser.add_argument(
        "--option",
        action="append",
        type=key_value,
        default=[],
        metavar="KEY=VALUE",
        help="any other connector or framework option (repeatable)",
    )
    add_common_arguments(parser)
    return parser.parse_args(argv)


ABORT_CHECK_TIMEOUT_S = 10.0
"""How long the job's last step waits for the brokers before aborting open transactions."""


def abort_open_transactions(client: dict[str, str], options: dict[str, str]) -> None:
    """Fence every task's transactional id, which aborts whatever transaction is still open
    (`client`: the resolved settings `job_kafka_client(options)` returns)."""
    from spark_eos_connect.kafka.clients import KafkaTimeoutError, ensure_reachable
    from spark_eos_connect.kafka.producers import fence_transactional_id
    from spark_eos_connect.kafka.security import (
        KafkaAuthenticationError,
        authenticates,
        verify_credentials,
    )
    from spark_eos_connect.source.config import parse_source_pipeline

    config = parse_source_pipeline(options)
    if not config.exactly_once:
        return
    try:  # a refused login or an unreachable cluster: nothing to abort with, say so once
        if authenticates(client):
            verify_credentials(client, ABORT_CHECK_TIMEOUT_S)
        else:
            ensure_reachable(client, ABORT_CHECK_TIMEOUT_S)
    except (KafkaAuthenticationError, KafkaTimeoutError) as error:
        print(
            f"open transactions not aborted (the brokers abort them after "
            f"transaction.timeout.ms): {error}",
            file=sys.stderr,
            flush=True,
        )
        return
    for task in range(config.tasks_max):
        fence_transactional_id(client, config.task_transactional_id(task))


def source_options(args: argparse.Namespace, kafka: dict[str, str]) -> dict[str, str]:
    """The source stream's options: the connector's, the framework's and `kafka`'s."""
    return {
        "name": args.name,
        "connector.class": args.connector_class,
        "tasks.max": str(args.tasks_max),
        "exactly.once.source.support": args.exactly_once_source_support,
        "transaction.boundary": args.transaction_boundary,
        "maxRecordsPerTrigger": str(args.max_records_per_trigger),
        **options_dict(args.option),
        **kafka,
    }


@job_entry
def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    install_from_environment()
    arm_drain_file()
    plan = plan_job_session(
        f"source_to_kafka-{args.name}", args.master, options_dict(args.conf), delta=False
    )
    with kafka_for_job(args.bootstrap_servers, plan) as bootstrap:
        kafka = {"kafka.bootstrap.servers": bootstrap, **options_dict(args.kafka, "kafka.")}
        kafka = quiet_kafka_logs(kafka, args.verbose)
        options = source_options(args, kafka)
        client = job_kafka_client(options)  # a bad reference fails here, before any write
        check_kafka(options)
        spark = job_session(plan, args.verbose)
        stream = spark.readStream.format("eosconnect").options(**options).load()
        query = (
            stream.writeStream.format("eosconnect")
            .options(name=args.name, **kafka)
            .option("checkpointLocation", args.checkpoint)
            .trigger(processingTime=args.trigger_interval)
            .start()
        )
        try:
            run_query(query, args.until_idle, args.timeout, stop_on_sigterm(query), options)
        finally:
            # A batch interrupted by the stop may have left a transaction open: abort it now
            # rather than when the broker's transaction timeout expires.
            abort_open_transactions(client, options)
            spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
