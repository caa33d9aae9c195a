"""A source task that lives across micro-batches: it polls, produces and commits in one process.

As in a Kafka Connect worker, a task is started once per generation and then polled for as many
micro-batches as its plan allows. Each micro-batch polls up to the plan's record and time budget
and writes the records with the task's producer; in exactly-once mode (KIP-618) the records and
the task's source offsets go into one transaction:

- `poll` (default): one transaction per task per micro-batch;
- `interval`: a transaction is committed whenever `transaction.boundary.interval.ms` has passed,
  and at the end of the micro-batch;
- `connector`: only the task ends its transactions (`TransactionContext`); one left open at the
  end of a micro-batch stays open into the next.

The task and its producer are kept while the plan still describes them: same generation, same
config, and the committed offsets of every source partition the task committed are the ones it
committed last. Otherwise a fresh task starts from the planned offsets, after the KIP-618
start-up checks. Once its producer has fenced every earlier attempt, it reads what was committed
to the offsets topic since planning: if an earlier attempt of the same micro-batch committed, it
emits that attempt's rows and runs nothing (`source.replay`); else its first commit checks that
no earlier attempt committed its partitions (a re-executed micro-batch then writes nothing). A
kept producer needs no such check: any other attempt with the same transactional id fences it,
and its commit fails.

`LiveSourceTask` is the template (Kafka Connect's `AbstractWorkerSourceTask`): start, poll,
convert, hand over, commit at the boundaries, close. Its policies are units of their own, each
tested through its public methods: `source.guarantees` (exactly-once or at-least-once, the
strategy), `source.boundaries` (where transactions end: the loop hands each poll's records and
the end of the micro-batch to the boundary, which drives `source.transactions`),
`source.transactions` (records, offsets and commits of the task's transactions),
`source.sender` (records to the producer), `source.submitted` (the submitted and committed
offsets and the delivery reports), `source.replay_guard` (what earlier attempts committed),
`storage.offsets.OffsetsWriter` (the offsets-topic records, written as the KIP-875 endpoints
write them), `source.offsets_mirror` (the copy in the global offsets topic) and
`source.task_failures` (what a failure means). The task's producers, offsets log, config store
and clock come from a `source.task_clients.SourceTaskClients` (the Kafka ones by default;
`storage.memory_log` has in-memory twins).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Iterator, Mapping
from typing import Any, cast

import pyarrow as pa

from spark_eos_connect.api.source import (
    InMemoryOffsetStorageReader,
    SourceRecord,
    SourceTask,
    SourceTaskContext,
    TransactionContext,
)
from spark_eos_connect.errors import EosConnectError
from spark_eos_connect.jvm_tasks.converted import ConvertedRecords, ConvertingSourceTask
from spark_eos_connect.kafka.producers import ProducerClientError, fatal_cause
from spark_eos_connect.plugins.loader import load_class
from spark_eos_connect.ports import ConfigStore, TransactionalProducer
from spark_eos_connect.protocol.generations import (
    TaskStartupError,
    connector_running,
    task_startup_problem,
)
from spark_eos_connect.protocol.offsets_format import partition_key
from spark_eos_connect.source.batch_result import BatchResult
from spark_eos_connect.source.conversion import RecordPreparer
from spark_eos_connect.source.guarantees import COMMIT_TIMEOUT_S, guarantee_for
from spark_eos_connect.source.offsets_mirror import OffsetsMirror
from spark_eos_connect.source.plan import SourceTaskPlan
from spark_eos_connect.source.replay import EarlierAttempt
from spark_eos_connect.source.replay_guard import ReplayGuard, stale_partitions
from spark_eos_connect.source.sender import InternalTopicError, RecordSender, internal_topics
from spark_eos_connect.source.submitted import SubmittedOffsets
from spark_eos_connect.source.task_clients import KafkaTaskClients, SourceTaskClients
from spark_eos_connect.source.task_failures import DeliveryFailedError, TaskFailures
from spark_eos_connect.source.transactions import TaskTransactions

__all__ = [
    "COMMIT_TIMEOUT_S",
    "BatchResult",
    "DeliveryFailedError",
    "InternalTopicError",
    "LiveSourceTask",
    "internal_topics",
    "run_task_once",
    "same_generation",
    "stale_partitions",
]

log = logging.getLogger(__name__)


def same_generation(a: SourceTaskPlan, b: SourceTaskPlan) -> bool:
    """Whether two plans describe the same task of the same generation and settings."""
    return (
        a.connector == b.connector
        and a.task == b.task
        and a.task_class == b.task_class
        and a.task_config == b.task_config
        and a.transactional_id == b.transactional_id
        and a.exactly_once == b.exactly_once
        and a.transaction_boundary == b.transaction_boundary
        and a.offsets_topic == b.offsets_topic
        and a.generation_commit_offset == b.generation_commit_offset
        and a.conversion == b.conversion
    )


CONVERTED_BATCH_MAX = 10_000
"""Records one converted batch of a Java task holds at most: the JVM task host builds it in its
heap (a micro-batch's whole share, 450,000 lines of 100 bytes, ran a 64 MB heap out of memory)."""


class LiveSourceTask:
    """One source task and its producer, kept across the micro-batches of one generation.

    `clients` builds what the task reaches the world with: by default the Kafka clients of
    the cluster `kafka` names (references resolved with the plan's providers).
    """

    def __init__(
        self,
        kafka: Mapping[str, Any],
        plan: SourceTaskPlan,
        before_producer: Callable[[], None] | None = None,
        clients: SourceTaskClients | None = None,
    ) -> None:
        self.kafka = dict(kafka)
        """The Kafka settings as the driver sent them (references unresolved)."""
        resolved = plan.providers.resolve(kafka, prefix="kafka.")
        self._task_clients = clients if clients is not None else KafkaTaskClients(resolved)
        self._clock = self._task_clients.clock
        self.plan = plan
        self._before_producer = before_producer
        self._guarantee = guarantee_for(plan)
        self._submitted = SubmittedOffsets(plan.committed)
        self._failures = TaskFailures(plan, resolved)
        self.task: SourceTask | None = None
        self._context: TransactionContext | None = None
        self._preparer: RecordPreparer | None = None
        self.producer: TransactionalProducer | None = None
        self._transactions: TaskTransactions | None = None
        self._config_store: ConfigStore | None = None
        self._guard: ReplayGuard | None = None
        self._earlier: EarlierAttempt | None = None
        """Set when the task started: an earlier attempt of its micro-batch committed."""
        self._replayed = False
        self.batches = 0
        self.closed = False

    @property
    def stale(self) -> bool:
        """Whether the task must not run another micro-batch: it replayed what an earlier
        attempt committed, or found its partitions committed by one (`TaskTransactions`)."""
        return self._replayed or (self._transactions is not None and self._transactions.stale)

    # -- reuse -------------------------------------------------------------------------------

    def matches(self, plan: SourceTaskPlan) -> bool:
        """Whether `plan` continues this task: same generation, offsets as this task left them."""
        if self.closed or self.stale or not same_generation(self.plan, plan):
            return False
        return self._submitted.left_as({partition_key(p): o for p, o in plan.committed})

    # -- one micro-batch ---------------------------------------------------------------------

    def run_batch(
        self, plan: SourceTaskPlan, batch_id: int | None, result: BatchResult
    ) -> Iterator[pa.RecordBatch]:
        """Poll and write one micro-batch; yields the rows of the records it committed.

        Fills `result`. Raises on failure; the task must then be closed and not reused.
        """
        self.plan = plan
        self._failures.plan = plan
        result.connector, result.task = plan.connector, plan.task
        result.exactly_once, result.reused = plan.exactly_once, self.batches > 0
        self.batches += 1
        if not self._may_run(plan, batch_id):
            return
        if self._earlier is not None:
            yield from self._replay(self._earlier, result)
            return
        transactions = self._transactions
        assert transactions is not None
        transactions.start_batch(plan, batch_id, result)
        boundary = self._guarantee.boundary(plan, self._context)
        clock = self._clock
        deadline = clock.monotonic() + plan.max_poll_duration_ms / 1000
        dispatched, ends_poll = 0, True
        whole_polls = plan.transaction_boundary != "connector"
        while not self.stale and (
            (whole_polls and not ends_poll)
            or (dispatched < plan.max_records and clock.monotonic() < deadline)
        ):  # under the poll and interval boundaries a poll is taken whole
            records, ends_poll = self._next_records(plan, dispatched, deadline, ends_poll)
            if not records:
                boundary.after_empty_poll(cast("list[SourceRecord]", records), transactions)
                yield from transactions.take_rows()
                break
            if dispatched == 0:
                plan.hooks.reached("poll", batch_id)
            dispatched += len(records)
            # a Java task's converted records carry its TransactionContext requests with them
            # (`ConvertedRecords.on_last`, `after_poll`), which the connector boundary applies
            boundary.dispatch(cast("list[SourceRecord]", records), ends_poll, transactions)
            yield from transactions.take_rows()
        if not self.stale:
            boundary.end_batch(transactions)
        result.open_transaction = transactions.open
        transactions.flush_mirror()
        yield from transactions.take_rows()

    def _next_records(
        self, plan: SourceTaskPlan, dispatched: int, deadline: float, after_poll: bool
    ) -> tuple[list[SourceRecord] | ConvertedRecords, bool]:
        """The next records, and whether they end a `poll()` batch.

        A Python task's poll comes whole. A converting task's (a Java plugin's, `jvm_tasks`)
        comes in batches of at most the micro-batch's remaining records; when the last one
        stopped inside a poll (not `after_poll`) the rest of that poll comes next. Under the
        `poll` and `interval` boundaries `run_batch` takes a poll whole, so that one poll's
        records are never split between two transactions, as in Connect: records of one
        change may share an offset (Debezium's delete, tombstone and create of a key change),
        and committing some of them would record the change as done. A micro-batch may so
        exceed `maxRecordsPerTrigger` by the rest of its last poll."""
        assert self.task is not None
        if not isinstance(self.task, ConvertingSourceTask):
            return self.task.poll() or [], True
        if not after_poll:
            batch = self.task.poll_converted(CONVERTED_BATCH_MAX, 0.0, rest_of_poll=True)
        else:
            limit = plan.max_records - dispatched
            wait_s = max(0.0, deadline - self._clock.monotonic())
            batch = self.task.poll_converted(min(limit, CONVERTED_BATCH_MAX), wait_s)
        return batch, batch.ends_poll

    # -- start-up (KIP-618) ------------------------------------------------------------------

    def _may_run(self, plan: SourceTaskPlan, batch_id: int | None) -> bool:
        """Start the task on first use; False if the connector stopped or paused since the
        batch was planned (nothing is written, nothing moves)."""
        if self.task is None:
            return self._start(plan, batch_id)
        if self._config_store is not None:  # one cheap request when nothing changed
            return self._check_generation(self._config_store, plan)
        return True

    def _start(self, plan: SourceTaskPlan, batch_id: int | None) -> bool:
        config = plan.providers.resolve(plan.task_config)  # before any client is built
        if plan.conversion is not None and self._preparer is None:
            self._preparer = RecordPreparer(
                plan.conversion,
                plan.providers.resolve(plan.conversion.options),
                f"{plan.connector}-{plan.task}",
            )
        if plan.config_topic:
            self._config_store = self._task_clients.config_store(plan.config_topic, plan.group_id)
            if not self._check_generation(self._config_store, plan):
                return False
        if self._before_producer is not None:
            self._before_producer()
        self.producer = self._task_clients.task_producer(
            self._guarantee.transactional_id(plan), self._submitted.delivered
        )
        if self._config_store is not None and not self._check_generation(self._config_store, plan):
            return False
        # after init_transactions: no earlier attempt commits any more
        self._guard = self._guarantee.replay_guard(self._task_clients, plan)
        if self._guard is not None:
            self._earlier = self._guard.since_planning(plan, batch_id)
            if self._earlier is not None:
                return True  # the micro-batch was committed: replay it, start nothing
        task_class = load_class(plan.task_class, "source task class", SourceTask)
        if issubclass(task_class, ConvertingSourceTask):  # a Java plugin's task (`jvm_tasks`)
            task: SourceTask = task_class(plan.extra, plan.providers.resolve)
        else:
            task = task_class()
        self._context = TransactionContext() if plan.transaction_boundary == "connector" else None
        task.initialize(
            SourceTaskContext(
                config,
                InMemoryOffsetStorageReader(plan.committed),
                self._context,
                task_id=plan.task,
                connector_name=plan.connector,
            )
        )
        task.start(config)
        self.task = task
        sender = RecordSender(
            plan,
            self.producer,
            self._submitted,
            self._preparer,
            type(task).commit_record is not SourceTask.commit_record,
            functools.partial(self._guarantee.dropped, task, submitted=self._submitted),
            self._refused,
        )
        self._transactions = TaskTransactions(
            task,
            sender,
            self._guarantee,
            self._submitted,
            self._failures,
            self._guard,
            OffsetsMirror(self._task_clients.mirror_producer),
            self._clock,
        )
        return True

    def _replay(self, earlier: EarlierAttempt, result: BatchResult) -> Iterator[pa.RecordBatch]:
        """Emit what an earlier attempt of the micro-batch committed; run and write nothing."""
        self._earlier = None
        self._replayed = True  # stale: the host starts a fresh task for the next micro-batch
        result.replayed = True
        result.transactions = earlier.transactions
        result.records = sum(rows.num_rows for rows in earlier.rows)
        if earlier.unrecorded:
            log.warning(
                "connector %s task %d: %d transactions of an earlier attempt of this "
                "micro-batch committed more fragmented offsets than their header holds; their "
                "rows are not emitted again (the records are in Kafka, once)",
                self.plan.connector,
                self.plan.task,
                earlier.unrecorded,
            )
        yield from earlier.rows

    @staticmethod
    def _check_generation(store: ConfigStore, plan: SourceTaskPlan) -> bool:
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

    # -- records -----------------------------------------------------------------------------

    def _refused(self, error: ProducerClientError, topic: str) -> EosConnectError:
        """A record refused at once; a producer already fenced refuses every record with a
        fatal error standing for the fencing (`fatal_cause`)."""
        cause = fatal_cause(self.producer, error)
        return self._failures.refused(cause, topic, self._submitted.take_refusals())

    # -- end ---------------------------------------------------------------------------------

    def close(self) -> None:
        """Abort what is open and stop the task (the generation ended or the task failed)."""
        if self.closed:
            return
        self.closed = True
        if self._transactions is not None:
            self._transactions.abandon()
        if self._preparer is not None:
            self._preparer.close()
        if self.task is not None:
            try:
                self.task.stop()
            except Exception as error:  # the task is going away either way
                log.warning("task %d stop() failed: %s", self.plan.task, error)
        if self._config_store is not None:
            self._config_store.close()
        if self._guard is not None:
            self._guard.close()
        if self._transactions is not None:
            self._transactions.flush_mirror()


def run_task_once(
    kafka: Mapping[str, Any],
    plan: SourceTaskPlan,
    batch_id: int | None = 0,
    before_producer: Callable[[], None] | None = None,
    clients: SourceTaskClients | None = None,
) -> BatchResult:
    """One micro-batch of a freshly started task, which is then stopped (tools and tests)."""
    live = LiveSourceTask(kafka, plan, before_producer, clients)
    result = BatchResult()
    try:
        for _ in live.run_batch(plan, batch_id, result):
            pass
    finally:
        live.close()
    return result
