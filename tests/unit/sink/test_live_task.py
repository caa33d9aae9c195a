"""A sink task kept across micro-batches (`sink.live_task`): one start, partitions opened at the
group's committed offsets, its own position while batches follow each other, `context.offset`
from `open` on, pre_commit, close and stop; converters and errors.tolerance (no broker: an
in-memory input, and no DLQ topic is configured here)."""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import pyarrow as pa
import pytest

from spark_eos_connect.api.config import ConfigDef
from spark_eos_connect.api.data import Schema, SchemaAndValue, Struct
from spark_eos_connect.api.sink import SinkConnector, SinkRecord, SinkTask, TopicPartition
from spark_eos_connect.converters import ByteArrayConverter, ConnectColumn, Converter
from spark_eos_connect.errors import DataError, EosConnectError
from spark_eos_connect.kafka.range_reader import OffsetRange
from spark_eos_connect.protocol.sink_groups import TP
from spark_eos_connect.runtime.errors_dlq import ErrorPolicy, ErrorReporter, ToleranceExceededError
from spark_eos_connect.sink.kafka_input import KAFKA_ROW_SCHEMA
from spark_eos_connect.sink.live_task import (
    LiveSinkTask,
    SinkBatch,
    SinkTaskResult,
    kept_partitions,
)
from spark_eos_connect.sink.plan import SinkTaskPlan
from spark_eos_connect.sink.rows import RecordChunk, chunks

TP0, TP1, TP2 = TopicPartition("t", 0), TopicPartition("t", 1), TopicPartition("t", 2)


class RecordingTask(SinkTask):
    """Records every call in a class-level list (tests run it in-process)."""

    calls: ClassVar[list[tuple[str, Any]]] = []
    fail_on: ClassVar[set[Any]] = set()
    fail_start: ClassVar[bool] = False
    commit_only: ClassVar[dict[TopicPartition, int] | None] = None
    open_moves: ClassVar[dict[TopicPartition, int]] = {}
    """`context.offset` requests made in every `open` of these partitions."""
    put_moves: ClassVar[dict[tuple[int, int], int]] = {}
    """(partition, offset) → offset: once a put holds that record, move its partition there."""

    def start(self, props: dict[str, str]) -> None:
        self.calls.append(("start", props.get("marker")))
        if self.fail_start:
            raise RuntimeError("cannot start")

    def open(self, partitions: Iterable[TopicPartition]) -> None:
        opened = sorted(partitions)
        self.calls.append(("open", opened))
        for tp in opened:
            if tp in self.open_moves:
                self.context.offset(tp, self.open_moves[tp])

    def put(self, records: Sequence[SinkRecord]) -> None:
        if any(isinstance(r.value, bytes) and r.value in self.fail_on for r in records):
            raise RuntimeError("cannot write " + ",".join(str(r.value) for r in records))
        self.calls.append(("put", [(r.kafka_partition, r.kafka_offset, r.value) for r in records]))
        for r in records:
            target = self.put_moves.pop((r.kafka_partition, r.kafka_offset), None)
            if target is not None:
                self.context.offset(TopicPartition(r.topic, r.kafka_partition), target)

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
    RecordingTask.fail_start = False
    RecordingTask.commit_only = None
    RecordingTask.open_moves = {}
    RecordingTask.put_moves = {}


# -- an in-memory input ------------------------------------------------------------------------


@dataclass(frozen=True)
class Msg:
    """One record held by `MemoryInput`."""

    value: bytes | None
    key: bytes | None = b"k"
    headers: tuple[tuple[str, bytes], ...] = (("h", b"1"),)


TIMESTAMP_US = 1_700_000_000_000_000


def kafka_rows(topic: str, partition: int, records: Sequence[tuple[int, Msg]]) -> pa.RecordBatch:
    """Kafka rows (`KAFKA_ROW_SCHEMA`) of `(offset, record)` pairs of one partition."""
    data = {
        "topic": [topic] * len(records),
        "partition": [partition] * len(records),
        "offset": [offset for offset, _ in records],
        "timestamp": [TIMESTAMP_US] * len(records),
        "key": [m.key for _, m in records],
        "value": [m.value for _, m in records],
        "headers": [[{"key": k, "value": v} for k, v in m.headers] for _, m in records],
    }
    return pa.RecordBatch.from_pydict(data, schema=KAFKA_ROW_SCHEMA)


