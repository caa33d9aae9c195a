"""Plumbing shared by the `spark-submit` jobs in `jobs/`: options, the embedded broker, running
a query until its source is idle, and a clean stop on SIGTERM."""

from __future__ import annotations

import argparse
import contextlib
import functools
import logging
import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from types import FrameType
from typing import Any, Protocol

from spark_eos_connect.errors import ConfigError, EosConnectError
from spark_eos_connect.spark.root_cause import root_cause, root_cause_of
from spark_eos_connect.spark.session import SessionPlan, current_plan

log = logging.getLogger(__name__)


def key_value(text: str) -> tuple[str, str]:
    """argparse type for `KEY=VALUE`."""
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key, value


def add_key_values(parser: argparse.ArgumentParser, flag: str, what: str) -> None:
    """A repeatable `flag KEY=VALUE` argument, read as a list of (key, value) pairs."""
    parser.add_argument(
        flag,
        action="append",
        type=key_value,
        default=[],
        metavar="KEY=VALUE",
        help=f"{what} (repeatable)",
    )


def add_session_arguments(parser: argparse.ArgumentParser) -> None:
    """Where the job runs."""
    parser.add_argument(
        "--master",
        help="Spark master when not started by spark-submit (default: $SPARK_MASTER, else "
        "local[2,4]); under spark-submit give spark-submit's --master instead",
    )
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="keep Spark's own logging (quiet by default: errors and lost tasks only; a log4j "
        "file in spark.driver.extraJavaOptions or spark-submit --driver-java-options also "
        "keeps it)",
    )


def add_common_arguments(parser: argparse.ArgumentParser) -> None:
    """Options every job takes."""
    add_session_arguments(parser)
    parser.add_argument(
        "--bootstrap-servers",
        help="kafka.bootstrap.servers; default: start an embedded local broker for the run",
    )
    parser.add_argument("--checkpoint", required=True, help="Spark checkpoint folder")
    add_key_values(parser, "--kafka", "Kafka client setting, passed as option kafka.KEY")
    add_key_values(parser, "--conf", "Spark configuration for the job's session")
    parser.add_argument(
        "--trigger-interval", default="0 seconds", help="processingTime trigger (default: ASAP)"
    )
    parser.add_argument(
        "--until-idle",
        action="store_true",
        help="stop once a micro-batch finds no new records (otherwise run until SIGTERM)",
    )
    parser.add_argument("--timeout", type=float, default=None, help="stop after this many seconds")


def plan_job_session(
    app_name: str, master: str | None, extra: dict[str, str] | None = None, delta: bool = True
) -> SessionPlan:
    """The job's session plan (see `spark_eos_connect.spark.session`), announced on stdout with
    whatever of the configuration could not be applied; `delta=False` for a job that needs
    neither Delta nor Spark's Kafka source (faster start-up)."""
    plan = current_plan(app_name, extra=extra, master=master, delta=delta)
    print(plan.describe(), flush=True)
    for note in plan.notes:
        print(f"note: {note}", flush=True)
    return plan


def job_session(plan: SessionPlan, verbose: bool = False) -> Any:
    """The job's SparkSession, Spark's logging quiet unless `verbose` (see
    `spark_eos_connect.spark.session`); its drain file (`arm_drain_file`) reaches the source
    reader even when spark-submit started the JVM before the job chose the file."""
    from spark_eos_connect.spark.drain import DRAIN_ENV
    from spark_eos_connect.spark.session import (
        build_session,
        job_log_file,
        submitted_conf,
        wants_quiet_logs,
    )

    global _spark_log
    drain = os.environ.get(DRAIN_ENV)
    _spark_log = None  # a verbose job logs to the console: no file to name
    if wants_quiet_logs(plan, verbose, submitted_conf() or {}):
        _spark_log = job_log_file(plan.conf.get("spark.app.name", "job"))
        print(f"Spark's log: {_spark_log}", flush=True)
    worker_env = {DRAIN_ENV: drain} if drain else None
    return build_session(plan, worker_env=worker_env, quiet_log=_spark_log)


_spark_log: Path | None = None
"""The quiet job's Spark log file (`job_session`), named again when the job fails."""


