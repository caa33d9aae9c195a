"""`runtime.task_status`: the one reporter of a task's status, used by source and sink hosts."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from spark_eos_connect.protocol.status_records import StatusState
from spark_eos_connect.runtime.config.config_references import ConfigProviders
from spark_eos_connect.runtime.errors_dlq import ErrorPolicy
from spark_eos_connect.runtime.lifecycle.leadership import worker_id
from spark_eos_connect.runtime.task_status import TaskStatusReporter
from spark_eos_connect.sink import host as sink_host
from spark_eos_connect.sink.plan import SinkTaskPlan
from spark_eos_connect.source import host as source_host
from spark_eos_connect.testing import example_plan


class RecordingStore:
    """Stands for `KafkaStatusStore`: records what is written, and how it was built."""

    built: list[tuple[dict[str, Any], str]] = []
    written: list[tuple[Any, ...]] = []
    closed = 0
    fail = False

    def __init__(self, kafka: dict[str, Any], topic: str) -> None:
        RecordingStore.built.append((dict(kafka), topic))

    def put_task_status(self, *record: Any) -> None:
        if RecordingStore.fail:
            raise RuntimeError("broker gone")
        RecordingStore.written.append(record)

    def close(self) -> None:
        RecordingStore.closed += 1


@pytest.fixture(autouse=True)
def store(monkeypatch: pytest.MonkeyPatch) -> type[RecordingStore]:
    from spark_eos_connect.storage import status_store

    RecordingStore.built, RecordingStore.written = [], []
    RecordingStore.closed, RecordingStore.fail = 0, False
    monkeypatch.setattr(status_store, "KafkaStatusStore", RecordingStore)
    return RecordingStore


def test_a_report_is_written_in_connects_record_with_kafka_resolved(tmp_path: Path) -> None:
    secrets = tmp_path / "kafka.properties"
    secrets.write_text("password=hunter2\n")
    providers = ConfigProviders.from_options(
        {"config.providers": "file", "config.providers.file.param.allowed.paths": str(tmp_path)}
    )
    kafka = {"bootstrap.servers": "b:9092", "sasl.password": f"${{file:{secrets}:password}}"}
    reporter = TaskStatusReporter("orders", "my-status", kafka, providers, generation=7)

    reporter.report(2, StatusState.FAILED, "Traceback: boom")

    assert RecordingStore.built == [
        ({"bootstrap.servers": "b:9092", "sasl.password": "hunter2"}, "my-status")
    ]
    assert RecordingStore.written == [
        ("orders", 2, StatusState.FAILED, worker_id(), 7, "Traceback: boom")
    ]
    assert RecordingStore.closed == 1
    assert "hunter2" not in repr(reporter)


def test_a_report_that_cannot_be_written_is_logged_not_raised(
    caplog: pytest.LogCaptureFixture,
) -> None:
    RecordingStore.fail = True
    reporter = TaskStatusReporter("orders", "s", {"bootstrap.servers": "b:9092"})

    with caplog.at_level(logging.WARNING):
        reporter.report(1, StatusState.RUNNING)

    assert "could not record task orders-1 as RUNNING: broker gone" in caplog.text
    assert RecordingStore.closed == 1


def test_without_a_status_topic_nothing_is_written() -> None:
    TaskStatusReporter("orders", "", {"bootstrap.servers": "b:9092"}).report(0, StatusState.FAILED)

    assert RecordingStore.built == []


def test_source_and_sink_tasks_report_through_it_with_their_plans_settings() -> None:
    kafka = {"bootstrap.servers": "b:9092"}
    source = source_host.status_reporter(kafka, example_plan([], status_generation=5))
    sink_plan = SinkTaskPlan(
        connector="s",
        task_class="x.Y",
        task_configs=[{}],
        max_poll_records=1,
        errors=ErrorPolicy("s"),
        kafka=kafka,
        status_topic="sink-status",
    )
    sink = sink_host.status_reporter(sink_plan)

    assert (source.connector, source.status_topic) == ("c", "eosconnect-status")
    assert source.generation == 5
    assert (sink.connector, sink.status_topic, sink.generation) == ("s", "sink-status", 0)
    assert source.kafka == sink.kafka == kafka