class MemoryInput:
    """A `SinkTaskInput` twin: committed offsets from a dict, records from a dict per partition
    (offsets may have gaps, as around commit markers), read in Arrow batches of `batch_rows`."""

    def __init__(self, committed: Mapping[TP, int] | None = None, batch_rows: int = 2) -> None:
        self.records: dict[TP, dict[int, Msg]] = {}
        self.committed_offsets: dict[TP, int] = dict(committed or {})
        self.batch_rows = batch_rows
        self.reads: list[OffsetRange] = []
        self.asked: list[list[TP]] = []
        self.forgotten: list[TP] = []
        self.closed = False

    def add(self, partition: int, values: Mapping[int, bytes | Msg | None]) -> MemoryInput:
        """Hold records of `t-<partition>` at these offsets."""
        held = self.records.setdefault(("t", partition), {})
        for offset, value in values.items():
            held[offset] = value if isinstance(value, Msg) else Msg(value)
        return self

    def committed(self, partitions: Sequence[TP]) -> dict[TP, int]:
        self.asked.append(list(partitions))
        return {tp: self.committed_offsets[tp] for tp in partitions if tp in self.committed_offsets}

    def read(self, ranges: Sequence[OffsetRange]) -> Iterator[RecordChunk]:
        """The ranges' records, the partitions' batches taken in turn (as a consumer's polls
        interleave its partitions)."""
        self.reads.extend(ranges)
        parts = []
        for offsets in ranges:
            held = self.records.get((offsets.topic, offsets.partition), {})
            wanted = [(o, held[o]) for o in sorted(held) if offsets.start <= o < offsets.end]
            size = self.batch_rows
            parts.append(
                [
                    RecordChunk.of(
                        kafka_rows(offsets.topic, offsets.partition, wanted[i : i + size])
                    )
                    for i in range(0, len(wanted), size)
                ]
            )
        return iter([p for turn in itertools.zip_longest(*parts) for p in turn if p is not None])

    def forget(self, partitions: Sequence[TP]) -> None:
        self.forgotten.extend(partitions)

    def close(self) -> None:
        self.closed = True


def values(count: int, start: int = 0) -> dict[int, bytes | Msg | None]:
    """Records `v<offset>` at offsets `[start, start + count)`."""
    return {o: f"v{o}".encode() for o in range(start, start + count)}


def batch(
    batch_id: int | None,
    *ranges: tuple[int, int, int],
    task: int = 0,
    run_id: str | None = "run-1",
    generation: int = 1,
) -> SinkBatch:
    """Task `task`'s share of a micro-batch: `(partition, start, end)` of topic `t`."""
    offsets = tuple(OffsetRange("t", p, start, end) for p, start, end in ranges)
    return SinkBatch(task, batch_id, run_id, generation, offsets)


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


def run_once(
    sink_plan: SinkTaskPlan, source: MemoryInput, *ranges: tuple[int, int, int], task: int = 0
) -> SinkTaskResult:
    """One micro-batch of a new task, then `close()` (also when it fails)."""
    first = batch(0, *ranges, task=task)
    live = LiveSinkTask(sink_plan, first, source)
    try:
        return live.run_batch(first)
    finally:
        live.close()


def puts() -> list[object]:
    return [c[1] for c in RecordingTask.calls if c[0] == "put"]


def put_offsets() -> list[int]:
    return [offset for records in puts() for _, offset, _ in records]  # type: ignore[attr-defined]


# -- one micro-batch ---------------------------------------------------------------------------


