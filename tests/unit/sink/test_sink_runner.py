"""A sink task's life cycle over Arrow rows: open, put in chunks, pre_commit, close, stop;
converters and errors.tolerance (no broker: no DLQ topic is configured here)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any, ClassVar

import pyarrow as pa
import pytest

from spark_eos_connect.api.config import ConfigDef
from spark_eos_connect.api.data import Schema, SchemaAndValue, Struct
from spark_eos_connect.api.sink import SinkConnector, SinkRecord, SinkTask, TopicPartition
from spark_eos_connect.converters import ByteArrayConverter, ConnectColumn, Converter
from spark_eos_connect.errors import DataError, EosConnectError
from spark_eos_connect.runtime.errors_dlq import ErrorPolicy, ErrorReporter, ToleranceExceededError
from spark_eos_connect.sink.kafka_input import KAFKA_ROW_SCHEMA
from spark_eos_connect.sink.plan import SinkTaskPlan
from spark_eos_connect.sink.rows import chunks
from spark_eos_connect.sink.runner import SinkTaskResult, merge_committable, run_sink_task


class RecordingTask(SinkTask):
    """Records every call in a class-level list (tests run it in-process)."""

    calls: ClassVar[list[tuple[str, Any]]] = []
    fail_on: ClassVar[set[Any]] = set()
    commit_only: ClassVar[dict[TopicPartition, int] | None] = None

    def start(self, props: dict[str, str]) -> None:
        self.calls.append(("start", props.get("marker")))

    def open(self, partitions: Iterable[TopicPartition]) -> None:
        self.calls.append(("open", sorted(partitions)))
        if props_skip := self.context.configs().get("skip.below"):
            self.context.offset(TopicPartition("t", 0), int(props_skip))

    def put(self, records: list[SinkRecord]) -> None:
        if any(isinstance(r.value, bytes) and r.value in self.fail_on for r in records):
            raise RuntimeError("cannot write " + ",".join(str(r.value) for r in records))
        self.calls.append(("put", [(r.kafka_partition, r.kafka_offset, r.value) for r in records]))

    def pre_commit(self, current_offsets: dict[TopicPartition, int]) -> dict[TopicPartition, int]:
        self.calls.append(("pre_commit", dict(current_offsets)))
        return dict(self.commit_only if self.commit_only is not None else current_offsets)

    def close(self, partitions: Iterable[TopicPartition]) -> None:
        self.calls.append(("close", sorted(partitions)))

    def stop(self) -> None:
        self.calls.append(("stop", None))


class RecordingConnector(SinkConnector):
    def config_def(self) -> ConfigDef:
        return ConfigDef()

    def start(self, props: dict[str, str]) -> None:
        self.props = props

    def stop(self) -> None:
        pass

    def task_class(self) -> type[SinkTask]:
        return RecordingTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [{"marker": f"task-{i}"} for i in range(max_tasks)]


@pytest.fixture(autouse=True)
def reset_recording() -> None:
    RecordingTask.calls = []
    RecordingTask.fail_on = set()
    RecordingTask.commit_only = None


def rows(*records: tuple[int, int, bytes | None]) -> pa.RecordBatch:
    """Kafka rows of topic `t`: (partition, offset, value)."""
    data = {
        "topic": ["t"] * len(records),
        "partition": [p for p, _, _ in records],
        "offset": [o for _, o, _ in records],
        "timestamp": [1_700_000_000_000_000] * len(records),
        "key": [b"k"] * len(records),
        "value": [v for _, _, v in records],
        "headers": [[{"key": "h", "value": b"1"}]] * len(records),
    }
    return pa.RecordBatch.from_pydict(data, schema=KAFKA_ROW_SCHEMA)


def plan(
    max_poll_records: int = 500,
    tolerate_all: bool = False,
    value_converter: str = "ByteArrayConverter",
    task_configs: list[dict[str, str]] | None = None,
    **converters: str,
) -> SinkTaskPlan:
    options = {"value.converter.schemas.enable": "false"}
    return SinkTaskPlan(
        connector="rec",
        task_class=f"{RecordingTask.__module__}.RecordingTask",
        task_configs=task_configs or [{"marker": "task-0"}],
        max_poll_records=max_poll_records,
        errors=ErrorPolicy("rec", tolerate_all=tolerate_all),
        kafka={"bootstrap.servers": "unused:9092"},
        value_converter=value_converter,
        header_converter=converters.pop("header_converter", "ByteArrayConverter"),
        converter_options={**options, **converters},
    )


def test_life_cycle_and_pre_commit_offsets_are_next_offsets() -> None:
    batches = [rows((0, 3, b"a"), (1, 7, b"b")), rows((0, 5, b"c"))]

    result = run_sink_task(plan(max_poll_records=2), 0, batches, batch_id=None)

    tp0, tp1 = TopicPartition("t", 0), TopicPartition("t", 1)
    assert RecordingTask.calls == [
        ("start", "task-0"),
        ("open", [tp0, tp1]),
        ("put", [(0, 3, b"a"), (1, 7, b"b")]),
        ("put", [(0, 5, b"c")]),
        ("pre_commit", {tp0: 6, tp1: 8}),
        ("close", [tp0, tp1]),
        ("stop", None),
    ]
    assert result.records_put == 3
    assert result.current == [("t", 0, 6), ("t", 1, 8)]
    assert result.committable == [("t", 0, 6), ("t", 1, 8)]


def test_only_what_pre_commit_returns_is_committable() -> None:
    RecordingTask.commit_only = {TopicPartition("t", 0): 2, TopicPartition("other", 0): 9}

    result = run_sink_task(plan(), 0, [rows((0, 3, b"a"), (1, 7, b"b"))], batch_id=None)

    assert result.committable == [("t", 0, 2)]


def test_spark_task_number_picks_the_task_config() -> None:
    configs = [{"marker": "task-0"}, {"marker": "task-1"}]

    run_sink_task(plan(task_configs=configs), 3, [rows((0, 0, b"a"))], batch_id=None)

    assert RecordingTask.calls[0] == ("start", "task-1")


class CaptureTask(RecordingTask):
    seen: ClassVar[list[SinkRecord]] = []

    def put(self, records: list[SinkRecord]) -> None:
        self.seen.extend(records)


def test_records_carry_key_headers_and_millisecond_timestamps() -> None:
    capture_plan = plan()
    object.__setattr__(capture_plan, "task_class", f"{CaptureTask.__module__}.CaptureTask")

    run_sink_task(capture_plan, 0, [rows((0, 0, b"v"))], batch_id=None)

    bytes_schema = Schema.OPTIONAL_BYTES  # what ByteArrayConverter reads, as in Connect
    headers = (("h", b"1"),)
    expected = SinkRecord(
        "t", 0, 0, b"k", b"v", 1_700_000_000_000, headers, bytes_schema, bytes_schema
    )
    assert CaptureTask.seen == [expected]


def test_put_failure_with_tolerance_none_fails_naming_the_records() -> None:
    RecordingTask.fail_on = {b"bad"}

    with pytest.raises(EosConnectError, match="topic=t partition=0 offset=3") as caught:
        run_sink_task(plan(), 0, [rows((0, 3, b"ok"), (0, 4, b"bad"))], batch_id=None)

    assert "errors.tolerance=none" in str(caught.value)
    assert ("stop", None) in RecordingTask.calls
    assert not [c for c in RecordingTask.calls if c[0] == "pre_commit"]


def test_put_failure_with_tolerance_all_skips_only_the_failing_record() -> None:
    RecordingTask.fail_on = {b"bad"}

    result = run_sink_task(
        plan(tolerate_all=True), 0, [rows((0, 3, b"ok"), (0, 4, b"bad"), (0, 5, b"ok2"))], None
    )

    puts = [c[1] for c in RecordingTask.calls if c[0] == "put"]
    assert puts == [[(0, 3, b"ok")], [(0, 5, b"ok2")]]
    assert result.records_failed == 1
    assert result.committable == [("t", 0, 6)]


def test_converter_failure_with_tolerance_none_names_topic_partition_offset() -> None:
    batch = rows((0, 3, b'{"a":1}'), (1, 8, b"not json"))

    with pytest.raises(ToleranceExceededError) as caught:
        run_sink_task(plan(value_converter="JsonConverter"), 0, [batch], batch_id=None)

    message = str(caught.value)
    assert "topic=t partition=1 offset=8" in message
    assert "VALUE_CONVERTER" in message


def test_converter_failure_with_tolerance_all_is_skipped_but_consumed() -> None:
    batch = rows((0, 3, b'{"a":1}'), (0, 4, b"not json"))

    result = run_sink_task(
        plan(value_converter="JsonConverter", tolerate_all=True), 0, [batch], None
    )

    assert [c[1] for c in RecordingTask.calls if c[0] == "put"] == [[(0, 3, {"a": 1})]]
    assert result.records_failed == 1
    assert result.committable == [("t", 0, 5)]


def test_offsets_requested_in_open_skip_earlier_records() -> None:
    configs = [{"marker": "task-0", "skip.below": "5"}]

    result = run_sink_task(
        plan(task_configs=configs), 0, [rows((0, 4, b"old"), (0, 5, b"new"))], None
    )

    assert [c[1] for c in RecordingTask.calls if c[0] == "put"] == [[(0, 5, b"new")]]
    assert result.committable == [("t", 0, 6)]


def test_no_rows_means_no_pre_commit_and_nothing_to_commit() -> None:
    result = run_sink_task(plan(), 0, [], batch_id=None)

    assert result.committable == []
    assert RecordingTask.calls == [("start", "task-0"), ("stop", None)]


def test_merge_committable_takes_the_highest_offset_per_partition() -> None:
    results = [
        SinkTaskResult(0, 1, 0, [], [("t", 0, 5), ("t", 1, 2)]),
        SinkTaskResult(1, 1, 0, [], [("t", 0, 9)]),
    ]

    assert merge_committable(results) == {("t", 0): 9, ("t", 1): 2}


class SchemaRecordingTask(RecordingTask):
    """Records what the converters made of each record."""

    seen: ClassVar[list[SinkRecord]] = []

    def put(self, records: list[SinkRecord]) -> None:
        self.seen.extend(records)


def test_json_converter_with_schemas_gives_connect_data_and_schemas() -> None:
    SchemaRecordingTask.seen = []
    envelope = (
        b'{"schema":{"type":"struct","fields":[{"type":"int32","field":"n"}],"name":"N"},'
        b'"payload":{"n":42}}'
    )
    sink_plan = dataclasses.replace(
        plan(value_converter="JsonConverter", **{"value.converter.schemas.enable": "true"}),
        task_class=f"{SchemaRecordingTask.__module__}.SchemaRecordingTask",
        key_converter="org.apache.kafka.connect.storage.StringConverter",
    )

    run_sink_task(sink_plan, 0, [rows((0, 3, envelope))], None)

    [record] = SchemaRecordingTask.seen
    assert record.key_schema == Schema.OPTIONAL_STRING
    assert record.value_schema is not None and record.value_schema.name == "N"
    assert isinstance(record.value, Struct) and record.value.get("n") == 42


def test_header_converter_turns_header_bytes_into_values() -> None:
    SchemaRecordingTask.seen = []
    sink_plan = dataclasses.replace(
        plan(header_converter="SimpleHeaderConverter"),
        task_class=f"{SchemaRecordingTask.__module__}.SchemaRecordingTask",
    )

    run_sink_task(sink_plan, 0, [rows((0, 3, b"v"))], None)

    [record] = SchemaRecordingTask.seen
    assert list(record.headers) == [("h", 1)]
    assert (record.key_schema, record.value_schema) == (
        Schema.OPTIONAL_BYTES,
        Schema.OPTIONAL_BYTES,
    )


def test_string_converter_failure_is_a_value_converter_failure() -> None:
    with pytest.raises(ToleranceExceededError, match="VALUE_CONVERTER"):
        run_sink_task(plan(value_converter="StringConverter"), 0, [rows((0, 3, b"\xff"))], None)


class PickyConverter(ByteArrayConverter):
    """Fails keys and values it is told to; counts whole-column conversions."""

    columns: ClassVar[int] = 0

    def to_connect_data(self, topic: str, data: bytes | None) -> SchemaAndValue:
        if data is not None and data.startswith(b"bad"):
            raise DataError(f"cannot read {data!r}")
        return super().to_connect_data(topic, data)

    def to_connect_column(self, topic: str, data: pa.Array) -> ConnectColumn:
        PickyConverter.columns += 1
        return Converter.to_connect_column(self, topic, data)


def test_columns_convert_at_once_and_a_failing_record_is_reported_alone() -> None:
    picky = f"{PickyConverter.__module__}.PickyConverter"
    batch = pa.RecordBatch.from_pydict(
        {
            "topic": ["t"] * 4,
            "partition": [0] * 4,
            "offset": [1, 2, 3, 4],
            "key": [b"k", b"bad-key", b"k", b"k"],
            "value": [b"a", b"bad-too", b"bad-value", b"d"],
        }
    )
    PickyConverter.columns = 0
    task_plan = dataclasses.replace(
        plan(tolerate_all=True, value_converter=picky), key_converter=picky
    )

    reported: list[Any] = []
    original = ErrorReporter.report
    ErrorReporter.report = lambda self, failed: reported.append(failed)  # type: ignore[method-assign]
    try:
        result = run_sink_task(task_plan, 0, [batch], None)
    finally:
        ErrorReporter.report = original  # type: ignore[method-assign]

    assert [c[1] for c in RecordingTask.calls if c[0] == "put"] == [[(0, 1, b"a"), (0, 4, b"d")]]
    # the key failed first at offset 2 (its value is not reported), the value at offset 3
    assert [(f.offset, f.stage.name) for f in reported] == [
        (2, "KEY_CONVERTER"),
        (3, "VALUE_CONVERTER"),
    ]
    assert PickyConverter.columns == 2  # one try per column, then record by record
    assert result.committable == [("t", 0, 5)]


def test_chunks_span_batches_and_keep_topic_runs_and_next_offsets() -> None:
    mixed = pa.RecordBatch.from_pydict(
        {
            "topic": ["t", "t", "u"],
            "partition": [0, 1, 0],
            "offset": [1, 1, 9],
            "value": [b"a", b"b", b"c"],
        }
    )

    (only,) = chunks([mixed.slice(0, 2), mixed.slice(2)], 5)

    assert list(only.topic_runs()) == [("t", 0, 2), ("u", 2, 3)]
    assert only.next_offsets() == {("t", 0): 2, ("t", 1): 2, ("u", 0): 10}
    assert only.raw(2).value == b"c" and only.raw(2).key is None
    assert [len(c) for c in chunks([mixed, mixed, mixed], 4)] == [4, 4, 1]
