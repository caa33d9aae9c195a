"""Executor side of a source micro-batch: write one task's rows to Kafka with its offsets.

Exactly-once mode (KIP-618): the task's transactional producer claims `<group>-<connector>-<task>`
(fencing every older attempt and resolving its open transaction), then, before the first commit,
checks that the committed offsets of every source partition in its rows are still those the
reader started from. If an earlier attempt already committed them, the rows are stale: the
transaction is aborted and nothing is written (the next micro-batch resumes after them). Records
and offsets then go into one transaction per boundary. At-least-once mode writes the records with
an idempotent producer, then the offsets.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from confluent_kafka import KafkaException, Producer

from spark_eos_connect.kafka.producers import (
    ProducerFencedError,
    idempotent_producer,
    is_fenced,
    produce,
    transactional_producer,
)
from spark_eos_connect.protocol.murmur2 import default_partition
from spark_eos_connect.protocol.offsets_format import (
    encode_offset_key,
    encode_offset_value,
    partition_key,
)
from spark_eos_connect.runtime.faults import maybe_crash
from spark_eos_connect.runtime.generations import (
    TaskStartupError,
    connector_running,
    task_startup_problem,
)
from spark_eos_connect.runtime.source_plan import SourceTaskPlan
from spark_eos_connect.storage.config_store import KafkaConfigStore
from spark_eos_connect.storage.offsets import OffsetsTopicView, offset_messages

log = logging.getLogger(__name__)

_CONFIG_STORES: dict[tuple[str, str, str], KafkaConfigStore] = {}


def executor_config_store(kafka: Mapping[str, Any], topic: str, group_id: str) -> KafkaConfigStore:
    """One incrementally read config store per Python worker process, topic and cluster."""
    key = (str(kafka.get("bootstrap.servers")), topic, group_id)
    store = _CONFIG_STORES.get(key)
    if store is None:
        store = _CONFIG_STORES[key] = KafkaConfigStore(kafka, topic, group_id)
    return store


COMMIT_TIMEOUT_S = 120.0
OPTIONAL_COLUMNS = ("partition", "headers", "timestamp")
MIRROR_WAIT_S = 30.0


@dataclass
class TaskWriteResult:
    """What one task attempt wrote in one micro-batch."""

    connector: str = ""
    task: int = -1
    records: int = 0
    transactions: int = 0
    offsets_committed: int = 0
    stale_rows_skipped: int = 0
    aborted_transactions: int = 0
    exactly_once: bool = True


def stale_partitions(
    plan: SourceTaskPlan,
    touched: Iterable[dict[str, Any]],
    current: Callable[[dict[str, Any]], dict[str, Any] | None],
) -> list[dict[str, Any]]:
    """Source partitions whose committed offset is no longer the one the reader started from."""
    planned = {partition_key(p): o for p, o in plan.committed}
    return [p for p in touched if current(p) != planned.get(partition_key(p))]


class SourceTaskWriter:
    """Writes one source task's rows of one micro-batch (one object per task attempt)."""

    def __init__(
        self,
        kafka: Mapping[str, Any],
        load_plan: Callable[[], SourceTaskPlan],
        batch_id: int | None = None,
        boundaries: Callable[[], Mapping[int, str]] | None = None,
        before_producer: Callable[[], None] | None = None,
    ) -> None:
        self.kafka = dict(kafka)
        self._load_plan = load_plan
        self.batch_id = batch_id
        self._boundaries = boundaries
        self._before_producer = before_producer
        self._rows_seen = 0
        self.plan: SourceTaskPlan | None = None
        self.producer: Producer | None = None
        self.result = TaskWriteResult()
        self._in_transaction = False
        self._transaction_started = 0.0
        self._verified = False
        self._stale = False
        self._pending: dict[str, str | None] = {}
        self._mirror_threads: list[threading.Thread] = []

    # -- lifecycle ---------------------------------------------------------------------------

    def write(self, batches: Iterable[pa.RecordBatch]) -> TaskWriteResult:
        """Write every row; returns the counts. Raises if the task was fenced or Kafka failed."""
        try:
            for batch in batches:
                if batch.num_rows == 0:
                    continue
                if self._stale:
                    self.result.stale_rows_skipped += batch.num_rows
                    continue
                for piece, action in self._split_at_boundaries(batch):
                    if self._stale:
                        self.result.stale_rows_skipped += piece.num_rows
                        continue
                    if not self._open():
                        self._stale = True
                        self.result.stale_rows_skipped += piece.num_rows
                        continue
                    self._produce_batch(piece)
                    assert self.plan is not None
                    if not self.plan.exactly_once:
                        action = None  # boundaries are transactions: none without exactly-once
                    if action == "abort":
                        self._abort_requested()
                    elif action == "commit" or self._boundary_due():
                        self._commit()
            if self.plan is not None and not self._stale:
                self._commit()
        except BaseException:
            self._abort_quietly()
            raise
        finally:
            self._finish_mirrors()
        return self.result

    def _open(self) -> bool:
        """Load the plan and start the producer on first use, and begin a transaction if none
        is open. False when the connector was stopped or paused since the batch was planned:
        the rows are then not written (their offsets do not move, so they are read again)."""
        if self.plan is None:
            self.plan = self._load_plan()
            self.result.connector = self.plan.connector
            self.result.task = self.plan.task
            self.result.exactly_once = self.plan.exactly_once
            if self.plan.exactly_once:
                self.producer = self._start_task_producer(self.plan)
                if self.producer is None:
                    return False
            else:
                self.producer = idempotent_producer(self.kafka)
        if self.plan.exactly_once and not self._in_transaction:
            assert self.producer is not None
            self.producer.begin_transaction()
            self._in_transaction = True
            self._transaction_started = time.monotonic()
        return self.producer is not None

    def _split_at_boundaries(
        self, batch: pa.RecordBatch
    ) -> list[tuple[pa.RecordBatch, str | None]]:
        """The batch cut after each row where the connector asked to commit or abort."""
        first = self._rows_seen
        self._rows_seen += batch.num_rows
        if self._boundaries is None:
            return [(batch, None)]
        known = self._boundaries()
        rows = sorted(r for r in known if first <= r < self._rows_seen)
        pieces: list[tuple[pa.RecordBatch, str | None]] = []
        start = 0
        for row in rows:
            end = row - first + 1
            pieces.append((batch.slice(start, end - start), known[row]))
            start = end
        if start < batch.num_rows:
            pieces.append((batch.slice(start), None))
        return pieces

    def _abort_requested(self) -> None:
        """The connector aborted its transaction: drop its records and their offsets."""
        error = self._abort_quietly()
        if error is not None:
            raise error
        self._pending.clear()
        self.result.aborted_transactions += 1

    def _start_task_producer(self, plan: SourceTaskPlan) -> Producer | None:
        """KIP-618 task start-up: check the generation, create the producer, check again.

        None when the connector is no longer running (stopped or paused since planning)."""
        store = None
        if plan.config_topic:
            store = executor_config_store(self.kafka, plan.config_topic, plan.group_id)
            if not self._may_start(store, plan):
                return None
        if self._before_producer is not None:
            self._before_producer()
        producer = transactional_producer(self.kafka, plan.transactional_id)
        if store is not None and not self._may_start(store, plan):
            return None
        return producer

    @staticmethod
    def _may_start(store: KafkaConfigStore, plan: SourceTaskPlan) -> bool:
        """False if the connector stopped or paused; raises if this task must not run."""
        snapshot = store.read_to_end()
        if not connector_running(snapshot, plan.connector):
            log.info(
                "connector %s is no longer running; task %d writes nothing",
                plan.connector,
                plan.task,
            )
            return False
        problem = task_startup_problem(snapshot, plan.connector, plan.generation_commit_offset)
        if problem is not None:
            raise TaskStartupError(f"task {plan.task} of connector {plan.connector}: {problem}")
        return True

    def _boundary_due(self) -> bool:
        assert self.plan is not None
        if self.plan.transaction_boundary != "interval":
            return False
        elapsed_ms = (time.monotonic() - self._transaction_started) * 1000
        return elapsed_ms >= self.plan.transaction_interval_ms

    # -- records -----------------------------------------------------------------------------

    def _produce_batch(self, batch: pa.RecordBatch) -> None:
        producer = self.producer
        assert producer is not None
        topics = batch.column("topic").to_pylist()
        keys = batch.column("key").to_pylist()
        values = batch.column("value").to_pylist()
        produce_one = producer.produce
        if all(batch.column(name).null_count == batch.num_rows for name in OPTIONAL_COLUMNS):
            for topic, value, key in zip(topics, values, keys, strict=True):
                try:
                    produce_one(topic, value, key)
                except BufferError:
                    produce(producer, topic, value, key)
        else:
            self._produce_with_extras(batch, topics, keys, values)
        # The last offset of each source partition wins: dict.update keeps the latest value.
        self._pending.update(
            (partition, offset)
            for partition, offset in zip(
                batch.column("source_partition").to_pylist(),
                batch.column("source_offset").to_pylist(),
                strict=True,
            )
            if partition is not None
        )
        producer.poll(0)
        self.result.records += batch.num_rows

    def _produce_with_extras(
        self, batch: pa.RecordBatch, topics: list[Any], keys: list[Any], values: list[Any]
    ) -> None:
        producer = self.producer
        assert producer is not None
        partitions = batch.column("partition").to_pylist()
        headers = batch.column("headers").to_pylist()
        timestamps = batch.column("timestamp").to_pylist()
        for i, topic in enumerate(topics):
            extra: dict[str, Any] = {}
            if partitions[i] is not None:
                extra["partition"] = partitions[i]
            if headers[i]:
                extra["headers"] = [(h["key"], h["value"]) for h in headers[i]]
            if timestamps[i] is not None:
                extra["timestamp"] = int(timestamps[i].timestamp() * 1000)
            produce(producer, topic, values[i], keys[i], **extra)

    # -- commits -----------------------------------------------------------------------------

    def _pending_offsets(self) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
        return [
            (json.loads(partition), None if offset is None else json.loads(offset))
            for partition, offset in self._pending.items()
        ]

    def _check_not_stale(self, offsets: list[tuple[dict[str, Any], Any]]) -> bool:
        plan = self.plan
        assert plan is not None
        view = OffsetsTopicView(self.kafka, plan.offsets_topic)
        view.positions = dict(plan.offsets_positions)
        for partition, offset in plan.committed:
            view.snapshot.apply(
                encode_offset_key(plan.connector, partition), encode_offset_value(offset)
            )
        touched = [partition for partition, _ in offsets]
        view.catch_up(
            {
                default_partition(
                    encode_offset_key(plan.connector, p), plan.offsets_topic_partitions
                )
                for p in touched
            }
        )
        stale = stale_partitions(plan, touched, lambda p: view.snapshot.offset(plan.connector, p))
        if stale:
            log.warning(
                "connector %s task %d: an earlier attempt already committed offsets for %s; "
                "this attempt's rows are skipped",
                plan.connector,
                plan.task,
                stale,
            )
        return not stale

    def _commit(self) -> None:
        plan, producer = self.plan, self.producer
        assert plan is not None and producer is not None
        offsets = self._pending_offsets()
        if plan.exactly_once and not self._verified:
            if not self._check_not_stale(offsets):
                self._stale = True
                abort_error = self._abort_quietly()
                if abort_error is not None and is_fenced(abort_error):
                    raise self._fenced(plan, abort_error)
                self.result.stale_rows_skipped += self.result.records
                self.result.records = 0
                return
            self._verified = True
        for message in offset_messages(
            plan.offsets_topic, plan.offsets_topic_partitions, plan.connector, offsets
        ):
            produce(
                producer, message.topic, message.value, message.key, partition=message.partition
            )
        if plan.exactly_once:
            maybe_crash("before_commit", self.batch_id)
            try:
                producer.commit_transaction(COMMIT_TIMEOUT_S)
            except KafkaException as error:
                if is_fenced(error):
                    raise self._fenced(plan, error) from error
                raise
            self._in_transaction = False
            maybe_crash("after_commit", self.batch_id)
        else:
            remaining = producer.flush(COMMIT_TIMEOUT_S)
            if remaining:
                raise KafkaException(f"{remaining} records were not delivered in time")
        self.result.transactions += 1
        self.result.offsets_committed += len(offsets)
        self._pending.clear()
        if plan.mirror_offsets_topic:
            self._mirror(plan, offsets)

    @staticmethod
    def _fenced(plan: SourceTaskPlan, error: KafkaException) -> ProducerFencedError:
        return ProducerFencedError(
            f"task {plan.task} of connector {plan.connector} was fenced by a newer producer "
            f"with transactional id {plan.transactional_id}; its records were not committed "
            f"({error.args[0]})"
        )

    def _abort_quietly(self) -> KafkaException | None:
        """Abort the open transaction, if any; returns the error instead of raising it."""
        if self.producer is None or not self._in_transaction:
            return None
        self._in_transaction = False
        try:
            self.producer.abort_transaction(COMMIT_TIMEOUT_S)
        except KafkaException as error:
            log.warning("aborting the transaction failed (it will be fenced): %s", error)
            return error
        return None

    # -- mirroring to the global offsets topic (KIP-618: best effort, never fails the task) --

    def _mirror(self, plan: SourceTaskPlan, offsets: list[tuple[dict[str, Any], Any]]) -> None:
        assert plan.mirror_offsets_topic is not None
        messages = offset_messages(
            plan.mirror_offsets_topic, plan.mirror_offsets_topic_partitions, plan.connector, offsets
        )

        def run() -> None:
            producer = idempotent_producer(self.kafka)
            while True:
                try:
                    for message in messages:
                        produce(
                            producer,
                            message.topic,
                            message.value,
                            message.key,
                            partition=message.partition,
                        )
                    if producer.flush(10) == 0:
                        return
                except KafkaException as error:
                    log.warning(
                        "mirroring offsets to %s failed, retrying: %s",
                        plan.mirror_offsets_topic,
                        error,
                    )
                time.sleep(1)

        thread = threading.Thread(target=run, name="offsets-mirror", daemon=True)
        thread.start()
        self._mirror_threads.append(thread)

    def _finish_mirrors(self) -> None:
        deadline = time.monotonic() + MIRROR_WAIT_S
        for thread in self._mirror_threads:
            thread.join(max(0.0, deadline - time.monotonic()))
