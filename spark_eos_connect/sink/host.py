"""A live sink task on its task host (`runtime.task_host`), reading its records from Kafka.

`SinkTaskService` keeps one `LiveSinkTask` between micro-batches; its input is
`KafkaSinkInput`: a range consumer kept for the task's life (`kafka.range_reader.RangeReader`)
and the consumer group's committed offsets. So a sink's records go from Kafka to the task
without crossing Spark's JVM; Spark carries only each task's ranges and its result. A task
that fails reports FAILED with its trace in the status topic (RUNNING when one starts;
`runtime.task_status`) and is closed and dropped (the host closes its service), as is one whose
plan or generation changed; the host closes it too when no micro-batch came for `HOST_IDLE_S`
(the query stopped, or the connector is paused or stopped) or its executor is gone.
"""

from __future__ import annotations

import logging
import threading
import time
import traceback
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from spark_eos_connect.kafka.group_offsets import KafkaGroupOffsets
from spark_eos_connect.kafka.range_reader import OffsetRange, RangeReader
from spark_eos_connect.protocol.sink_groups import TP
from spark_eos_connect.protocol.status_records import StatusState
from spark_eos_connect.runtime import task_host
from spark_eos_connect.runtime.task_host import Reply
from spark_eos_connect.runtime.task_status import TaskStatusReporter
from spark_eos_connect.sink.live_task import LiveSinkTask, SinkBatch, SinkTaskResult
from spark_eos_connect.sink.plan import SinkTaskPlan
from spark_eos_connect.sink.rows import RecordChunk

log = logging.getLogger(__name__)


class KafkaSinkInput:
    """A live sink task's records (`RangeReader`) and its group's committed offsets."""

    def __init__(self, kafka: Mapping[str, Any], group_id: str, poll_timeout_ms: int) -> None:
        self.kafka = dict(kafka)
        self.group_id = group_id
        self.reader = RangeReader(kafka, poll_timeout_ms)

    def committed(self, partitions: Sequence[TP]) -> dict[TP, int]:
        """The group's committed offsets of `partitions` (Admin API; asked when partitions are
        opened, not every micro-batch)."""
        offsets = KafkaGroupOffsets(self.kafka).committed(self.group_id)
        return {tp: offsets[tp] for tp in partitions if tp in offsets}

    def read(self, ranges: Sequence[OffsetRange]) -> Iterator[RecordChunk]:
        """The committed records of `ranges`, the partitions fetched together."""
        return map(RecordChunk.of_columns, self.reader.read_columns(ranges))

    def forget(self, partitions: Sequence[TP]) -> None:
        """Stop fetching `partitions`."""
        self.reader.forget(partitions)

    def close(self) -> None:
        """Close the consumer."""
        self.reader.close()


def status_reporter(plan: SinkTaskPlan) -> TaskStatusReporter:
    """Where `plan`'s tasks report their status (`runtime.task_status`, as source tasks do)."""
    return TaskStatusReporter(plan.connector, plan.status_topic, plan.kafka, plan.providers)


def host_identity(plan: SinkTaskPlan, task: int) -> str:
    """What names a sink task's host: its consumer group and task number."""
    return f"sink\0{plan.group_id}\0{task}"


# -- worker side -------------------------------------------------------------------------------


def run_sink_batch(
    kafka: Mapping[str, Any], plan: SinkTaskPlan, batch: SinkBatch, poll_timeout_ms: int
) -> SinkTaskResult:
    """Run `batch` on its task's host (started if need be); what the task did."""
    path = task_host.host_socket_path(kafka, host_identity(plan, batch.task))
    request = {"plan": plan, "batch": batch, "poll_timeout_ms": poll_timeout_ms}
    result: SinkTaskResult | None = None
    for kind, payload in task_host.call_host(path, SinkTaskService, request):
        if kind == "done":
            result = payload
    assert result is not None
    return result


# -- host side ---------------------------------------------------------------------------------


class SinkTaskService:
    """Serves micro-batches of one sink task, keeping the task alive between them."""

    def __init__(self) -> None:
        self.live: LiveSinkTask | None = None
        self.running_report: threading.Thread | None = None

    def close(self) -> None:
        """Close the task: `close(partitions)`, `stop()`."""
        if self.live is not None:
            live, self.live = self.live, None
            live.close()

    def serve(self, request: Mapping[str, Any], reply: Reply) -> SinkTaskResult:
        """One micro-batch of the task (a failure closes it: the host closes its service)."""
        plan: SinkTaskPlan = request["plan"]
        batch: SinkBatch = request["batch"]
        if self.live is not None and not self.live.matches(plan, batch):
            log.info(
                "task %d: new query run, plan or generation; stopping the kept task", batch.task
            )
            self.close()
        began = time.monotonic()
        try:
            live = self.live or self._start(plan, batch, int(request["poll_timeout_ms"]))
            result = live.run_batch(batch)
        except BaseException:
            self._await_running_report()  # FAILED must be the task's last status
            failed = traceback.format_exc()
            status_reporter(plan).report(batch.task, StatusState.FAILED, failed)
            raise
        log.info(
            "batch %s: task %d put %d records in %.3f s (%s task)",
            batch.batch_id,
            batch.task,
            result.records_put,
            time.monotonic() - began,
            "fresh" if result.started else "kept",
        )
        return result

    def _start(self, plan: SinkTaskPlan, batch: SinkBatch, poll_timeout_ms: int) -> LiveSinkTask:
        """A new task (`start` called), reported RUNNING while its first micro-batch runs, as
        Connect reports a task once its `start` returned."""
        source = KafkaSinkInput(plan.resolved_kafka(), plan.group_id, poll_timeout_ms)
        self.live = LiveSinkTask(plan, batch, source)
        self._await_running_report()
        self.running_report = threading.Thread(
            target=status_reporter(plan).report,
            args=(batch.task, StatusState.RUNNING),
            name=f"sink-task-{batch.task}-status",
            daemon=True,
        )
        self.running_report.start()
        return self.live

    def _await_running_report(self) -> None:
        if self.running_report is not None:
            self.running_report.join()
            self.running_report = None