def test_life_cycle_and_pre_commit_offsets_are_next_offsets() -> None:
    source = MemoryInput().add(0, {3: b"a", 5: b"c"}).add(1, {7: b"b"})

    result = run_once(plan(max_poll_records=2), source, (0, 3, 6), (1, 7, 8))

    assert RecordingTask.calls == [
        ("start", "task-0"),
        ("open", [TP0, TP1]),
        ("put", [(0, 3, b"a"), (0, 5, b"c")]),
        ("put", [(1, 7, b"b")]),
        ("pre_commit", {TP0: 6, TP1: 8}),
        ("close", [TP0, TP1]),
        ("stop", None),
    ]
    assert result.records_put == 3
    assert result.started
    assert result.current == [("t", 0, 6), ("t", 1, 8)]
    assert result.committable == [("t", 0, 6), ("t", 1, 8)]
    assert source.closed


def test_only_what_pre_commit_returns_is_committable() -> None:
    RecordingTask.commit_only = {TP0: 2, TopicPartition("other", 0): 9}
    source = MemoryInput().add(0, {3: b"a"}).add(1, {7: b"b"})

    result = run_once(plan(), source, (0, 3, 4), (1, 7, 8))

    assert result.committable == [("t", 0, 2)]


def test_an_invalid_pre_commit_offset_fails_the_batch() -> None:
    RecordingTask.commit_only = {TP0: -1}

    with pytest.raises(EosConnectError, match="invalid offset -1 for t-0"):
        run_once(plan(), MemoryInput().add(0, {0: b"a"}), (0, 0, 1))


def test_spark_task_number_picks_the_task_config() -> None:
    configs = [{"marker": "task-0"}, {"marker": "task-1"}]

    run_once(plan(task_configs=configs), MemoryInput().add(0, {0: b"a"}), (0, 0, 1), task=3)

    assert RecordingTask.calls[0] == ("start", "task-1")


class CaptureTask(RecordingTask):
    seen: ClassVar[list[SinkRecord]] = []

    def put(self, records: Sequence[SinkRecord]) -> None:
        self.seen.extend(records)


def test_records_carry_key_headers_and_millisecond_timestamps() -> None:
    CaptureTask.seen = []
    capture_plan = dataclasses.replace(plan(), task_class=f"{CaptureTask.__module__}.CaptureTask")

    run_once(capture_plan, MemoryInput().add(0, {0: b"v"}), (0, 0, 1))

    bytes_schema = Schema.OPTIONAL_BYTES  # what ByteArrayConverter reads, as in Connect
    headers = (("h", b"1"),)
    expected = SinkRecord(
        "t", 0, 0, b"k", b"v", TIMESTAMP_US // 1000, headers, bytes_schema, bytes_schema
    )
    assert CaptureTask.seen == [expected]


def test_no_partitions_means_no_open_no_pre_commit_and_nothing_to_commit() -> None:
    result = run_once(plan(), MemoryInput())

    assert result.committable == []
    assert RecordingTask.calls == [("start", "task-0"), ("stop", None)]


class RecordingHooks:
    def __init__(self) -> None:
        self.reached_at: list[tuple[str, int | None]] = []

    def reached(self, point: str, batch_id: int | None) -> None:
        self.reached_at.append((point, batch_id))

    def armed(self, point: str) -> bool:
        return False


def test_the_put_hook_is_reached_once_per_batch_with_records() -> None:
    hooks = RecordingHooks()
    sink_plan = dataclasses.replace(plan(max_poll_records=1), hooks=hooks)
    source = MemoryInput().add(0, values(3))
    live = LiveSinkTask(sink_plan, batch(4), source)

    live.run_batch(batch(4, (0, 0, 3)))
    live.run_batch(batch(5, (0, 3, 3)))

    assert hooks.reached_at == [("put", 4)]


# -- across micro-batches ----------------------------------------------------------------------


