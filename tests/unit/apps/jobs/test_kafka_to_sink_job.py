"""jobs/kafka_to_sink.py: --help, and arguments mapping one-to-one to connector options."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import pytest


@pytest.fixture(scope="module")
def job(load_job: Callable[[str], ModuleType]) -> ModuleType:
    return load_job("kafka_to_sink.py")


def test_help_describes_the_job(run_job: Callable[..., Any]) -> None:
    shown = run_job("kafka_to_sink.py", "--help")
    assert shown.returncode == 0, shown.stderr

    assert "Kafka topics into a sink connector" in shown.stdout
    for flag in ("--connector-class", "--topics-regex", "--tasks-max", "--until-idle"):
        assert flag in shown.stdout


def test_arguments_map_one_to_one_to_connector_options(job: ModuleType) -> None:
    args = job.parse_args(
        [
            "--name", "orders", "--connector-class", "FileStreamSink", "--tasks-max", "2",
            "--topics", "a,b", "--starting-offsets", "latest", "--max-records-per-trigger", "10",
            "--option", "file=/out.txt", "--kafka", "client.id=x", "--checkpoint", "/ck",
        ]
    )  # fmt: skip

    assert job.connector_options(args, "b:9092") == {
        "name": "orders",
        "connector.class": "FileStreamSink",
        "tasks.max": "2",
        "topics": "a,b",
        "startingOffsets": "latest",
        "maxRecordsPerTrigger": "10",
        "file": "/out.txt",
        "kafka.bootstrap.servers": "b:9092",
        "kafka.client.id": "x",
    }


def test_topics_or_a_regex_is_required(job: ModuleType) -> None:
    with pytest.raises(SystemExit):
        job.parse_args(["--name", "n", "--connector-class", "FileStreamSink", "--checkpoint", "c"])
