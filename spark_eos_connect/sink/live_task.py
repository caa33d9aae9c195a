"""A sink task that lives across micro-batches, as Kafka Connect's WorkerSinkTask runs one.

`LiveSinkTask` is made (`initialize`, `start`) when a task host first runs a micro-batch of the
task, and kept for the next ones: each `run_batch` brings the task's partition assignment up to
date (`close` for partitions taken away, `open` for new ones), reads each partition from the
task's own position up to the end the driver planned, `put`s the records in chunks of
`consumer.override.max.poll.records`, and ends with `pre_commit(current_offsets)`; the result
carries what `pre_commit` returned for the task's partitions (`protocol.sink_groups`), which
the driver commits to the consumer group `connect-<name>`. `close()` (`close(partitions)`,
`stop()`) ends it.

Positions follow Connect's consumer:
- A partition the task opens starts at the group's committed offset (what `pre_commit`
  returned earlier, by this task or any other), else at the planned start (the reader's
  `startingOffsets`). So a fresh task, a restarted query, a Spark retry or a task moved to
  another executor re-reads everything the group has not committed: records a task buffered
  past its committed offset come again.
- While the task lives it continues from its own position, but only if it ran the previous
  micro-batch of the query and that batch ended where this one starts (`kept_partitions`);
  otherwise another host ran the task in between (or the stream was rebased after a stop), and
  its partitions are closed and opened again from the group's offsets, as on a rebalance.
- `context.offset(tp, o)` moves a partition's position, backward or forward, from `open` on:
  the records from `o` up to the batch's end are read (again).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from spark_eos_connect.api.sink import SinkRecords, SinkTask, SinkTaskContext, TopicPartition
from spark_eos_connect.errors import EosConnectError
from spark_eos_connect.kafka.range_reader import OffsetRange
from spark_eos_connect.plugins.loader import load_class
from spark_eos_connect.protocol.sink_groups import TP, task_committable
from spark_eos_connect.runtime.commit_hooks import NO_HOOKS
from spark_eos_connect.runtime.errors_dlq import ErrorReporter, Stage, qualified_name
from spark_eos_connect.sink.decoding import failed_record
from spark_eos_connect.sink.plan import SinkTaskPlan
from spark_eos_connect.sink.records import RecordMaker
from spark_eos_connect.sink.rows import RecordChunk, chunks

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SinkBatch:
    """One sink task's share of one micro-batch (driver → task host)."""

    task: int
    batch_id: int | None
    run_id: str | None
    """The query's run: a new run (a restart, also on the same checkpoint) gets new tasks."""
    generation: int
    """The config-topic offset of the connector's latest task-config commit: a new one (the
    connector reconfigured, or stopped and resumed) restarts the task."""
    ranges: tuple[OffsetRange, ...]
    """Every partition assigned to the task with the offsets `[start, end)` the micro-batch
    planned for it (start == end when it has nothing new)."""


@dataclass(frozen=True)
class SinkTaskResult:
    """What one sink task did in a micro-batch (host → driver); offsets are
    `(topic, partition, next)`."""

    task: int
    records_put: int
    records_failed: int
    current: list[tuple[str, int, int]]
    committable: list[tuple[str, int, int]]
    records_filtered: int = 0
    """Records a transformation filtered out (not put; their offsets count as consumed)."""
    started: bool = False
    """Whether the task was started for this micro-batch (else it was kept from the last)."""


class SinkTaskInput(Protocol):
    """Where a live sink task's records and committed offsets come from (Kafka, or a twin)."""

    def committed(self, partitions: Sequence[TP]) -> dict[TP, int]:
        """The consumer group's committed offsets of those `partitions` that have one."""
        ...

    def read(self, ranges: Sequence[OffsetRange]) -> Iterator[RecordChunk]:
        """The committed records of `ranges` (one per partition), in parts of one partition
        each, the partitions' parts interleaved as they come."""
        ...

    def forget(self, partitions: Sequence[TP]) -> None:
        """Stop fetching `partitions` (closed: the task no longer owns them)."""
        ...

    def close(self) -> None:
        """Let go of the clients."""
        ...


def load_task_class(dotted: str) -> type[SinkTask]:
    """Import `package.module.Class` and check it is a SinkTask."""
    return load_class(dotted, "sink task class", SinkTask)


