"""jobs/kafka_to_delta.py: --help, and arguments mapping one-to-one to connector options."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import pytest


@pytest.fixture(scope="module")
def job(load_job: Callable[[str], ModuleType]) -> ModuleType:
    return load_job("kafka_to_delta.py")


def test_help_describes_the_job(run_job: Callable[..., Any]) -> None:
    shown = run_job("kafka_to_delta.py", "--help")
    assert shown.returncode == 0, shown.stderr

    assert "Delta Lake table, exactly once" in shown.stdout
    for flag in ("--topics-regex", "--delta-mode", "--value-schema", "--until-idle"):
        assert flag in shown.stdout


def test_arguments_map_one_to_one_to_connector_options(job: ModuleType) -> None:
    args = job.parse_args(
        [
            "--name", "orders", "--topics", "a,b", "--path", "/t", "--delta-mode", "upsert",
            "--value-schema", "id INT", "--starting-offsets", "latest",
            "--max-records-per-trigger", "10", "--errors-tolerance", "all",
            "--errors-deadletterqueue-topic-name", "dlq",
            "--errors-deadletterqueue-context-headers-enable", "true",
            "--option", "kafkaConsumer.pollTimeoutMs=5000", "--kafka", "client.id=x",
            "--checkpoint", "/ck",
        ]
    )  # fmt: skip

    assert job.connector_options(args, "b:9092") == {
        "name": "orders",
        "topics": "a,b",
        "path": "/t",
        "delta.mode": "upsert",
        "value.schema": "id INT",
        "startingOffsets": "latest",
        "maxRecordsPerTrigger": "10",
        "errors.tolerance": "all",
        "errors.deadletterqueue.topic.name": "dlq",
        "errors.deadletterqueue.context.headers.enable": "true",
        "kafkaConsumer.pollTimeoutMs": "5000",
        "kafka.bootstrap.servers": "b:9092",
        "kafka.client.id": "x",
    }


def test_topics_and_table_location_are_required_and_exclusive(job: ModuleType) -> None:
    with pytest.raises(SystemExit):
        job.parse_args(["--name", "n", "--path", "/t", "--checkpoint", "/ck"])
    with pytest.raises(SystemExit):
        job.parse_args(
            ["--name", "n", "--topics", "a", "--path", "/t", "--table", "t", "--checkpoint", "/c"]
        )


def test_reader_is_eosconnect_unless_kafka_is_asked_for(job: ModuleType) -> None:
    required = ["--name", "n", "--topics", "a", "--path", "/t", "--checkpoint", "/ck"]

    assert job.parse_args(required).reader == "eosconnect"
    assert job.parse_args([*required, "--reader", "kafka"]).reader == "kafka"
    with pytest.raises(SystemExit):
        job.parse_args([*required, "--reader", "kafka-0-10"])
