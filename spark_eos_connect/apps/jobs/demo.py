"""`make demo`: the exactly-once source pipeline on an embedded local broker, crashed and resumed.

1. Start a local Kafka broker (or use `--bootstrap-servers`).
2. Stream the deterministic generator connector (2 tasks) into a Kafka topic with the
   source_to_kafka job, and kill the whole job with SIGKILL right after a transaction commit,
   before Spark records the micro-batch: the worst moment for duplicates.
3. Restart the job; it resumes from the offsets committed in Kafka (one line says which) and
   stops when idle.
4. Read the topic back with read_committed and count duplicates and missing records.
5. Stream the topic into a Delta table with the kafka_to_delta job (the DeltaSink: offsets kept
   in the table, idempotent commits), killed with SIGKILL before its group commit once, resumed,
   and count the table's rows the same way: source -> Kafka -> Delta, exactly once end to end.

Progress goes to stdout, one line per step and per micro-batch; what Spark, the JVM and the
Kafka clients log goes to the log file the first line names. The last line says what was
verified.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from spark_eos_connect.connectors.generator import parse_generated_value
from spark_eos_connect.jvm.broker import LocalKafkaBroker
from spark_eos_connect.kafka.clients import admin_client, ensure_topic, read_to_end
from spark_eos_connect.protocol.offsets_format import decode_offset_key, decode_offset_value
from spark_eos_connect.runtime import commit_hooks
from spark_eos_connect.spark.session import JOB_LOG_DIR_ENV

TASKS = 2
RECORDS_PER_TASK = 50_000
PROGRESS = re.compile(r"^batch \d+: ")
"""A micro-batch's progress line, as the jobs print it."""
OFFSETS_TOPIC = "eosconnect-offsets"
"""The worker's offsets topic (the jobs' default `offset.storage.topic`)."""
FAULT_ENV = "EOSCONNECT_FAULT"
"""Where a job's crash point is armed (`point@batch`)."""
FAULT_HOOKS = "spark_eos_connect.testing.faults.EnvironmentFaults"
"""The commit hooks that read `EOSCONNECT_FAULT`, named (not imported) for the job to install."""


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records-per-task", type=int, default=RECORDS_PER_TASK)
    parser.add_argument(
        "--bootstrap-servers", help="a running broker to use instead of starting a local one"
    )
    parser.add_argument("--prefix", default="demo", help="of the topic and connector names")
    parser.add_argument("--work", type=Path, help="folder for checkpoints, table and log")
    return parser.parse_args(argv)


class Demo:
    """One demo run: its names, folder, log file and the broker it talks to."""

    def __init__(self, args: argparse.Namespace, bootstrap: str, work: Path, log: IO[str]):
        self.bootstrap = bootstrap
        self.config = {"bootstrap.servers": bootstrap}
        self.work = work
        self.log = log
        self.log_dir = work / "job-logs"
        self.topic = f"{args.prefix}-events"
        self.generator = f"{args.prefix}-generator"
        self.delta = f"{args.prefix}-delta"
        self.per_task = args.records_per_task
        self.per_trigger = max(1, TASKS * self.per_task * 2 // 5)  # 2 full batches, then 1

    def job(self, module: str, arguments: list[str], fault: str | None) -> int:
        """Run a job with `python -m`: its stdout is the demo's; of its stderr, the progress
        lines of its micro-batches (which Spark's Python workers print there) go to stdout too,
        everything else to the log."""
        env = dict(os.environ)
        env[JOB_LOG_DIR_ENV] = str(self.log_dir)  # each job's Spark log, beside the demo's
        env.pop(FAULT_ENV, None)
        env.pop(commit_hooks.HOOKS_ENV, None)
        if fault:
            env[FAULT_ENV] = fault
            env[commit_hooks.HOOKS_ENV] = FAULT_HOOKS
        command = [sys.executable, "-m", f"spark_eos_connect.apps.jobs.{module}", *arguments]
        common = ["--bootstrap-servers", self.bootstrap, "--until-idle"]
        common += ["--max-records-per-trigger", str(self.per_trigger)]
        sys.stdout.flush()
        with subprocess.Popen(
            command + common,
            env=env,
            stderr=subprocess.PIPE,
            text=True,
            errors="replace",
            start_new_session=True,
        ) as process:
            assert process.stderr is not None
            for line in process.stderr:
                target = sys.stdout if PROGRESS.match(line) else self.log
                target.write(line)
                target.flush()
        return process.returncode

    def source_job(self, fault: str | None) -> int:
        arguments = ["--name", self.generator, "--connector-class", "Generator"]
        arguments += ["--tasks-max", str(TASKS), "--checkpoint", str(self.work / "checkpoint")]
        arguments += ["--option", f"topic={self.topic}"]
        arguments += ["--option", f"max.records={self.per_task}"]
        # a micro-batch ends between two polls: polls of a task's share make the batches
        arguments += ["--option", f"records.per.poll={max(1, self.per_trigger // TASKS)}"]
        return self.job("source_to_kafka", arguments, fault)

    def delta_job(self, fault: str | None) -> int:
        arguments = ["--name", self.delta, "--topics", self.topic]
        arguments += ["--path", str(self.work / "table")]
        arguments += ["--checkpoint", str(self.work / "delta-checkpoint")]
        return self.job("kafka_to_delta", arguments, fault)

    def committed_positions(self) -> dict[int, int]:
        """Task -> the generator position committed in the offsets topic (the latest)."""
        positions: dict[int, int] = {}
        for record in read_to_end(self.config, [OFFSETS_TOPIC]):
            if record.key is None:
                continue
            connector, partition = decode_offset_key(record.key)
            offset = decode_offset_value(record.value)
            if connector == self.generator and partition and offset:
                positions[int(str(partition["task"]))] = int(str(offset["position"]))
        return positions

    def settled_progress(self, timeout_s: float = 15.0) -> tuple[int, dict[int, int]]:
        """(records committed in the topic, committed positions) once the two agree.

        A transaction's records and offsets commit together, but `commit_transaction` returns
        before the coordinator has written the markers that make them readable, so a read right
        after the crash may see one side of the last transaction and not yet the other."""
        deadline = time.monotonic() + timeout_s
        while True:
            count = len(read_to_end(self.config, [self.topic]))
            positions = self.committed_positions()
            if count == sum(positions.values()) or time.monotonic() > deadline:
                return count, positions
            time.sleep(0.2)

    def expected(self) -> set[tuple[int, int]]:
        return {(task, n) for task in range(TASKS) for n in range(self.per_task)}


def exactly_once(values: list[Any], expected: set[tuple[int, int]]) -> tuple[int, int]:
    """(duplicates, missing) of the generated records among `values`."""
    counts = Counter(parse_generated_value(v or b"") for v in values)
    duplicates = sum(count - 1 for count in counts.values() if count > 1)
    return duplicates, len(expected - set(counts))


@contextlib.contextmanager
def stderr_to(log: IO[str]) -> Iterator[None]:
    """Point this process's standard error (file descriptor 2, which a JVM started meanwhile
    inherits) at `log` for the block."""
    sys.stderr.flush()
    saved = os.dup(2)
    os.dup2(log.fileno(), 2)
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)


