"""Status tells the truth on every way a query ends, and no transaction is left open: the
jobs' --until-idle, --timeout and SIGTERM ends, and a Python script that exits with its query
running (issue 40 items 1 and 2)."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import IsolationLevel, TopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec

from spark_eos_connect.kafka.clients import listed_offsets
from spark_eos_connect.protocol.status_records import StatusState
from spark_eos_connect.storage.status_store import KafkaStatusStore
from spark_eos_connect.testing import wait_for

pytestmark = pytest.mark.integration

STATUS_BOUND_S = 15.0
"""How soon after the process ended the status must say UNASSIGNED."""


def states(kafka_config: dict[str, Any], name: str) -> tuple[Any, list[Any]]:
    """(connector state, task states) of `name` in the default status topic."""
    snapshot = KafkaStatusStore(kafka_config, "eosconnect-status").read_to_end()
    connector = snapshot.connector_status(name)
    tasks = snapshot.task_statuses(name)
    return (connector.state if connector else None, [tasks[t].state for t in sorted(tasks)])


def assert_unassigned_soon(
    kafka_config: dict[str, Any], name: str, tasks: int, output: str = ""
) -> None:
    """`name` and its `tasks` tasks UNASSIGNED within `STATUS_BOUND_S`; a failure quotes the
    end of the job's `output`."""
    expected = (StatusState.UNASSIGNED, [StatusState.UNASSIGNED] * tasks)
    try:
        wait_for(lambda: states(kafka_config, name) == expected, STATUS_BOUND_S, "")
    except AssertionError:
        now = states(kafka_config, name)
        raise AssertionError(
            f"{name} and its tasks not UNASSIGNED {STATUS_BOUND_S:.0f}s after the end "
            f"(now {now}); the job's output ended with:\n{output[-6000:]}"
        ) from None


def assert_no_open_transaction(kafka_config: dict[str, Any], topic: str, partitions: int) -> None:
    """The last stable offset of every partition is its high watermark."""
    admin = AdminClient(kafka_config)
    requests = {TopicPartition(topic, p): OffsetSpec.latest() for p in range(partitions)}
    stable = listed_offsets(admin, requests, IsolationLevel.READ_COMMITTED, 10)
    high = listed_offsets(admin, requests, IsolationLevel.READ_UNCOMMITTED, 10)
    assert stable == high


def file_source_args(name: str, source: Path, topic: str, servers: str, ck: Path) -> list[str]:
    return [
        *("--name", name, "--connector-class", "FileStreamSource"),
        *("--option", f"file={source}", "--option", f"topic={topic}"),
        *("--bootstrap-servers", servers, "--checkpoint", str(ck)),
    ]


@pytest.mark.parametrize("end", ["--until-idle", "--timeout"])
def test_a_source_job_that_ends_leaves_its_connector_unassigned(
    kafka_config: dict[str, Any],
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    run_job: Callable[..., Any],
    unique_name: Callable[[str], str],
    tmp_path: Path,
    end: str,
) -> None:
    topic = topic_factory("ends")
    source = tmp_path / "in.txt"
    source.write_text("a\nb\nc\n")
    name = unique_name("ends")
    args = file_source_args(name, source, topic, bootstrap_servers, tmp_path / "ck")

    done = run_job("source_to_kafka.py", *args, *([end] if end == "--until-idle" else [end, "20"]))

    assert done.returncode == 0, done.stderr[-3000:]
    assert "|BGQUEUE|" not in done.stderr, "librdkafka's informational lines stay out"
    assert done.stdout.strip().splitlines()[-1].startswith("done: 3 records in ")
    assert_unassigned_soon(kafka_config, name, tasks=1)
    assert_no_open_transaction(kafka_config, topic, 1)


def test_sigterm_leaves_the_source_connector_unassigned(
    kafka_config: dict[str, Any],
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    read_committed: Callable[..., list[Any]],
    start_job: Callable[..., Any],
    unique_name: Callable[[str], str],
    tmp_path: Path,
) -> None:
    topic = topic_factory("sigterm-status")
    name = unique_name("sigterm-status")
    job = start_job(
        "source_to_kafka.py",
        *("--name", name, "--connector-class", "Generator", "--tasks-max", "2"),
        *("--option", f"topic={topic}", "--option", "rate=200"),
        *("--bootstrap-servers", bootstrap_servers, "--checkpoint", str(tmp_path / "ck")),
    )
    wait_for(lambda: len(read_committed(topic, settled=False)) > 0, 180, "committed records")

    output = job.stop(signal.SIGTERM, timeout_s=180)

    assert job.process.returncode == 0, output[-3000:]
    assert "signal received: stopping the query once its running micro-batch" in output
    assert_unassigned_soon(kafka_config, name, tasks=2)
    assert_no_open_transaction(kafka_config, topic, 1)


