"""The shipped jobs against a real broker: a failure ends on its root cause (issue 40)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer

pytestmark = pytest.mark.integration


def test_an_unwritable_delta_path_ends_on_its_root_cause(
    kafka_config: dict[str, Any],
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    run_job: Callable[..., Any],
    unique_name: Callable[[str], str],
    tmp_path: Path,
) -> None:
    topic = topic_factory("unwritable")
    producer = Producer(kafka_config)
    for value in (b"a", b"b"):
        producer.produce(topic, value)
    assert producer.flush(30) == 0
    a_file = tmp_path / "a-file"
    a_file.write_text("not a folder")

    done = run_job(
        "kafka_to_delta.py",
        *("--name", unique_name("unwritable"), "--topics", topic, "--path", f"{a_file}/table"),
        *("--bootstrap-servers", bootstrap_servers, "--checkpoint", str(tmp_path / "ck")),
        "--until-idle",
    )

    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("kafka_to_delta: the streaming query failed: DeltaIOException: ")
    assert "[DELTA_CANNOT_CREATE_LOG_PATH]" in last
    assert "(caused by ParentNotDirectoryException: Parent path is not a directory: " in last
    assert "Py4JJavaError" not in last
    assert "Caused by: " in named_log(done.stderr).read_text(), "the full trace is in the log"
    assert a_file.read_text() == "not a folder"


def named_log(stderr: str) -> Path:
    """The Spark log a failed job names on stderr."""
    found = re.search(r"Spark's log, with the full stacks: (\S+)", stderr)
    assert found, stderr
    return Path(found.group(1))


def test_a_task_failing_on_every_attempt_reads_in_one_screen(
    bootstrap_servers: str,
    run_job: Callable[..., Any],
    unique_name: Callable[[str], str],
    tmp_path: Path,
) -> None:
    done = run_job(
        "source_to_kafka.py",
        *("--name", unique_name("unreachable"), "--connector-class", "PostgresCdcSource"),
        *("--option", "database.hostname=127.0.0.1", "--option", "database.port=1"),
        *("--option", "database.user=cdc", "--option", "database.password=not-shown"),
        *("--option", "database.dbname=shop", "--option", "topic.prefix=shop"),
        *("--bootstrap-servers", bootstrap_servers, "--checkpoint", str(tmp_path / "ck")),
        "--until-idle",
    )

    assert done.returncode == 1
    output = done.stdout.splitlines() + done.stderr.splitlines()
    assert len(output) <= 30, "\n".join(output)
    assert "Traceback" not in done.stderr and "BrokenPipeError" not in done.stderr
    assert "Lost task 0.0 in stage" in done.stderr  # one line per attempt, no stack
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("source_to_kafka: the streaming query failed: CdcSetupError: ")
    assert "127.0.0.1:1" in last
    log = named_log(done.stderr).read_text()
    assert "spark_eos_connect.connectors.postgres.cdc.database.CdcSetupError" in log
    assert "failed 4 times; aborting job" in log
    assert "not-shown" not in log + done.stdout + done.stderr


def test_a_sink_job_on_a_topic_that_does_not_exist_says_so_and_why_it_was_idle(
    bootstrap_servers: str,
    run_job: Callable[..., Any],
    unique_name: Callable[[str], str],
    tmp_path: Path,
) -> None:
    missing = unique_name("no-such-topic")

    done = run_job(
        "kafka_to_sink.py",
        *("--name", unique_name("typo"), "--connector-class", "FileStreamSink"),
        *("--topics", missing, "--option", f"file={tmp_path / 'out.txt'}", "--until-idle"),
        *("--bootstrap-servers", bootstrap_servers, "--checkpoint", str(tmp_path / "ck")),
    )

    assert done.returncode == 0, done.stderr[-3000:]
    warning = f'WARNING: topic "{missing}" does not exist: nothing is read from it'
    assert warning in done.stderr
    last = done.stdout.strip().splitlines()[-1]
    assert last.startswith("done: 0 records in "), last
    assert last.endswith(
        f'idle: no new records (topic "{missing}" does not exist: nothing is read from it '
        "until it is created (check the option topics))"
    ), last


def test_a_file_source_whose_file_does_not_exist_says_so_and_why_it_was_idle(
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    read_committed: Callable[..., list[Any]],
    run_job: Callable[..., Any],
    unique_name: Callable[[str], str],
    tmp_path: Path,
) -> None:
    topic = topic_factory("no-file")
    missing = tmp_path / "ordres.txt"

    done = run_job(
        "source_to_kafka.py",
        *("--name", unique_name("no-file"), "--connector-class", "FileStreamSource"),
        *("--option", f"file={missing}", "--option", f"topic={topic}", "--until-idle"),
        *("--bootstrap-servers", bootstrap_servers, "--checkpoint", str(tmp_path / "ck")),
    )

    assert done.returncode == 0, done.stderr[-3000:]
    warning = f'WARNING: FileStreamSource\'s file "{missing}" does not exist'
    assert warning in done.stderr
    last = done.stdout.strip().splitlines()[-1]
    assert last.startswith("done: 0 records in "), last
    assert "idle: no new records (FileStreamSource's file" in last
    assert read_committed(topic) == []
    assert not missing.exists()
