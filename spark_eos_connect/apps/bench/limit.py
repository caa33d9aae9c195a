"""Mode 1, the limit: the connector's own `SourceTask` polled in a loop by one process per task,
each batch written by a confluent-kafka transactional producer (the pipeline's settings) in one
transaction with one offsets record. Polling is inside the timed window, as in every mode.

The tasks start each batch together (a barrier), as Spark runs a micro-batch's tasks; a batch
lasts from the first task's start to the last task's commit.
"""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from spark_eos_connect.api.source import (
    InMemoryOffsetStorageReader,
    SourceConnector,
    SourceRecord,
    SourceTask,
    SourceTaskContext,
)
from spark_eos_connect.apps.bench.config import LIMIT
from spark_eos_connect.apps.bench.results import ModeResult, parallel_batches
from spark_eos_connect.kafka.producers import produce, transactional_producer
from spark_eos_connect.storage.offsets import ensure_offsets_topic, offset_messages

OFFSETS_TOPIC = "eosconnect-bench-limit-offsets"
OFFSETS_PARTITIONS = 25
COMMIT_TIMEOUT_S = 120.0
RESULT_TIMEOUT_S = 900.0

Timing = tuple[float, float, int]
"""(start, end, records) of one batch of one task, `time.monotonic()` (one clock per machine)."""


@dataclass(frozen=True)
class LimitTask:
    """What one limit process runs."""

    kafka: dict[str, Any]
    connector: str
    task_id: int
    task_class: type[SourceTask]
    config: dict[str, str]
    batches: tuple[int, ...]
    """Records per batch, in order."""


def as_bytes(data: Any) -> bytes | None:
    """A key or value as the bytes a string converter would write."""
    if data is None or isinstance(data, bytes):
        return data
    if isinstance(data, bytearray | memoryview):
        return bytes(data)
    return str(data).encode()


class Poller:
    """Polls a task for batches of a given size, keeping what a poll returned beyond the
    batch for the next one (as the pipeline's tasks do)."""

    def __init__(self, task: SourceTask) -> None:
        self.task = task
        self.pending: list[SourceRecord] = []

    def take(self, size: int) -> list[SourceRecord]:
        """The next `size` records, fewer when the task has nothing more."""
        while len(self.pending) < size:
            polled = self.task.poll()
            if not polled:
                break
            self.pending.extend(polled)
        batch, self.pending = self.pending[:size], self.pending[size:]
        return batch


def write_batch(producer: Any, spec: LimitTask, records: Sequence[SourceRecord]) -> None:
    """The records and the last one's offset in one transaction."""
    producer.begin_transaction()
    for record in records:
        value, key = as_bytes(record.value), as_bytes(record.key)
        try:
            producer.produce(record.topic, value, key)
        except BufferError:
            produce(producer, record.topic, value, key)
    producer.poll(0)
    if records:
        last = records[-1]
        offsets = [(dict(last.source_partition or {}), dict(last.source_offset or {}))]
        for message in offset_messages(OFFSETS_TOPIC, OFFSETS_PARTITIONS, spec.connector, offsets):
            produce(
                producer, message.topic, message.value, message.key, partition=message.partition
            )
    producer.commit_transaction(COMMIT_TIMEOUT_S)


def limit_process(spec: LimitTask, barrier: Any, results: Any) -> None:
    """One task's process: puts `(task_id, [Timing, ...])` or `(task_id, "error: ...")`."""
    try:
        task = spec.task_class()
        context = SourceTaskContext(
            spec.config, InMemoryOffsetStorageReader(), None, spec.task_id, spec.connector
        )
        task.initialize(context)
        task.start(dict(spec.config))
        producer = transactional_producer(spec.kafka, f"bench-{spec.connector}-{spec.task_id}")
        poller = Poller(task)
        timings: list[Timing] = []
        for size in spec.batches:
            barrier.wait()
            start = time.monotonic()
            records = poller.take(size)
            write_batch(producer, spec, records)
            timings.append((start, time.monotonic(), len(records)))
        task.stop()
        results.put((spec.task_id, timings))
    except BaseException as error:
        barrier.abort()
        results.put((spec.task_id, f"error: {error!r}"))
        raise


def run_processes(specs: Sequence[LimitTask]) -> dict[int, list[Timing]]:
    """Start one process per task, collect their timings, never leave one running."""
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(len(specs))
    results = context.Queue()
    processes = [
        context.Process(
            target=limit_process, args=(spec, barrier, results), name=f"bench-limit-{spec.task_id}"
        )
        for spec in specs
    ]
    collected: dict[int, list[Timing]] = {}
    errors: list[str] = []
    try:
        for process in processes:
            process.start()
        for _ in processes:
            task_id, outcome = results.get(timeout=RESULT_TIMEOUT_S)
            if isinstance(outcome, str):
                errors.append(f"task {task_id}: {outcome}")
            else:
                collected[task_id] = outcome
    finally:
        for process in processes:
            process.join(30)
            if process.is_alive():
                process.terminate()
                process.join(10)
    if errors:
        raise RuntimeError("limit failed: " + "; ".join(errors))
    return collected


def run_limit(
    kafka: Mapping[str, Any],
    work: str,
    connector: SourceConnector,
    props: Mapping[str, str],
    tasks: int,
    batches: Sequence[int],
    warmup: int = 0,
) -> ModeResult:
    """The limit of `connector` started with `props`: each task writes `batches`; the first
    `warmup` batches are not measured."""
    ensure_offsets_topic(kafka, OFFSETS_TOPIC, OFFSETS_PARTITIONS)
    connector.start(dict(props))
    configs = connector.task_configs(tasks)
    name = props["name"]
    specs = [
        LimitTask(dict(kafka), name, t, connector.task_class(), dict(c), tuple(batches))
        for t, c in enumerate(configs)
    ]
    timings = run_processes(specs)
    measured = parallel_batches({t: times[warmup:] for t, times in timings.items()})
    return ModeResult(
        work,
        LIMIT,
        sum(n for n, _ in measured),
        sum(s for _, s in measured),
        tuple(measured),
        f"{len(specs)} process(es), sum over batches of first start to last commit, polling "
        f"included, {warmup} warm-up batch(es) left out",
    )
