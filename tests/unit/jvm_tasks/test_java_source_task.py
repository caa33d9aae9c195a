"""A Java task started under `transaction.boundary=connector` (its context has a
TransactionContext) tells its JVM so in START_TASK's connector options; otherwise not. A POLL
asks for the rest of the last batch's poll only when told to."""

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
from spark_eos_connect.jvm_tasks.wire import (
    BATCH,
    OK,
    POLL,
    START_TASK,
    FrameReader,
    FrameWriter,
)


class Host:
    """A task host that answers START_TASK and keeps the connector options it was sent."""

    pid = 1

    def __init__(self) -> None:
        self.options: dict[str, str] = {}
        self.polls: list[tuple[int, int, int]] = []

    def call(self, request: FrameWriter, answer: Any = None) -> FrameReader:
        sent = FrameReader(request.frame()[4:])
        if sent.kind == POLL:
            self.polls.append((sent.i32(), sent.i64(), sent.i32()))
            return FrameReader(FrameWriter(BATCH).i64(0).i32(0).i32(0).i32(0).i32(0).i32(0)
                               .frame()[4:])  # fmt: skip
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


def test_a_poll_asks_for_the_rest_of_the_last_poll_only_when_told_to(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    host = Host()
    monkeypatch.setattr(java_source_task, "shared_host", lambda plugin_path: host)
    task = JavaSourceTask({CONNECTOR_OPTIONS: {}})
    task.initialize(SourceTaskContext({}, InMemoryOffsetStorageReader([]), None))
    task.start({TASK_CLASS: "com.example.Task"})

    task.poll_converted(500, 1.5)
    task.poll_converted(500, 0.0, rest_of_poll=True)

    assert host.polls == [(500, 1500, 0), (500, 0, 1)]
