"""Sink API: pre_commit's default, the task context's requests, connector defaults."""

from __future__ import annotations

import pytest

from spark_eos_connect.api import (
    ConfigDef,
    SinkConnector,
    SinkRecord,
    SinkTask,
    SinkTaskContext,
    TopicPartition,
)
from spark_eos_connect.api.sink import SinkRecords, record_field
from spark_eos_connect.errors import EosConnectError


class RecordingTask(SinkTask):
    def __init__(self) -> None:
        self.calls: list[tuple[str, object]] = []

    def start(self, props: dict[str, str]) -> None:
        self.calls.append(("start", props))

    def put(self, records: list[SinkRecord]) -> None:
        self.calls.append(("put", records))

    def flush(self, current_offsets: dict[TopicPartition, int]) -> None:
        self.calls.append(("flush", dict(current_offsets)))

    def stop(self) -> None:
        self.calls.append(("stop", None))


def test_pre_commit_default_flushes_then_returns_its_argument() -> None:
    task = RecordingTask()
    offsets = {TopicPartition("t", 0): 10, TopicPartition("t", 1): 4}
    returned = task.pre_commit(offsets)
    assert returned is offsets
    assert task.calls == [("flush", offsets)]


def test_pre_commit_override_can_keep_offsets_itself() -> None:
    class SelfManaged(RecordingTask):
        def pre_commit(
            self, current_offsets: dict[TopicPartition, int]
        ) -> dict[TopicPartition, int]:
            return {}

    assert SelfManaged().pre_commit({TopicPartition("t", 0): 1}) == {}


def test_default_hooks_do_nothing() -> None:
    task = RecordingTask()
    task.open([TopicPartition("t", 0)])
    task.close([TopicPartition("t", 0)])
    SinkTask.flush(task, {})
    assert task.calls == []
    with pytest.raises(EosConnectError, match="not been initialized"):
        _ = task.context
    context = SinkTaskContext({"a": "b"})
    task.initialize(context)
    assert task.context is context


def test_sink_record_fields_and_topic_partition() -> None:
    rec = SinkRecord("t", 2, 41, b"k", b"v", timestamp=1700000000000)
    assert rec.topic_partition == TopicPartition("t", 2)
    assert rec.topic_partition == ("t", 2)
    assert tuple(rec.headers) == ()


def test_context_collects_offset_resets_and_commit_requests() -> None:
    context = SinkTaskContext({"topics": "t"}, [TopicPartition("t", 0)])
    assert context.configs() == {"topics": "t"}
    assert context.assignment() == {TopicPartition("t", 0)}
    context.update_assignment([TopicPartition("t", 1)])
    assert context.assignment() == {TopicPartition("t", 1)}
    context.offset(TopicPartition("t", 1), 7)
    context.offsets({TopicPartition("t", 2): 0})
    assert context.take_offset_resets() == {TopicPartition("t", 1): 7, TopicPartition("t", 2): 0}
    assert context.take_offset_resets() == {}
    assert not context.take_commit_request()
    context.request_commit()
    assert context.take_commit_request()
    assert not context.take_commit_request()


@pytest.mark.parametrize("bad", [-1, True, 1.5])
def test_context_rejects_bad_offsets(bad: object) -> None:
    with pytest.raises(EosConnectError, match="t-0"):
        SinkTaskContext({}).offset(TopicPartition("t", 0), bad)  # type: ignore[arg-type]


def test_sink_connector_alter_offsets_defaults_to_false() -> None:
    class Connector(SinkConnector):
        def config_def(self) -> ConfigDef:
            return ConfigDef()

        def start(self, props: dict[str, str]) -> None:
            pass

        def stop(self) -> None:
            pass

        def task_class(self) -> type[SinkTask]:
            return RecordingTask

        def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
            return []

    assert Connector().alter_offsets({}, {TopicPartition("t", 0): None}) is False
    assert Connector().validate({}) == []


def _columns() -> list[list[object]]:
    """Two records' columns, in `RECORD_FIELDS` order."""
    fields = [["t", "t"], [0, 1], [5, 9], [None, b"k"], ["a", "b"], [1, 2], [(), ()]]
    return [*fields, [None, None], [None, None]]


def test_sink_records_read_a_column_without_making_records() -> None:
    records = SinkRecords(_columns())
    assert len(records) == 2
    assert record_field(records, "value") == ["a", "b"]
    assert records._records is None  # nothing made yet


def test_sink_records_are_made_once_and_keep_changes() -> None:
    records = SinkRecords(_columns())
    first = records[0]
    assert first == SinkRecord("t", 0, 5, None, "a", 1)
    assert records[0] is first and next(iter(records)) is first
    first.value = "changed"
    assert record_field(records, "value") == ["changed", "b"]
    assert records == [first, SinkRecord("t", 1, 9, b"k", "b", 2)]


def test_sink_records_of_made_records_and_record_field_of_a_list() -> None:
    made = [SinkRecord("t", 0, 0, None, "x")]
    assert SinkRecords.of(made) == made
    assert record_field(made, "kafka_offset") == [0]
    with pytest.raises(ValueError):
        SinkRecords([["t"]])