def test_one_start_for_consecutive_batches_and_close_and_stop_only_on_close() -> None:
    source = MemoryInput().add(0, values(4))
    first = batch(0, (0, 0, 2))
    live = LiveSinkTask(plan(), first, source)

    results = [live.run_batch(b) for b in (first, batch(1, (0, 2, 4)), batch(2, (0, 4, 4)))]

    assert RecordingTask.calls == [
        ("start", "task-0"),
        ("open", [TP0]),
        ("put", [(0, 0, b"v0"), (0, 1, b"v1")]),
        ("pre_commit", {TP0: 2}),
        ("put", [(0, 2, b"v2"), (0, 3, b"v3")]),
        ("pre_commit", {TP0: 4}),
        ("pre_commit", {TP0: 4}),
    ]
    assert [r.started for r in results] == [True, False, False]
    assert [r.records_put for r in results] == [2, 2, 0]
    assert source.asked == [[("t", 0)]]  # committed offsets only when opening
    assert not source.closed

    live.close()
    live.close()  # idempotent

    assert RecordingTask.calls[-2:] == [("close", [TP0]), ("stop", None)]
    assert len(RecordingTask.calls) == 9
    assert source.closed


def test_a_failing_start_lets_go_of_the_input() -> None:
    RecordingTask.fail_start = True
    source = MemoryInput()

    with pytest.raises(RuntimeError, match="cannot start"):
        LiveSinkTask(plan(), batch(0), source)

    assert source.closed


def test_a_partition_opens_at_the_committed_offset_else_at_the_range_start() -> None:
    source = MemoryInput(committed={("t", 0): 2}).add(0, values(5)).add(1, values(4))
    first = batch(0, (0, 0, 5), (1, 1, 3))
    live = LiveSinkTask(plan(), first, source)

    result = live.run_batch(first)

    # the partitions are read together: one put holds both, in the order they were fetched
    assert puts() == [[(0, 2, b"v2"), (0, 3, b"v3"), (1, 1, b"v1"), (1, 2, b"v2"), (0, 4, b"v4")]]
    assert source.reads == [OffsetRange("t", 0, 2, 5), OffsetRange("t", 1, 1, 3)]
    assert result.committable == [("t", 0, 5), ("t", 1, 3)]


def test_pre_commit_gets_every_assigned_partition_and_the_position_passes_gaps() -> None:
    # t-0 has records at 3 and 5 up to 8 (commit markers between); t-1 nothing new; t-2 is
    # moved in open
    RecordingTask.open_moves = {TP2: 4}
    source = MemoryInput(committed={("t", 1): 7}).add(0, {3: b"a", 5: b"b", 8: b"c"})
    first = batch(0, (0, 0, 8), (1, 7, 7), (2, 0, 0))
    live = LiveSinkTask(plan(), first, source)

    live.run_batch(first)
    result = live.run_batch(batch(1, (0, 8, 9), (1, 7, 7), (2, 0, 0)))

    pre_commits = [c[1] for c in RecordingTask.calls if c[0] == "pre_commit"]
    assert pre_commits == [{TP0: 6, TP1: 7, TP2: 4}, {TP0: 9, TP1: 7, TP2: 4}]
    # the second batch continues from the position (8), not from the last record + 1 (6)
    assert source.reads[-1] == OffsetRange("t", 0, 8, 9)
    assert puts()[-1] == [(0, 8, b"c")]
    assert result.current == [("t", 0, 9), ("t", 1, 7), ("t", 2, 4)]


def test_offset_in_open_rewinds_and_records_are_read_again_up_to_the_end() -> None:
    RecordingTask.open_moves = {TP0: 1}
    source = MemoryInput(committed={("t", 0): 3}).add(0, values(5))

    result = run_once(plan(), source, (0, 3, 5))

    assert put_offsets() == [1, 2, 3, 4]
    assert source.reads == [OffsetRange("t", 0, 1, 5)]
    assert result.committable == [("t", 0, 5)]


def test_offset_in_open_forward_skips_earlier_records() -> None:
    RecordingTask.open_moves = {TP0: 3}

    result = run_once(plan(), MemoryInput().add(0, values(5)), (0, 0, 5))

    assert put_offsets() == [3, 4]
    assert result.committable == [("t", 0, 5)]


