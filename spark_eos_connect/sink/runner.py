"""Running a `SinkTask` over one Spark task's Kafka rows, as Connect's WorkerSinkTask does: "before
offsets are committed the framework calls `flush`/`pre_commit(current_offsets)` and commits to the
consumer group `connect-<name>` only what `pre_commit` returned" (the project's design).

Executor side: `run_sink_task` instantiates the task of a `SinkTaskPlan` (`sink.plan`), then
`initialize`, `start`, `open(partitions)`, `put` in chunks of
`consumer.override.max.poll.records`, `pre_commit(current_offsets)`, `close`, `stop`; the
result carries the offsets `pre_commit` returned, which the driver commits to the group
(`merge_committable`). The rows arrive as columns (`sink.rows`) and are decoded by the
converters a column at a time (`sink.decoding`); then the connector's `transforms` chain (with
`predicates`) runs on each record before `put`, as in Connect's WorkerSinkTask: a record a
stage filters out is not put, but its offset counts as consumed; a failing stage is a
`TRANSFORMATION` failure. Records that fail are handled by `errors.tolerance` (see
`errors_dlq`). The writer's options are `sink.options`'.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from spark_eos_connect.api.sink import SinkRecord, SinkRecords, SinkTask, SinkTaskContext
from spark_eos_connect.api.sink import TopicPartition as SinkTopicPartition
from spark_eos_connect.errors import EosConnectError
from spark_eos_connect.plugins.loader import load_class
from spark_eos_connect.runtime.errors_dlq import ErrorReporter, FailedRecord, Stage, qualified_name
from spark_eos_connect.sink.decoding import (
    convert_column,
    convert_headers,
    failed_record,
    header_values,
)
from spark_eos_connect.sink.kafka_input import TP

# apps.docs imports it from here (it moved to `sink.options`).
from spark_eos_connect.sink.options import TRANSFORMS
from spark_eos_connect.sink.plan import SinkTaskPlan
from spark_eos_connect.sink.rows import RecordChunk, chunks
from spark_eos_connect.transforms.arrow import split_topic_stages

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SinkTaskResult:
    """What one Spark task did (executor → driver); offsets are `(topic, partition, next)`."""

    task: int
    records_put: int
    records_failed: int
    current: list[tuple[str, int, int]]
    committable: list[tuple[str, int, int]]
    records_filtered: int = 0
    """Records a transformation filtered out (not put; their offsets count as consumed)."""


def load_task_class(dotted: str) -> type[SinkTask]:
    """Import `package.module.Class` and check it is a SinkTask."""
    return load_class(dotted, "sink task class", SinkTask)


class _SinkTaskRun:
    """One task over one Spark task's rows; see `run_sink_task`."""

    def __init__(self, plan: SinkTaskPlan, task: int, batch_id: int | None) -> None:
        self.plan = plan
        self.task_id = task
        self.batch_id = batch_id
        self.config = plan.providers.resolve(plan.task_configs[task % len(plan.task_configs)])
        self.task = load_task_class(plan.task_class)()
        self.context = SinkTaskContext(self.config)
        self.reporter = ErrorReporter(plan.errors, plan.resolved_kafka(), task)
        self.converters = plan.converters()
        self.chain = plan.transform_chain()
        self.head, rest = split_topic_stages(self.chain)
        self.stages = rest.stages
        self.routes: dict[str, str | None] = {}
        """The topic-only head's outcome per topic (decided once per topic)."""
        self.filtered = 0
        self.assigned: set[TP] = set()
        self.skip_below: dict[TP, int] = {}
        self.current: dict[TP, int] = {}
        self.put_count = 0

    def _records(self, rows: RecordChunk) -> tuple[SinkRecords, list[int]]:
        """The chunk's records for `put` and the row of each: keys, values and headers
        converted a column at a time, then the transforms; failures are reported in row
        order. Without transforms the records stay columns (`SinkRecords`)."""
        failed: dict[int, FailedRecord] = {}
        converters = self.converters
        key_schemas, keys = convert_column(
            converters.key, Stage.KEY_CONVERTER, rows, rows.keys, failed
        )
        value_schemas, values = convert_column(
            converters.value, Stage.VALUE_CONVERTER, rows, rows.values, failed
        )
        headers = convert_headers(converters.header, rows, failed)
        for row in sorted(failed):
            self.reporter.report(failed[row])
        if self.chain:
            converted = (keys, values, key_schemas, value_schemas, headers)
            return self._transformed(rows, converted, failed)
        plain = header_values(headers)
        columns: list[list[Any]] = [
            rows.topics,
            rows.partitions,
            rows.offsets,
            keys,
            values,
            rows.timestamps,
            plain,
            key_schemas,
            value_schemas,
        ]
        kept = list(range(len(rows)))
        if failed:
            keep = [row not in failed for row in kept]
            columns = [list(itertools.compress(column, keep)) for column in columns]
            kept = list(itertools.compress(kept, keep))
        return SinkRecords(columns), kept

    def _transformed(
        self, rows: RecordChunk, columns: tuple[list[Any], ...], failed: dict[int, FailedRecord]
    ) -> tuple[SinkRecords, list[int]]:
        """The records after the transforms (those converted), with their rows."""
        from spark_eos_connect.transforms import ConnectRecord, Header

        keys, values, key_schemas, value_schemas, headers = columns
        records: list[SinkRecord] = []
        kept: list[int] = []
        for row in range(len(rows)):
            if row in failed:
                continue
            record = ConnectRecord(
                rows.topics[row],
                rows.partitions[row],
                key_schemas[row],
                keys[row],
                value_schemas[row],
                values[row],
                rows.timestamps[row],
                tuple(Header(name, data.value, data.schema) for name, data in headers[row]),
                kafka_offset=rows.offsets[row],
            )
            transformed = self._transform(rows, row, record)
            if transformed is not None:
                records.append(transformed)
                kept.append(row)
        return SinkRecords.of(records), kept

    def _transform(self, rows: RecordChunk, row: int, record: Any) -> SinkRecord | None:
        """The record after the chain (None: filtered, or a tolerated failure), as Connect's
        WorkerSinkTask runs it after the converters; the topic-only head is decided once per
        topic. The offset stays the consumed record's, whatever the topic becomes."""
        from spark_eos_connect.transforms import TransformationError

        topic_read = rows.topics[row]
        try:
            if self.head:
                if topic_read not in self.routes:
                    self.routes[topic_read] = self.head.outcome(topic_read)
                topic = self.routes[topic_read]
                if topic is None:
                    self.filtered += 1
                    return None
                if topic != record.topic:
                    record = record.new_record(topic=topic)
            for stage in self.stages:
                record = stage.apply(record)
                if record is None:
                    self.filtered += 1
                    return None
        except TransformationError as error:
            where = "predicate of transformation" if error.in_predicate else "transformation"
            self.reporter.report(
                failed_record(
                    rows.raw(row),
                    Stage.TRANSFORMATION,
                    error.class_name,
                    error.cause,
                    f"{where} '{error.alias}' ({TRANSFORMS}.{error.alias}.type={error.class_name})",
                )
            )
            return None
        return SinkRecord(
            record.topic,
            rows.partitions[row] if record.kafka_partition is None else record.kafka_partition,
            rows.offsets[row],
            record.key,
            record.value,
            record.timestamp,
            tuple((header.key, header.value) for header in record.headers),
            record.key_schema,
            record.value_schema,
        )

    def _open_new(self, rows: RecordChunk) -> None:
        new = rows.partitions_seen - self.assigned
        if not new:
            return
        self.assigned |= new
        self.context.update_assignment(SinkTopicPartition(*tp) for tp in self.assigned)
        self.task.open([SinkTopicPartition(*tp) for tp in sorted(new)])
        self._take_resets()

    def _take_resets(self) -> None:
        """`context.offset(...)` requests: skip ahead within the batch; rewinds cannot be."""
        for tp, offset in self.context.take_offset_resets().items():
            key = (tp.topic, tp.partition)
            if offset < self.current.get(key, 0):
                log.warning(
                    "%s asked to rewind %s-%d to %d; a micro-batch cannot be rewound, records "
                    "are read again only when the batch is retried",
                    type(self.task).__name__,
                    key[0],
                    key[1],
                    offset,
                )
            self.skip_below[key] = offset

    def _wanted(self, rows: RecordChunk) -> RecordChunk:
        """The rows not skipped by a `context.offset(...)` request."""
        if not self.skip_below:
            return rows
        skip = self.skip_below
        wanted = [
            row
            for row, tp in enumerate(zip(rows.topics, rows.partitions, strict=True))
            if rows.offsets[row] >= skip.get(tp, -1)
        ]
        return rows if len(wanted) == len(rows) else rows.select(wanted)

    def _put(self, records: SinkRecords, kept: list[int], rows: RecordChunk) -> None:
        if not records:
            return
        try:
            self.task.put(records)
            self.put_count += len(records)
            return
        except Exception as error:
            if not self.plan.errors.tolerate_all:
                first, last = records[0], records[-1]
                raise EosConnectError(
                    f"{type(self.task).__name__}.put failed for {len(records)} record(s) from "
                    f"topic={first.topic} partition={first.kafka_partition} "
                    f"offset={first.kafka_offset} to topic={last.topic} "
                    f"partition={last.kafka_partition} offset={last.kafka_offset}: "
                    f"{qualified_name(type(error))}: {error} (errors.tolerance=none)"
                ) from error
        # errors.tolerance=all: find the failing records one by one (at-least-once for the rest)
        for record, row in zip(records, kept, strict=True):
            try:
                self.task.put([record])
                self.put_count += 1
            except Exception as error:
                self.reporter.report(
                    failed_record(rows.raw(row), Stage.TASK_PUT, type(self.task), error)
                )

    def process(self, chunk: RecordChunk) -> None:
        """Open new partitions, convert, put; the rows count as consumed."""
        self._open_new(chunk)
        wanted = self._wanted(chunk)
        records, kept = self._records(wanted)
        self._put(records, kept, wanted)
        self._take_resets()
        for tp, offset in chunk.next_offsets().items():
            self.current[tp] = max(self.current.get(tp, 0), offset)

    def commit_offsets(self) -> dict[TP, int]:
        """Flush the DLQ, then ask `pre_commit` which offsets may be committed."""
        self.reporter.close()
        if not self.current:
            return {}
        given = {SinkTopicPartition(*tp): offset for tp, offset in self.current.items()}
        returned = self.task.pre_commit(dict(given)) or {}
        committable: dict[TP, int] = {}
        for tp, offset in returned.items():
            key = (tp[0], int(tp[1]))
            if key not in self.assigned:
                log.warning("ignoring pre_commit offset for unassigned partition %s-%s", *key)
            elif isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
                raise EosConnectError(
                    f"{type(self.task).__name__}.pre_commit returned invalid offset {offset!r} "
                    f"for {key[0]}-{key[1]}"
                )
            else:
                committable[key] = offset
        return committable

    def close(self) -> None:
        """`close(partitions)` then `stop()`."""
        try:
            if self.assigned:
                self.task.close([SinkTopicPartition(*tp) for tp in sorted(self.assigned)])
        finally:
            try:
                self.task.stop()
            finally:
                self.chain.close()

    def run(self, batches: Iterable[pa.RecordBatch]) -> SinkTaskResult:
        self.task.initialize(self.context)
        self.task.start(dict(self.config))
        try:
            for number, chunk in enumerate(chunks(batches, self.plan.max_poll_records)):
                self.process(chunk)
                if number == 0:
                    self.plan.hooks.reached("put", self.batch_id)
            committable = self.commit_offsets()
        except BaseException:
            try:
                self.close()
            except Exception:
                log.exception("closing sink task %d after a failure failed too", self.task_id)
            try:
                self.reporter.close(timeout_s=5.0)
            except Exception:
                log.exception("flushing the dead letter queue after a failure failed")
            raise
        self.close()
        return SinkTaskResult(
            task=self.task_id,
            records_put=self.put_count,
            records_failed=self.reporter.failed,
            current=[(t, p, o) for (t, p), o in sorted(self.current.items())],
            committable=[(t, p, o) for (t, p), o in sorted(committable.items())],
            records_filtered=self.filtered,
        )


def run_sink_task(
    plan: SinkTaskPlan, task: int, batches: Iterable[pa.RecordBatch], batch_id: int | None
) -> SinkTaskResult:
    """Executor: run task config `task` over the rows; raises if a record fails (tolerance
    none) or `put`/`flush` fails, so that nothing gets committed for the micro-batch."""
    return _SinkTaskRun(plan, task, batch_id).run(batches)


def merge_committable(results: Iterable[SinkTaskResult]) -> dict[TP, int]:
    """Driver: the offsets to commit for a micro-batch (highest per partition)."""
    merged: dict[TP, int] = {}
    for result in results:
        for topic, partition, offset in result.committable:
            merged[(topic, partition)] = max(offset, merged.get((topic, partition), offset))
    return merged
