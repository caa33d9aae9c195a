"""The `eosconnect` command line."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Sequence
from types import FrameType

from spark_eos_connect import __version__
from spark_eos_connect.errors import EosConnectError


def _run_kafka(args: argparse.Namespace) -> int:
    from spark_eos_connect.kafka.broker import LocalKafkaBroker

    stop_requested = threading.Event()

    def request_stop(signum: int, frame: FrameType | None) -> None:
        stop_requested.set()

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    broker = LocalKafkaBroker(port=args.port, data_dir=args.data_dir)
    try:
        broker.start()
        print(f"bootstrap.servers={broker.bootstrap_servers}", flush=True)
        while not stop_requested.wait(0.5):
            if not broker.is_running():
                print(f"the broker exited unexpectedly; see {broker.log_path}", file=sys.stderr)
                return 1
    finally:
        broker.close()
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser for every `eosconnect` subcommand."""
    parser = argparse.ArgumentParser(
        prog="eosconnect",
        description="Kafka Connect's exactly-once machinery for Spark: local broker and tools.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    kafka = commands.add_parser(
        "kafka",
        help="run a local single-node Apache Kafka broker (KRaft) in the foreground",
        description=(
            "Run a single-node Kafka broker+controller with transactions enabled. Prints "
            "bootstrap.servers=HOST:PORT once it accepts requests; SIGTERM/SIGINT stop it."
        ),
    )
    kafka.add_argument("--port", type=int, default=None, help="listener port (default: free)")
    kafka.add_argument(
        "--data-dir",
        default=None,
        help="storage folder; reused if already formatted (default: a temporary folder)",
    )
    kafka.set_defaults(handler=_run_kafka)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `eosconnect` console script."""
    args = build_parser().parse_args(argv)
    try:
        return int(args.handler(args))
    except EosConnectError as error:
        print(f"eosconnect: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