def test_offset_in_open_past_the_end_puts_nothing_and_pre_commit_gets_it() -> None:
    RecordingTask.open_moves = {TP0: 9}

    result = run_once(plan(), MemoryInput().add(0, values(5)), (0, 0, 5))

    assert puts() == []
    assert ("pre_commit", {TP0: 9}) in RecordingTask.calls
    assert result.committable == [("t", 0, 9)]


def test_a_rewind_during_put_takes_effect_right_after_that_put() -> None:
    RecordingTask.put_moves = {(0, 1): 0}

    result = run_once(plan(max_poll_records=1), MemoryInput().add(0, values(4)), (0, 0, 4))

    assert put_offsets() == [0, 1, 0, 1, 2, 3]
    assert result.records_put == 6
    assert result.committable == [("t", 0, 4)]


def test_a_forward_move_during_put_skips_the_rest_of_the_chunk_read() -> None:
    RecordingTask.put_moves = {(0, 0): 4}
    source = MemoryInput(batch_rows=5).add(0, values(6))

    result = run_once(plan(max_poll_records=2), source, (0, 0, 6))

    assert puts() == [[(0, 0, b"v0"), (0, 1, b"v1")], [(0, 4, b"v4"), (0, 5, b"v5")]]
    assert source.reads == [OffsetRange("t", 0, 0, 6), OffsetRange("t", 0, 4, 6)]
    assert result.committable == [("t", 0, 6)]


@pytest.mark.parametrize(
    ("second", "expected"),
    [
        pytest.param(batch(2, (0, 2, 4)), [1, 2, 3], id="batch-id-skipped"),
        pytest.param(batch(1, (0, 3, 5)), [1, 2, 3, 4], id="range-not-where-the-last-ended"),
        pytest.param(batch(None, (0, 2, 4)), [1, 2, 3], id="no-batch-id"),
    ],
)
def test_a_gap_between_batches_reopens_from_the_committed_offsets(
    second: SinkBatch, expected: list[int]
) -> None:
    RecordingTask.commit_only = {}  # the task buffers: the group keeps nothing of batch 0
    source = MemoryInput().add(0, values(6))
    first = batch(0, (0, 0, 2))
    live = LiveSinkTask(plan(), first, source)
    live.run_batch(first)
    source.committed_offsets[("t", 0)] = 1  # what another host's task got committed meanwhile
    RecordingTask.calls.clear()

    result = live.run_batch(second)

    assert RecordingTask.calls[:2] == [("close", [TP0]), ("open", [TP0])]
    assert put_offsets() == expected
    assert not result.started
    assert source.asked == [[("t", 0)], [("t", 0)]]


def test_kept_partitions_are_those_the_previous_batch_ended_at() -> None:
    last_end = {("t", 0): 5, ("t", 1): 3}
    ranges = ((0, 5, 7), (1, 4, 6), (2, 0, 1))

    assert kept_partitions(3, last_end, batch(4, *ranges)) == {("t", 0)}
    assert kept_partitions(3, last_end, batch(5, *ranges)) == set()
    assert kept_partitions(3, last_end, batch(3, *ranges)) == set()
    assert kept_partitions(None, last_end, batch(4, *ranges)) == set()
    assert kept_partitions(3, last_end, batch(None, *ranges)) == set()
    assert kept_partitions(3, {}, batch(4, *ranges)) == set()


def test_a_partition_taken_away_is_closed_and_a_new_one_opened() -> None:
    source = MemoryInput().add(0, values(1)).add(1, values(2)).add(2, values(1))
    first = batch(0, (0, 0, 1), (1, 0, 1))
    live = LiveSinkTask(plan(), first, source)
    live.run_batch(first)
    RecordingTask.calls.clear()

    result = live.run_batch(batch(1, (1, 1, 2), (2, 0, 1)))

    assert RecordingTask.calls == [
        ("close", [TP0]),
        ("open", [TP2]),
        ("put", [(1, 1, b"v1"), (2, 0, b"v0")]),
        ("pre_commit", {TP1: 2, TP2: 1}),
    ]
    assert source.forgotten == [("t", 0)]  # its consumer stops fetching it
    assert live.context.assignment() == {TP1, TP2}
    assert result.committable == [("t", 1, 2), ("t", 2, 1)]
    live.close()
    assert RecordingTask.calls[-2:] == [("close", [TP1, TP2]), ("stop", None)]