def delta_values(table: Path, log: IO[str]) -> list[Any]:
    """The `value` column of the Delta table, read by a local session logging into `log`."""
    from spark_eos_connect.spark.session import local_spark_session

    with stderr_to(log):
        spark = local_spark_session(app_name="eosconnect-demo-verify")
        try:
            rows = spark.read.format("delta").load(str(table)).select("value").collect()
        finally:
            spark.stop()
    return [row.value for row in rows]


def failed(message: str) -> int:
    print(f"== FAILED: {message}", flush=True)
    return 1


def run(demo: Demo) -> int:
    """The demo's stages; 0 when every record is in Kafka and in the table exactly once."""
    expected = demo.expected()
    ensure_topic(admin_client(demo.config), demo.topic, partitions=2)

    print("== run 1: generator -> Kafka, killed with SIGKILL after batch 1's commit", flush=True)
    code = demo.source_job(fault="after_commit@1")
    so_far, committed = demo.settled_progress()
    print(f"   run 1 exited with {code} (-9 = SIGKILL); {so_far} records committed so far")
    positions = ", ".join(f"task {t} at {p}" for t, p in sorted(committed.items()))
    print(f"== run 2: restart; resuming from the offsets committed in Kafka: {positions}")
    code = demo.source_job(fault=None)
    if code != 0:
        return failed(f"run 2 exited with {code} (log: {demo.log.name})")
    values = [r.value for r in read_to_end(demo.config, [demo.topic])]
    duplicates, missing = exactly_once(values, expected)
    print(
        f"== Kafka (read_committed): produced {len(expected)}, read back {len(values)}, "
        f"duplicates {duplicates}, missing {missing}",
        flush=True,
    )
    if duplicates or missing:
        return failed("the topic does not hold every record exactly once")

    print("== Kafka -> Delta run 1: killed with SIGKILL before batch 1's group commit", flush=True)
    code = demo.delta_job(fault="before_group_commit@1")
    print(f"   run 1 exited with {code} (-9 = SIGKILL)")
    print("== Kafka -> Delta run 2: restart", flush=True)
    code = demo.delta_job(fault=None)
    if code != 0:
        return failed(f"the Delta job exited with {code} (log: {demo.log.name})")
    table = demo.work / "table"
    rows = delta_values(table, demo.log)
    duplicates, missing = exactly_once(rows, expected)
    print(
        f"== Delta table {table}: rows {len(rows)}, duplicates {duplicates}, missing {missing}",
        flush=True,
    )
    if duplicates or missing:
        return failed("the Delta table does not hold every record exactly once")
    print(
        f"== verified: all {len(expected)} generated records exactly once in Kafka "
        "(read_committed) and in the Delta table, after a SIGKILL and a restart of each job",
        flush=True,
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="eosconnect-demo-"))
    work.mkdir(parents=True, exist_ok=True)
    log_path = work / "demo.log"
    print(f"== Spark, JVM and Kafka client logs: {log_path} (Spark's: job-logs/)", flush=True)
    with log_path.open("a") as log:
        if args.bootstrap_servers:
            return run(Demo(args, args.bootstrap_servers, work, log))
        with contextlib.ExitStack() as stack:
            with stderr_to(log):  # the broker's JVM logs into the file too
                broker = stack.enter_context(LocalKafkaBroker(data_dir=work / "kafka"))
            print(f"== local broker: bootstrap.servers={broker.bootstrap_servers}", flush=True)
            return run(Demo(args, broker.bootstrap_servers, work, log))


if __name__ == "__main__":
    sys.exit(main())