def embedded_broker_warning(plan: SessionPlan | None) -> str | None:
    """What to tell a user who starts the embedded broker for a job that runs on a cluster."""
    if plan is None or plan.local:
        return None
    return (
        f"WARNING: no --bootstrap-servers, so this job starts an embedded Kafka broker on this "
        f"machine (127.0.0.1 only) while Spark runs on {plan.master}: it works only when every "
        "executor runs on this machine. Give --bootstrap-servers to use a real Kafka cluster."
    )


@contextlib.contextmanager
def kafka_for_job(bootstrap_servers: str | None, plan: SessionPlan | None = None) -> Iterator[str]:
    """The given cluster, or an embedded local broker for the job's lifetime (a local-only
    option: a warning says so when the job runs on a cluster)."""
    if bootstrap_servers:
        yield bootstrap_servers
        return
    from spark_eos_connect.jvm.broker import LocalKafkaBroker

    warning = embedded_broker_warning(plan)
    if warning:
        print(warning, file=sys.stderr, flush=True)
    with LocalKafkaBroker() as broker:
        print(f"started embedded broker: bootstrap.servers={broker.bootstrap_servers}", flush=True)
        yield broker.bootstrap_servers


QUIET_KAFKA_LOG_LEVEL = "3"
"""librdkafka's `log_level` in a job unless --verbose: errors, not its informational lines
(a `BGQUEUE ... Purging` line per client closed, reconnects)."""


def quiet_kafka_logs(options: Mapping[str, str], verbose: bool) -> dict[str, str]:
    """`options` with `kafka.log_level` set to `QUIET_KAFKA_LOG_LEVEL` unless `verbose` or set."""
    if verbose or "kafka.log_level" in options:
        return dict(options)
    return {**options, "kafka.log_level": QUIET_KAFKA_LOG_LEVEL}


def job_kafka_client(options: Mapping[str, Any]) -> dict[str, str]:
    """The librdkafka settings of a job's own Kafka clients (creating its topic, fencing on
    SIGTERM): the `kafka.`-prefixed `options` of the stage they serve, with their
    `${provider:[path:]key}` references resolved as the driver resolves that stage's (the
    providers its `config.providers*` options name; env, file and directory if none).

    The values are for the clients only: never print or log them. A reference that cannot be
    resolved is a ConfigError naming the option and the reference, never a value."""
    from spark_eos_connect.runtime.config.options import DataSourceOptions

    read = DataSourceOptions.read(options)
    resolved: dict[str, str] = read.checked_providers().resolve(read.kafka, prefix="kafka.")
    return resolved


KAFKA_CHECK_TIMEOUT_S = 8.0
"""How long `check_kafka` waits for the brokers' first answer before the job gives up."""