def test_matches_only_the_same_task_run_generation_and_plan() -> None:
    sink_plan = plan()
    first = batch(0, (0, 0, 0))
    live = LiveSinkTask(sink_plan, first, MemoryInput())

    assert live.matches(sink_plan, first)
    assert live.matches(dataclasses.replace(sink_plan, hooks=RecordingHooks()), batch(7))
    assert not live.matches(sink_plan, dataclasses.replace(first, run_id="run-2"))
    assert not live.matches(sink_plan, dataclasses.replace(first, generation=2))
    assert not live.matches(sink_plan, dataclasses.replace(first, task=1))
    assert not live.matches(plan(max_poll_records=7), first)
    assert not live.matches(plan(task_configs=[{"marker": "other"}]), first)
    live.close()
    assert not live.matches(sink_plan, first)


def test_a_task_of_a_run_without_id_matches_no_batch() -> None:
    first = batch(0, run_id=None)
    live = LiveSinkTask(plan(), first, MemoryInput())

    assert not live.matches(plan(), first)


# -- errors.tolerance --------------------------------------------------------------------------


def test_put_failure_with_tolerance_none_fails_naming_the_records() -> None:
    RecordingTask.fail_on = {b"bad"}
    first = batch(0, (0, 3, 5))
    live = LiveSinkTask(plan(), first, MemoryInput().add(0, {3: b"ok", 4: b"bad"}))

    with pytest.raises(EosConnectError, match="topic=t partition=0 offset=3") as caught:
        live.run_batch(first)

    assert "errors.tolerance=none" in str(caught.value)
    assert not [c for c in RecordingTask.calls if c[0] in ("pre_commit", "stop")]
    live.close()  # what the task host does with a task that failed
    assert RecordingTask.calls[-2:] == [("close", [TP0]), ("stop", None)]


def test_put_failure_with_tolerance_all_skips_only_the_failing_record() -> None:
    RecordingTask.fail_on = {b"bad"}
    source = MemoryInput().add(0, {3: b"ok", 4: b"bad", 5: b"ok2"})

    result = run_once(plan(tolerate_all=True), source, (0, 3, 6))

    assert puts() == [[(0, 3, b"ok")], [(0, 5, b"ok2")]]
    assert result.records_put == 2
    assert result.records_failed == 1
    assert result.committable == [("t", 0, 6)]


def test_converter_failure_with_tolerance_none_names_topic_partition_offset() -> None:
    source = MemoryInput().add(0, {3: b'{"a":1}'}).add(1, {8: b"not json"})

    with pytest.raises(ToleranceExceededError) as caught:
        run_once(plan(value_converter="JsonConverter"), source, (0, 3, 4), (1, 8, 9))

    message = str(caught.value)
    assert "topic=t partition=1 offset=8" in message
    assert "VALUE_CONVERTER" in message
    assert not [c for c in RecordingTask.calls if c[0] == "pre_commit"]


def test_converter_failure_with_tolerance_all_is_skipped_but_consumed() -> None:
    source = MemoryInput().add(0, {3: b'{"a":1}', 4: b"not json"})

    result = run_once(plan(value_converter="JsonConverter", tolerate_all=True), source, (0, 3, 5))

    assert puts() == [[(0, 3, {"a": 1})]]
    assert result.records_failed == 1
    assert result.committable == [("t", 0, 5)]


def test_failures_count_per_batch() -> None:
    source = MemoryInput().add(0, {0: b"not json", 1: b"1", 2: b"2"})
    first = batch(0, (0, 0, 1))
    live = LiveSinkTask(plan(value_converter="JsonConverter", tolerate_all=True), first, source)

    results = [live.run_batch(first), live.run_batch(batch(1, (0, 1, 3)))]

    assert [(r.records_put, r.records_failed) for r in results] == [(0, 1), (2, 0)]
    live.close()


