"""A Java task started under `transaction.boundary=connector` (its context has a
TransactionContext) tells its JVM so in START_TASK's connector options; otherwise not."""

from __future__ import annotations

from typing import Any

import pytest

from spark_eos_connect.api.source import (
    InMemoryOffsetStorageReader,
    SourceTaskContext,
    TransactionContext,
)
from spark_eos_connect.jvm_tasks import java_source_task
from spark_eos_connect.jvm_tasks.java_source_task import (
    CONNECTOR_OPTIONS,
    TASK_CLASS,
    JavaSourceTask,
)
from spark_eos_connect.jvm_tasks.wire import OK, START_TASK, FrameReader, FrameWriter


class Host:
    """A task host that answers START_TASK and keeps the connector options it was sent."""

    pid = 1

    def __init__(self) -> None:
        self.options: dict[str, str] = {}

    def call(self, request: FrameWriter, answer: Any = None) -> FrameReader:
        sent = FrameReader(request.frame()[4:])
        assert sent.kind == START_TASK
        sent.text()
        sent.map()
        self.options = sent.map()
        return FrameReader(FrameWriter(OK).i32(0).frame()[4:])


@pytest.mark.parametrize("connector_boundary", [True, False])
def test_start_task_names_the_connector_boundary_only_when_the_task_has_one(
    connector_boundary: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    host = Host()
    monkeypatch.setattr(java_source_task, "shared_host", lambda plugin_path: host)
    task = JavaSourceTask({CONNECTOR_OPTIONS: {"value.converter": "x.Y"}})
    transactions = TransactionContext() if connector_boundary else None
    task.initialize(SourceTaskContext({}, InMemoryOffsetStorageReader([]), transactions))

    task.start({TASK_CLASS: "com.example.TxnTask"})

    expected = {"value.converter": "x.Y"}
    if connector_boundary:
        expected["transaction.boundary"] = "connector"
    assert host.options == expected
