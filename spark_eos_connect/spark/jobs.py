"""Plumbing shared by the `spark-submit` jobs in `jobs/`: options, the embedded broker, running
a query until its source is idle, and a clean stop on SIGTERM."""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import threading
import time
from collections.abc import Iterator, Sequence
from types import FrameType
from typing import Any

from spark_eos_connect.errors import ConfigError


def key_value(text: str) -> tuple[str, str]:
    """argparse type for `KEY=VALUE`."""
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key, value


def add_common_arguments(parser: argparse.ArgumentParser) -> None:
    """Options every job takes."""
    parser.add_argument(
        "--bootstrap-servers",
        help="kafka.bootstrap.servers; default: start an embedded local broker for the run",
    )
    parser.add_argument("--checkpoint", required=True, help="Spark checkpoint folder")
    parser.add_argument(
        "--kafka",
        action="append",
        type=key_value,
        default=[],
        metavar="KEY=VALUE",
        help="Kafka client setting, passed as option kafka.KEY (repeatable)",
    )
    parser.add_argument(
        "--conf",
        action="append",
        type=key_value,
        default=[],
        metavar="KEY=VALUE",
        help="Spark configuration for the local session (repeatable)",
    )
    parser.add_argument(
        "--trigger-interval", default="0 seconds", help="processingTime trigger (default: ASAP)"
    )
    parser.add_argument(
        "--until-idle",
        action="store_true",
        help="stop once a micro-batch finds no new records (otherwise run until SIGTERM)",
    )
    parser.add_argument("--timeout", type=float, default=None, help="stop after this many seconds")


@contextlib.contextmanager
def kafka_for_job(bootstrap_servers: str | None) -> Iterator[str]:
    """The given cluster, or an embedded local broker for the job's lifetime."""
    if bootstrap_servers:
        yield bootstrap_servers
        return
    from spark_eos_connect.kafka.broker import LocalKafkaBroker

    with LocalKafkaBroker() as broker:
        print(f"started embedded broker: bootstrap.servers={broker.bootstrap_servers}", flush=True)
        yield broker.bootstrap_servers


def stop_on_sigterm(query: Any) -> threading.Event:
    """Stop `query` gracefully on SIGTERM/SIGINT; the event is set when a signal arrived."""
    stopped = threading.Event()

    def handle(signum: int, frame: FrameType | None) -> None:
        stopped.set()

    signal.signal(signal.SIGTERM, handle)
    signal.signal(signal.SIGINT, handle)
    return stopped


def stop_between_batches(query: Any, timeout_s: float = 60.0) -> None:
    """Let the running micro-batch finish, start no new one, then stop `query`.

    Needs `arm_drain_file()` before Spark started; without it the query stops at once.
    """
    from spark_eos_connect.spark.drain import DRAIN_ENV, request_drain

    if os.environ.get(DRAIN_ENV):
        request_drain()
        deadline = time.monotonic() + timeout_s
        while query.isActive and time.monotonic() < deadline:
            status = query.status
            if not status.get("isTriggerActive") and not status.get("isDataAvailable"):
                break
            time.sleep(0.05)
    query.stop()


def run_query(
    query: Any, until_idle: bool, timeout_s: float | None, stop_requested: threading.Event
) -> bool:
    """Wait until the source is idle, the time is up, a signal arrives or the query fails;
    then stop it between two micro-batches. False when a signal asked for the stop."""
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    seen_batches: set[int] = set()
    idle = False
    while query.isActive and not idle:
        if stop_requested.is_set() or (deadline is not None and time.monotonic() > deadline):
            break
        if until_idle:
            for progress in query.recentProgress:
                batch = progress["batchId"]
                if batch not in seen_batches:
                    seen_batches.add(batch)
                    idle = idle or progress["numInputRows"] == 0
        query.awaitTermination(0.5)
    if query.isActive:
        stop_between_batches(query)
    query.awaitTermination()
    error = query.exception()
    if error is not None:
        raise RuntimeError(f"the streaming query failed: {error}")
    return not stop_requested.is_set()


def options_dict(pairs: Sequence[tuple[str, str]], prefix: str = "") -> dict[str, str]:
    """`[(k, v)]` as `{prefix + k: v}`, refusing duplicates."""
    result: dict[str, str] = {}
    for key, value in pairs:
        full = prefix + key
        if full in result:
            raise ConfigError(f"option {full} given twice")
        result[full] = value
    return result