def kept_partitions(
    last_batch: int | None, last_end: Mapping[TP, int], batch: SinkBatch
) -> set[TP]:
    """The partitions of `batch` a live task continues from its own position: those that the
    task read in the query's previous micro-batch up to where this one starts. None when it did
    not run the previous micro-batch (another host did, or this is a new query)."""
    if batch.batch_id is None or last_batch is None or batch.batch_id != last_batch + 1:
        return set()
    return {
        (r.topic, r.partition)
        for r in batch.ranges
        if last_end.get((r.topic, r.partition)) == r.start
    }


def _topic_partitions(tps: Iterable[TP]) -> list[TopicPartition]:
    return [TopicPartition(*tp) for tp in sorted(tps)]


class LiveSinkTask:
    """One sink task kept between micro-batches (see the module's docstring)."""

    def __init__(self, plan: SinkTaskPlan, batch: SinkBatch, source: SinkTaskInput) -> None:
        task = batch.task
        self.plan = plan
        self.task_id = task
        self.generation = batch.generation
        self.run_id = batch.run_id
        self.source = source
        self.config = plan.providers.resolve(plan.task_configs[task % len(plan.task_configs)])
        self.task = load_task_class(plan.task_class)()
        self.context = SinkTaskContext(self.config)
        self.reporter = ErrorReporter(plan.errors, plan.resolved_kafka(), task)
        self.maker = RecordMaker(plan.converters(), plan.transform_chain(), self.reporter)
        self.positions: dict[TP, int] = {}
        """The next offset to read of each assigned partition (the consumer's position: past
        commit markers and aborted records once a range is read)."""
        self.current: dict[TP, int] = {}
        """Connect's current offsets: after the last record put, or where a partition was
        opened or moved to; what `pre_commit` is given."""
        self.last_batch: int | None = None
        self.last_end: dict[TP, int] = {}
        self.records_put = 0
        self.batches = 0
        self.closed = False
        self.task.initialize(self.context)
        try:
            self.task.start(dict(self.config))
        except BaseException:
            self._release()
            raise

    def matches(self, plan: SinkTaskPlan, batch: SinkBatch) -> bool:
        """Whether `batch` of `plan` can run on this task: the same task of the same query run
        and connector generation, with the same config (the commit hooks may differ)."""
        same = dataclasses.replace(plan, hooks=NO_HOOKS) == dataclasses.replace(
            self.plan, hooks=NO_HOOKS
        )
        return (
            not self.closed
            and same
            and (batch.task, batch.generation) == (self.task_id, self.generation)
            and batch.run_id is not None
            and batch.run_id == self.run_id
        )

    # -- one micro-batch ----------------------------------------------------------------------

    def run_batch(self, batch: SinkBatch) -> SinkTaskResult:
        """Assign, read and put up to the planned ends, then `pre_commit`."""
        started = self.batches == 0
        put_before, failed_before = self.records_put, self.reporter.failed
        filtered_before = self.maker.filtered
        ends = {(r.topic, r.partition): r.end for r in batch.ranges}
        self._assign(batch)
        self._consume(ends, batch.batch_id)
        committable = self._pre_commit()
        self.last_batch, self.last_end = batch.batch_id, ends
        self.batches += 1
        return SinkTaskResult(
            task=self.task_id,
            records_put=self.records_put - put_before,
            records_failed=self.reporter.failed - failed_before,
            current=[(t, p, o) for (t, p), o in sorted(self.current.items())],
            committable=[(t, p, o) for (t, p), o in sorted(committable.items())],
            records_filtered=self.maker.filtered - filtered_before,
            started=started,
        )

    def _assign(self, batch: SinkBatch) -> None:
        """Close what the task no longer owns (or no longer owns without a gap), open the rest
        from the group's offsets (else the planned start), then take `context.offset` requests."""
        wanted = [(r.topic, r.partition) for r in batch.ranges]
        kept = kept_partitions(self.last_batch, self.last_end, batch) & set(self.positions)
        closing = set(self.positions) - kept
        if closing:
            for tp in closing:
                del self.positions[tp], self.current[tp]
            self.source.forget(sorted(closing))
            self.task.close(_topic_partitions(closing))
        opening = [tp for tp in wanted if tp not in self.positions]
        self.context.update_assignment(_topic_partitions(wanted))
        if opening:
            committed = self.source.committed(opening)
            starts = {(r.topic, r.partition): r.start for r in batch.ranges}
            for tp in opening:
                self.positions[tp] = self.current[tp] = committed.get(tp, starts[tp])
            self.task.open(_topic_partitions(opening))
        self._take_resets()

    def _take_resets(self) -> set[TP]:
        """Apply the task's `context.offset(...)` requests; the partitions they moved."""
        moved: set[TP] = set()
        for tp, offset in self.context.take_offset_resets().items():
            key = (tp.topic, tp.partition)
            if key not in self.positions:
                log.warning(
                    "%s asked to move %s-%d to %d, a partition it is not assigned; ignored",
                    type(self.task).__name__,
                    key[0],
                    key[1],
                    offset,
                )
                continue
            if offset != self.positions[key]:
                log.info(
                    "%s moves %s-%d from %d to %d",
                    type(self.task).__name__,
                    key[0],
                    key[1],
                    self.positions[key],
                    offset,
                )
            self.positions[key] = self.current[key] = offset
            moved.add(key)
        return moved

    def _consume(self, ends: Mapping[TP, int], batch_id: int | None) -> None:
        """Read and put every partition from its position up to its end, the partitions
        fetched together as a consumer polls its assignment; a `context.offset` request during
        a put takes effect right after it (the read starts again from the new positions)."""
        first_put = True
        while True:
            pending = [
                OffsetRange(tp[0], tp[1], self.positions[tp], ends[tp])
                for tp in ends
                if self.positions[tp] < ends[tp]
            ]
            if not pending:
                return
            records = self.source.read(pending)
            interrupted = False
            try:
                for chunk in chunks(records, self.plan.max_poll_records):
                    self._put(chunk)
                    if first_put:
                        self.plan.hooks.reached("put", batch_id)
                        first_put = False
                    for tp, consumed in chunk.next_offsets().items():
                        self.positions[tp] = self.current[tp] = consumed
                    if self._take_resets():
                        interrupted = True
                        break
            finally:
                close = getattr(records, "close", None)
                if close is not None:
                    close()
            if not interrupted:  # past commit markers and aborted records too
                for offsets in pending:
                    tp = (offsets.topic, offsets.partition)
                    self.positions[tp] = max(self.positions[tp], offsets.end)

    def _put(self, chunk: RecordChunk) -> None:
        """`put` the chunk's records; under `errors.tolerance=all` a failing `put` is retried
        record by record to find the failing ones (at least once for the others)."""
        records, kept = self.maker.make(chunk)
        if not records:
            return
        try:
            self.task.put(records)
            self.records_put += len(records)
            return
        except Exception as error:
            if not self.plan.errors.tolerate_all:
                raise self._put_failed(records, error) from error
        for record, row in zip(records, kept, strict=True):
            try:
                self.task.put(SinkRecords.of([record]))
                self.records_put += 1
            except Exception as error:
                self.reporter.report(
                    failed_record(chunk.raw(row), Stage.TASK_PUT, type(self.task), error)
                )

    def _put_failed(self, records: SinkRecords, error: Exception) -> EosConnectError:
        first, last = records[0], records[-1]
        return EosConnectError(
            f"{type(self.task).__name__}.put failed for {len(records)} record(s) from "
            f"topic={first.topic} partition={first.kafka_partition} "
            f"offset={first.kafka_offset} to topic={last.topic} "
            f"partition={last.kafka_partition} offset={last.kafka_offset}: "
            f"{qualified_name(type(error))}: {error} (errors.tolerance=none)"
        )

    def _pre_commit(self) -> dict[TP, int]:
        """Flush the DLQ, then ask `pre_commit` which offsets may be committed."""
        self.reporter.close()
        if not self.current:
            return {}
        given = {TopicPartition(*tp): offset for tp, offset in self.current.items()}
        returned = self.task.pre_commit(dict(given)) or {}
        return task_committable(type(self.task).__name__, returned, self.positions)

    # -- the end ------------------------------------------------------------------------------

    def close(self) -> None:
        """`close(partitions)` then `stop()`; records buffered past the committed offsets are
        dropped (a new task reads them again). Idempotent."""
        if self.closed:
            return
        self.closed = True
        try:
            if self.positions:
                self.task.close(_topic_partitions(self.positions))
        finally:
            try:
                self.task.stop()
            finally:
                self._release()

    def _release(self) -> None:
        """The transforms, the DLQ producer and the input's clients."""
        self.closed = True
        try:
            self.maker.chain.close()
        finally:
            try:
                self.reporter.close(timeout_s=5.0)
            except Exception:
                log.exception("flushing the dead letter queue while closing failed")
            finally:
                self.source.close()
