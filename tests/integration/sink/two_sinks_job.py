"""Test job: `jobs/kafka_to_sink.py` running TWO sink queries in one driver, so that one kill
(of the driver, a task host or an executor) hits both. The first query takes the shipped job's
arguments; the second the same ones overridden by `--second key=value` (connector options, e.g.
another `name`, `topics` and `insert.mode`) and checkpointed in `--second-checkpoint`. Both
run until idle.

Under `EOSCONNECT_FAULT` the job arms `PerHostFaults` instead of `EnvironmentFaults`: the same
points, but a `lose_host_<point>` fires once per task host (its marker is the job's marker
suffixed with the host's socket), so each query's host is lost once, not only the first.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import signal
import sys
from pathlib import Path

from spark_eos_connect.apps.jobs import kafka_to_sink as job
from spark_eos_connect.runtime import commit_hooks, task_host
from spark_eos_connect.spark import job_support as js
from spark_eos_connect.spark.drain import arm_drain_file
from spark_eos_connect.testing.faults import (
    FAULT_ENV,
    LOSE_HOST_PREFIX,
    EnvironmentFaults,
    armed_batches,
    claim_marker,
)

HERE = Path(__file__).parent
HOOKS = f"{Path(__file__).stem}.PerHostFaults"


def host_marker(marker: str | None) -> str | None:
    """The marker of this task host: `marker` suffixed with a digest of its socket path (a
    host started again for the same task has the same one)."""
    path = task_host.serving_path()
    if not marker or path is None:
        return None
    return f"{marker}.{hashlib.sha1(str(path).encode()).hexdigest()[:12]}"


class PerHostFaults(EnvironmentFaults):
    """`EnvironmentFaults` whose `lose_host_<point>` fires once per task host."""

    def _lose_host(self, point: str, batch_id: int) -> None:
        name = LOSE_HOST_PREFIX + point
        if batch_id in armed_batches(name, self.spec) and claim_marker(
            host_marker(self.marker), f"{name}@{batch_id}\n"
        ):
            os.kill(os.getpid(), signal.SIGKILL)


def split_args(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--second", action="append", default=[])
    parser.add_argument("--second-checkpoint", required=True)
    return parser.parse_known_args(argv)


@js.job_entry
def main(argv: list[str] | None = None) -> int:
    own, rest = split_args(sys.argv[1:] if argv is None else argv)
    args = job.parse_args(rest)
    second = dict(item.split("=", 1) for item in own.second)
    if os.environ.get(FAULT_ENV):
        os.environ[commit_hooks.HOOKS_ENV] = HOOKS
        os.environ["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(HERE), os.environ.get("PYTHONPATH")) if p
        )
    commit_hooks.install_from_environment()
    arm_drain_file()  # before Spark starts: the queries stop between two micro-batches
    plan = js.plan_job_session(
        f"two_sinks-{args.name}", args.master, js.options_dict(args.conf), delta=False
    )
    with js.kafka_for_job(args.bootstrap_servers, plan) as bootstrap:
        first = js.quiet_kafka_logs(job.connector_options(args, bootstrap), args.verbose)
        options = [first, {**first, **second}]
        for each in options:
            js.check_kafka(each)
        spark = js.job_session(plan, args.verbose)
        checkpoints = [args.checkpoint, own.second_checkpoint]
        queries = [
            job.sink_query(spark, each, checkpoint, args.trigger_interval)
            for each, checkpoint in zip(options, checkpoints, strict=True)
        ]
        for query, each in zip(queries, options, strict=True):
            js.run_query(query, args.until_idle, args.timeout, js.stop_on_sigterm(query), each)
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