def test_a_sink_job_that_ends_leaves_its_connector_unassigned(
    kafka_config: dict[str, Any],
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    run_job: Callable[..., Any],
    unique_name: Callable[[str], str],
    tmp_path: Path,
) -> None:
    topic = topic_factory("sink-ends")
    name = unique_name("sink-ends")

    done = run_job(
        "kafka_to_sink.py",
        *("--name", name, "--connector-class", "FileStreamSink", "--topics", topic),
        *("--option", f"file={tmp_path / 'out.txt'}", "--timeout", "15"),
        *("--bootstrap-servers", bootstrap_servers, "--checkpoint", str(tmp_path / "ck")),
    )

    assert done.returncode == 0, done.stderr[-3000:]
    wait_for(
        lambda: states(kafka_config, name)[0] is StatusState.UNASSIGNED,
        STATUS_BOUND_S,
        f"{name} UNASSIGNED (now {states(kafka_config, name)})",
    )


QUICKSTART_SCRIPT = """
import sys
import time
from spark_eos_connect.spark.session import local_spark_session

name, topic, servers, checkpoint = sys.argv[1:]
spark = local_spark_session()
kafka = {{"kafka.bootstrap.servers": servers}}
records = (
    spark.readStream.format("eosconnect")
    .option("name", name)
    .option("connector.class", "Generator")
    .option("tasks.max", "2")
    .option("topic", topic)
    .option("rate", "200")
    .options(**kafka)
    .load()
)
query = (
    records.writeStream.format("eosconnect")
    .option("name", name)
    .options(**kafka)
    .option("checkpointLocation", checkpoint)
    .start()
)
deadline = time.monotonic() + {seconds}  # exit once a batch with records is through
while time.monotonic() < deadline and not any(p["numInputRows"] for p in query.recentProgress):
    time.sleep(0.5)
"""


def test_a_script_exiting_with_its_query_running_leaves_nothing_open(
    kafka_config: dict[str, Any],
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    read_committed: Callable[..., list[Any]],
    unique_name: Callable[[str], str],
    tmp_path: Path,
) -> None:
    topic = topic_factory("script-exit")
    name = unique_name("script-exit")
    script = tmp_path / "quickstart.py"
    script.write_text(textwrap.dedent(QUICKSTART_SCRIPT.format(seconds=240)))

    done = subprocess.run(
        [sys.executable, str(script), name, topic, bootstrap_servers, str(tmp_path / "ck")],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        start_new_session=True,
    )
    ended = time.monotonic()

    assert done.returncode == 0, done.stderr[-3000:]
    assert "Python is exiting with streaming query" in done.stderr
    assert read_committed(topic, settled=False), "the query ran and committed records"
    assert_unassigned_soon(kafka_config, name, tasks=2, output=done.stderr)
    wait_for(
        lambda: _settled(kafka_config, topic),
        max(1.0, STATUS_BOUND_S - (time.monotonic() - ended)),
        "no open transaction on the topic (last stable offset = high watermark)",
    )


def _settled(kafka_config: dict[str, Any], topic: str) -> bool:
    try:
        assert_no_open_transaction(kafka_config, topic, 1)
    except AssertionError:
        return False
    return True


def test_a_source_job_whose_task_fails_leaves_the_connector_and_task_failed(
    kafka_config: dict[str, Any],
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    run_job: Callable[..., Any],
    unique_name: Callable[[str], str],
    tmp_path: Path,
) -> None:
    topic = topic_factory("task-fails")
    name = unique_name("task-fails")

    done = run_job(
        "source_to_kafka.py",
        *("--name", name, "--connector-class", "Generator", "--max-records-per-trigger", "10"),
        *("--option", f"topic={topic}", "--option", "max.records=50"),
        *("--option", "records.per.poll=10"),  # a micro-batch ends between polls only
        *("--bootstrap-servers", bootstrap_servers, "--checkpoint", str(tmp_path / "ck")),
        "--until-idle",
        fault="fail_before_commit@1",  # no marker: every attempt fails, the query with it
    )

    assert done.returncode == 1, done.stderr[-3000:]

    def failed() -> bool:
        return states(kafka_config, name) == (StatusState.FAILED, [StatusState.FAILED])

    wait_for(failed, STATUS_BOUND_S, f"FAILED, task FAILED (now {states(kafka_config, name)})")
    snapshot = KafkaStatusStore(kafka_config, "eosconnect-status").read_to_end()
    connector, task = snapshot.connector_status(name), snapshot.task_status(name, 0)
    assert connector is not None and connector.trace is not None
    assert connector.trace.startswith(f"The query running connector {name} failed: task 0 ")
    assert task is not None and task.trace is not None and "InjectedFault" in task.trace
    assert task.trace in connector.trace
