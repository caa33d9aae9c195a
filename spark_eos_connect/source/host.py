"""A live source task on its task host (`runtime.task_host`): the service that keeps a
`LiveSourceTask` (task instance and producer) between micro-batches, and the worker side's call.

The host stops its task when a plan no longer matches it, when it fails, or when the host goes
away (idle, or its executor gone). A task that fails is dropped. When Spark runs its micro-batch
again (`attempt` > 0), here or on another executor, the fresh task finds in the offsets topic
what an earlier attempt committed, if one did, and emits those rows (`source.replay`); once such
a retry succeeds, the host writes the task's RUNNING status over the FAILED one the failure left
(`runtime.task_status`, as sink tasks report).
"""

from __future__ import annotations

import logging
import time
import traceback
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa

from spark_eos_connect.kafka.producers import ProducerFencedError
from spark_eos_connect.protocol.status_records import StatusState
from spark_eos_connect.runtime import task_host
from spark_eos_connect.runtime.task_host import Reply
from spark_eos_connect.runtime.task_status import TaskStatusReporter
from spark_eos_connect.source.plan import SourceTaskPlan
from spark_eos_connect.source.task_loop import BatchResult, LiveSourceTask

log = logging.getLogger(__name__)


def host_socket_path(kafka: Mapping[str, Any], plan: SourceTaskPlan) -> Path:
    """The socket of the host of `plan`'s task on this machine (one per cluster and task id)."""
    return task_host.host_socket_path(kafka, plan.transactional_id)


# -- worker side -------------------------------------------------------------------------------


def run_on_host(
    kafka: Mapping[str, Any], plan: SourceTaskPlan, batch_id: int | None, attempt: int = 0
) -> Iterator[pa.RecordBatch]:
    """Run `plan` on its task's host; yields the rows of what it committed."""
    request = {"plan": plan, "kafka": dict(kafka), "batch_id": batch_id, "attempt": attempt}
    for kind, payload in task_host.call_host(
        host_socket_path(kafka, plan), SourceTaskService, request
    ):
        if kind == "rows":
            yield payload


# -- host side ---------------------------------------------------------------------------------


def status_reporter(kafka: Mapping[str, Any], plan: SourceTaskPlan) -> TaskStatusReporter:
    """Where `plan`'s task reports its status (`runtime.task_status`), with the generation the
    driver writes."""
    return TaskStatusReporter(
        plan.connector, plan.status_topic, dict(kafka), plan.providers, plan.status_generation
    )


class SourceTaskService:
    """Serves micro-batches of one source task, keeping the task alive between them."""

    def __init__(self) -> None:
        self.live: LiveSourceTask | None = None

    def close(self) -> None:
        """Stop the task (the host goes away, or the task failed)."""
        if self.live is not None:
            live, self.live = self.live, None
            live.close()

    def serve(self, request: Mapping[str, Any], reply: Reply) -> BatchResult:
        """One micro-batch of the task; a failure is reported FAILED in the status topic."""
        plan: SourceTaskPlan = request["plan"]
        kafka: dict[str, Any] = request["kafka"]
        if self.live is not None and (self.live.kafka != kafka or not self.live.matches(plan)):
            self.close()
        started = time.monotonic()
        try:
            result = self._run(reply, kafka, plan, request["batch_id"])
        except (ConnectionError, OSError, ProducerFencedError):
            raise  # the Spark task went away, or the task was fenced (its driver stopped it, or
            # a newer generation runs): not a failure of the task's own to report
        except BaseException:
            failed = traceback.format_exc()
            status_reporter(kafka, plan).report(plan.task, StatusState.FAILED, failed)
            raise
        if result.replayed:
            log.info(
                "batch %s: %d records committed by an earlier attempt of this micro-batch, "
                "replayed",
                request["batch_id"],
                result.records,
            )
        else:
            log.info(
                "batch %s: %d records committed in %d transactions, %.3f s (%s task)",
                request["batch_id"],
                result.records,
                result.transactions,
                time.monotonic() - started,
                "kept" if result.reused else "fresh",
            )
        if request.get("attempt", 0) > 0:  # an earlier attempt failed, and most likely said so
            status_reporter(kafka, plan).report(plan.task, StatusState.RUNNING)
        return result

    def _run(
        self, reply: Reply, kafka: dict[str, Any], plan: SourceTaskPlan, batch_id: Any
    ) -> BatchResult:
        """Run the batch; a kept producer that turns out fenced before anything committed is
        replaced once."""
        reused = self.live is not None
        if self.live is None:
            self.live = LiveSourceTask(kafka, plan)
        result = BatchResult()
        sent = False
        try:
            for rows in self.live.run_batch(plan, batch_id, result):
                reply("rows", rows)
                sent = True
        except ProducerFencedError:
            if not reused or sent:  # rows already out: Spark's retry replays them, not us
                raise
            log.info("task %d: the kept producer was fenced; starting afresh", plan.task)
            self.close()
            self.live = LiveSourceTask(kafka, plan)
            result = BatchResult()
            for rows in self.live.run_batch(plan, batch_id, result):
                reply("rows", rows)
        if self.live.stale:
            self.close()
        return result
