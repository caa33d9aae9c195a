"""`make demo`: the exactly-once source pipeline on an embedded local broker, crashed and resumed.

1. Start a local Kafka broker.
2. Stream the deterministic generator connector (2 tasks) into a Kafka topic with the
   source_to_kafka job, and kill the whole job with SIGKILL right after a transaction commit,
   before Spark records the micro-batch: the worst moment for duplicates.
3. Restart the job; it resumes from the offsets committed in Kafka and stops when idle.
4. Read the topic back with read_committed and count duplicates and missing records.
5. Stream the topic into a Delta table with the kafka_to_delta job (the DeltaSink: offsets kept
   in the table, idempotent commits), killed with SIGKILL before its group commit once, resumed,
   and count the table's rows the same way: source -> Kafka -> Delta, exactly once end to end.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from spark_eos_connect.connectors.generator import parse_generated_value
from spark_eos_connect.kafka.broker import LocalKafkaBroker
from spark_eos_connect.kafka.clients import admin_client, ensure_topic, read_to_end

TASKS = 2
RECORDS_PER_TASK = 50_000


def run_pipeline(bootstrap: str, topic: str, checkpoint: Path, fault: str | None) -> int:
    env = dict(os.environ)
    if fault:
        env["EOSCONNECT_FAULT"] = fault
    command = [
        sys.executable,
        "-m",
        "spark_eos_connect.apps.jobs.source_to_kafka",
        "--name",
        "demo-generator",
        "--connector-class",
        "Generator",
        "--tasks-max",
        str(TASKS),
        "--max-records-per-trigger",
        "40000",
        "--option",
        f"topic={topic}",
        "--option",
        f"max.records={RECORDS_PER_TASK}",
        "--bootstrap-servers",
        bootstrap,
        "--checkpoint",
        str(checkpoint),
        "--until-idle",
    ]
    return subprocess.run(command, env=env, start_new_session=True, check=False).returncode


def run_delta_job(bootstrap: str, topic: str, work: Path, fault: str | None) -> int:
    env = dict(os.environ)
    if fault:
        env["EOSCONNECT_FAULT"] = fault
    command = [
        sys.executable,
        "-m",
        "spark_eos_connect.apps.jobs.kafka_to_delta",
        "--name",
        "demo-delta",
        "--topics",
        topic,
        "--path",
        str(work / "table"),
        "--max-records-per-trigger",
        "40000",
        "--bootstrap-servers",
        bootstrap,
        "--checkpoint",
        str(work / "delta-checkpoint"),
        "--until-idle",
    ]
    return subprocess.run(command, env=env, start_new_session=True, check=False).returncode


def count_delta(table: Path, expected: set[tuple[int, int]]) -> tuple[int, int, int]:
    """(rows, duplicates, missing) of the generated records in the Delta table."""
    from spark_eos_connect.spark.session import local_spark_session

    spark = local_spark_session(app_name="eosconnect-demo-verify")
    values = [
        row.value for row in spark.read.format("delta").load(str(table)).select("value").collect()
    ]
    spark.stop()
    counts = Counter(parse_generated_value(v) for v in values)
    duplicates = sum(count - 1 for count in counts.values() if count > 1)
    return len(values), duplicates, len(expected - set(counts))


def main() -> int:
    work = Path(tempfile.mkdtemp(prefix="eosconnect-demo-"))
    with LocalKafkaBroker(data_dir=work / "kafka") as broker:
        bootstrap = broker.bootstrap_servers
        config = {"bootstrap.servers": bootstrap}
        print(f"== local broker: bootstrap.servers={bootstrap}", flush=True)
        topic = "demo-events"
        ensure_topic(admin_client(config), topic, partitions=2)

        print(
            "== run 1: generator -> Kafka, killed with SIGKILL after batch 1's commit", flush=True
        )
        code = run_pipeline(bootstrap, topic, work / "checkpoint", fault="after_commit@1")
        so_far = len(read_to_end(config, [topic]))
        print(f"   run 1 exited with {code} (-9 = SIGKILL); {so_far} records committed so far")

        print("== run 2: restart; resumes from the offsets committed in Kafka", flush=True)
        code = run_pipeline(bootstrap, topic, work / "checkpoint", fault=None)
        if code != 0:
            print(f"run 2 failed with exit code {code}", file=sys.stderr)
            return 1

        counts = Counter(
            parse_generated_value(r.value or b"") for r in read_to_end(config, [topic])
        )
        expected = {(task, n) for task in range(TASKS) for n in range(RECORDS_PER_TASK)}
        duplicates = sum(count - 1 for count in counts.values() if count > 1)
        missing = len(expected - set(counts))
        print(
            f"== verification (read_committed): produced {len(expected)}, "
            f"read back {sum(counts.values())}, duplicates {duplicates}, missing {missing}"
        )
        if duplicates or missing:
            return 1

        print("== Kafka -> Delta: killed with SIGKILL before batch 1's group commit", flush=True)
        code = run_delta_job(bootstrap, topic, work, fault="before_group_commit@1")
        print(f"   run 1 exited with {code} (-9 = SIGKILL)")
        code = run_delta_job(bootstrap, topic, work, fault=None)
        if code != 0:
            print(f"the Delta job failed with exit code {code}", file=sys.stderr)
            return 1
        rows, duplicates, missing = count_delta(work / "table", expected)
        print(
            f"== verification (Delta table {work / 'table'}): committed source records "
            f"{len(expected)}, rows {rows}, duplicates {duplicates}, missing {missing}"
        )
        return 0 if duplicates == 0 and missing == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