# -- converters --------------------------------------------------------------------------------


class SchemaRecordingTask(RecordingTask):
    """Records what the converters made of each record."""

    seen: ClassVar[list[SinkRecord]] = []

    def put(self, records: Sequence[SinkRecord]) -> None:
        self.seen.extend(records)


def test_json_converter_with_schemas_gives_connect_data_and_schemas() -> None:
    SchemaRecordingTask.seen = []
    envelope = (
        b'{"schema":{"type":"struct","fields":[{"type":"int32","field":"n"}],"name":"N"},'
        b'"payload":{"n":42}}'
    )
    json_plan = plan(value_converter="JsonConverter")
    sink_plan = dataclasses.replace(
        json_plan,
        converter_options={"value.converter.schemas.enable": "true"},
        task_class=f"{SchemaRecordingTask.__module__}.SchemaRecordingTask",
        key_converter="org.apache.kafka.connect.storage.StringConverter",
    )

    run_once(sink_plan, MemoryInput().add(0, {3: envelope}), (0, 3, 4))

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

    run_once(sink_plan, MemoryInput().add(0, {3: b"v"}), (0, 3, 4))

    [record] = SchemaRecordingTask.seen
    assert list(record.headers) == [("h", 1)]
    assert (record.key_schema, record.value_schema) == (
        Schema.OPTIONAL_BYTES,
        Schema.OPTIONAL_BYTES,
    )


def test_string_converter_failure_is_a_value_converter_failure() -> None:
    with pytest.raises(ToleranceExceededError, match="VALUE_CONVERTER"):
        run_once(
            plan(value_converter="StringConverter"), MemoryInput().add(0, {3: b"\xff"}), (0, 3, 4)
        )


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


def test_columns_convert_at_once_and_a_failing_record_is_reported_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    picky = f"{PickyConverter.__module__}.PickyConverter"
    source = MemoryInput(batch_rows=4).add(
        0,
        {
            1: Msg(b"a"),
            2: Msg(b"bad-too", key=b"bad-key"),
            3: Msg(b"bad-value"),
            4: Msg(b"d"),
        },
    )
    PickyConverter.columns = 0
    task_plan = dataclasses.replace(
        plan(tolerate_all=True, value_converter=picky), key_converter=picky
    )
    reported: list[Any] = []
    monkeypatch.setattr(ErrorReporter, "report", lambda self, failed: reported.append(failed))

    result = run_once(task_plan, source, (0, 1, 5))

    assert puts() == [[(0, 1, b"a"), (0, 4, b"d")]]
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

    (only,) = chunks([RecordChunk.of(mixed.slice(0, 2)), RecordChunk.of(mixed.slice(2))], 5)

    assert list(only.topic_runs()) == [("t", 0, 2), ("u", 2, 3)]
    assert only.next_offsets() == {("t", 0): 2, ("t", 1): 2, ("u", 0): 10}
    assert only.raw(2).value == b"c" and only.raw(2).key is None
    assert [len(c) for c in chunks([RecordChunk.of(mixed)] * 3, 4)] == [4, 4, 1]


def test_a_part_of_a_chunk_joining_two_partitions_knows_its_own_partitions() -> None:
    def rows(partition: int, offsets: range) -> RecordChunk:
        return RecordChunk.of(
            pa.RecordBatch.from_pydict(
                {
                    "topic": ["t"] * len(offsets),
                    "partition": [partition] * len(offsets),
                    "offset": list(offsets),
                    "value": [b"v"] * len(offsets),
                }
            )
        )

    joined = rows(0, range(10, 13)).joined(rows(1, range(5, 7)))
    first, seam, last = joined.part(0, 2), joined.part(2, 4), joined.part(4, 5)

    assert first.partitions_seen == {("t", 0)} and first.next_offsets() == {("t", 0): 12}
    assert seam.partitions_seen == {("t", 0), ("t", 1)}
    assert seam.next_offsets() == {("t", 0): 13, ("t", 1): 6}
    assert last.next_offsets() == {("t", 1): 7}