def check_kafka(options: Mapping[str, Any]) -> None:
    """Before the job starts Spark: fail at once, with one error naming what is wrong, when
    the brokers refuse the credentials or the certificate (`KafkaAuthenticationError`), when
    every `kafka.bootstrap.servers` address refuses the connection or does not resolve (in
    about `REFUSED_GRACE_S`), or when no broker answers within `KAFKA_CHECK_TIMEOUT_S`
    (`KafkaUnreachableError`), rather than after the JVM, the session and a failed query."""
    from spark_eos_connect.kafka.clients import KafkaTimeoutError, ensure_reachable
    from spark_eos_connect.kafka.security import authenticates, verify_credentials

    client = job_kafka_client(options)
    if not authenticates(client):
        ensure_reachable(client, KAFKA_CHECK_TIMEOUT_S, fail_fast=True)
        return
    with contextlib.suppress(KafkaTimeoutError):  # a slow login is left to the query's waits
        verify_credentials(client, KAFKA_CHECK_TIMEOUT_S)


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

    Needs `arm_drain_file()` before Spark started; without it the query stops at once. The
    drain request is withdrawn once the query stopped, so a next query of the job can run.
    """
    from spark_eos_connect.spark.drain import DRAIN_ENV, request_drain

    drain = os.environ.get(DRAIN_ENV)
    if drain:
        request_drain()
        deadline = time.monotonic() + timeout_s
        while query.isActive and time.monotonic() < deadline:
            status = query.status
            if not status.get("isTriggerActive") and not status.get("isDataAvailable"):
                break
            time.sleep(0.05)
    query.stop()
    if drain:
        Path(drain).unlink(missing_ok=True)


class IdleWatch:
    """Tells from a query's progress events when its source is idle.

    A source with nothing to plan (the Kafka reader) makes Spark report a progress event that
    ran no batch: idle at once. A source connector's stream runs a micro-batch every trigger,
    and one batch without rows is not enough: a Spark retry of a task whose earlier attempt
    already committed, on another executor, emits nothing while the connector has more. Two
    executed batches in a row without rows are.
    """

    def __init__(self) -> None:
        self._seen: set[tuple[int, bool]] = set()
        self._empty_batches = 0
        self.idle = False
        self.records = 0
        """Input rows of the micro-batches seen so far."""
        self.batches = 0
        """Micro-batches that ran."""

    def update(self, events: Sequence[Mapping[str, Any]]) -> bool:
        """Take the events not seen yet (oldest first); whether the source is idle now."""
        for event in events:
            ran = "addBatch" in (event.get("durationMs") or {})
            key = (int(event["batchId"]), ran)
            if key in self._seen:
                continue
            self._seen.add(key)
            self.records += int(event["numInputRows"])
            self.batches += int(ran)
            if event["numInputRows"] > 0:
                self._empty_batches = 0
            elif not ran:
                self.idle = True
            else:
                self._empty_batches += 1
                self.idle = self.idle or self._empty_batches >= 2
        return self.idle


WARN_EVERY_S = 30.0
"""How often `run_query` repeats the warnings about a query that does nothing."""


class NoOpWarnings:
    """Says, on the job's standard error, why its query would do nothing: when it starts,
    again every `WARN_EVERY_S` while that persists (`check` returns the current warnings)."""

    def __init__(self, check: Callable[[], list[str]] | None) -> None:
        self._check = check
        self._said_at: float | None = None
        self.current: list[str] = []

    def say_if_due(self) -> None:
        """Check and say the warnings, if `WARN_EVERY_S` passed since they were said."""
        now = time.monotonic()
        if self._check is None or (
            self._said_at is not None and now - self._said_at < WARN_EVERY_S
        ):
            return
        self._said_at = now
        try:
            self.current = self._check()
        except EosConnectError as error:  # the check is advice: the query reports real errors
            log.debug("checking for no-ops: %s", error)
            return
        for warning in self.current:
            print(warning, file=sys.stderr, flush=True)


def run_query(
    query: Any,
    until_idle: bool,
    timeout_s: float | None,
    stop_requested: threading.Event,
    options: Mapping[str, Any] | None = None,
) -> bool:
    """Wait until the source is idle (`IdleWatch`), the time is up, a signal arrives or the
    query fails; then stop it between two micro-batches. Why a query of stream `options`
    would do nothing (`job_no_op_warnings`) is warned about at the start and while it persists,
    and the last line printed says what the query did and why it stopped. False when a
    signal asked for the stop."""
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    watch = IdleWatch()
    warnings = NoOpWarnings(None if options is None else lambda: job_no_op_warnings(options))
    idle = False
    reason = "the query ended"
    from pyspark.errors import StreamingQueryException

    with contextlib.suppress(StreamingQueryException):  # reported below, by its root cause
        while query.isActive and not idle:
            warnings.say_if_due()
            if stop_requested.is_set():
                reason = "stopped on a signal"
                break
            if deadline is not None and time.monotonic() > deadline:
                reason = f"--timeout {timeout_s:g} s reached"
                break
            idle = watch.update(query.recentProgress) and until_idle
            query.awaitTermination(0.5)
        if idle:
            reason = "idle: no new records"
            if warnings.current:
                reason += (
                    " (" + "; ".join(w.removeprefix("WARNING: ") for w in warnings.current) + ")"
                )
        if query.isActive:
            if stop_requested.is_set():
                print(
                    "signal received: stopping the query once its running micro-batch is "
                    "committed (no new one starts)",
                    file=sys.stderr,
                    flush=True,
                )
            stop_between_batches(query)
        query.awaitTermination()
    error = query.exception()
    if error is not None:
        raise QueryFailedError(f"the streaming query failed: {root_cause(str(error))}")
    watch.update(query.recentProgress)
    print(f"done: {watch.records} records in {watch.batches} micro-batches; {reason}", flush=True)
    return not stop_requested.is_set()


def job_no_op_warnings(options: Mapping[str, Any]) -> list[str]:
    """`runtime.no_ops`'s warnings for a job's stream options: a FileStreamSource's missing
    `file`; `topics` that do not exist and a `topics.regex` matching none (the cluster asked)."""
    from spark_eos_connect.runtime.config.option_keys import lowered
    from spark_eos_connect.runtime.no_ops import missing_file_warning, missing_topic_warnings

    given = lowered(options)
    warnings = []
    name = str(given.get("connector.class") or "")
    file = given.get("file")
    if name and file:
        from spark_eos_connect.plugins.connectors import resolve_connector_class

        try:
            cls_name = resolve_connector_class(name).__name__
        except EosConnectError:
            cls_name = ""
        found = missing_file_warning(cls_name, str(file), Path(str(file)).exists())
        warnings += [found] if found else []
    topics = [t.strip() for t in str(given.get("topics") or "").split(",") if t.strip()]
    regex = given.get("topics.regex")
    if topics or regex:
        from spark_eos_connect.kafka.clients import topic_names

        existing = topic_names(job_kafka_client(options))
        warnings += missing_topic_warnings(topics, str(regex) if regex else None, existing)
    return warnings


class QueryFailedError(EosConnectError):
    """A job's streaming query stopped with an error (named by its root cause)."""


class JobMain(Protocol):
    """A job's `main(argv=None)`."""

    def __call__(self, argv: list[str] | None = None) -> int: ...


def stop_active_session() -> None:
    """Stop the job's Spark session, if one runs, so that what its shutdown prints (its Python
    workers' broken pipes) comes before the job's last line, not after it."""
    from pyspark.sql import SparkSession

    session = SparkSession.getActiveSession()
    if session is not None:
        with contextlib.suppress(Exception):
            session.stop()


def say_where_the_log_is(job: str) -> None:
    """Name the quiet job's Spark log (the failure's stacks are there), if it has one."""
    if _spark_log is not None:
        print(f"{job}: Spark's log, with the full stacks: {_spark_log}", file=sys.stderr)


def job_entry(main: JobMain) -> JobMain:
    """A job's `main` whose failure ends on one line naming its root cause, exit code 1: the
    project's own errors (a wrong option, an unreachable broker, a failed query) by their
    message alone; anything else after its full traceback, by `root_cause_of`."""

    @functools.wraps(main)
    def run(argv: list[str] | None = None) -> int:
        job = main.__module__.rsplit(".", 1)[-1]
        try:
            return main(argv)
        except EosConnectError as error:
            stop_active_session()
            say_where_the_log_is(job)
            print(f"{job}: {error}", file=sys.stderr, flush=True)
        except Exception as error:
            traceback.print_exc()
            stop_active_session()
            say_where_the_log_is(job)
            print(f"{job}: failed: {root_cause_of(error)}", file=sys.stderr, flush=True)
        return 1

    return run


def options_dict(pairs: Sequence[tuple[str, str]], prefix: str = "") -> dict[str, str]:
    """`[(k, v)]` as `{prefix + k: v}`, refusing duplicates."""
    result: dict[str, str] = {}
    for key, value in pairs:
        full = prefix + key
        if full in result:
            raise ConfigError(f"option {full} given twice")
        result[full] = value
    return result


def kafka_options(bootstrap: str, settings: Sequence[tuple[str, str]]) -> dict[str, str]:
    """`kafka.bootstrap.servers` and the `--kafka` settings, as `kafka.`-prefixed options."""
    return {"kafka.bootstrap.servers": bootstrap, **options_dict(settings, "kafka.")}


def job_options(
    args: argparse.Namespace, names: Mapping[str, str], bootstrap: str
) -> dict[str, str]:
    """The options a job's arguments stand for: each argument of `names` (argparse dest ->
    option name) that was given, then the `--option` pairs, then `kafka_options`."""
    options = {
        option: str(getattr(args, dest))
        for dest, option in names.items()
        if getattr(args, dest) is not None
    }
    options.update(options_dict(args.option))
    options.update(kafka_options(bootstrap, args.kafka))
    return options
