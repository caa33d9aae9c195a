"""`writeStream.format("eosconnect")` for rows of a source connector: each Spark task writes its
source task's records and offsets in Kafka transactions (see `runtime.source_writer`)."""

from __future__ import annotations

import logging
import traceback
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSourceStreamArrowWriter, WriterCommitMessage

from spark_eos_connect.errors import ConfigError
from spark_eos_connect.protocol.status_records import StatusState
from spark_eos_connect.runtime.framework_config import split_options
from spark_eos_connect.runtime.leadership import worker_id
from spark_eos_connect.runtime.source_plan import (
    SourceTaskPlan,
    read_boundaries,
    read_manifest,
    remove_boundaries,
)
from spark_eos_connect.runtime.source_writer import SourceTaskWriter, TaskWriteResult
from spark_eos_connect.spark.task_context import attempt_key, current_batch_id
from spark_eos_connect.storage.status_store import KafkaStatusStore

log = logging.getLogger(__name__)


@dataclass
class SourceTaskCommitMessage(WriterCommitMessage):
    """What one task attempt wrote (executor → driver)."""

    result: dict[str, Any]


def summarize(batch_id: int, results: list[TaskWriteResult]) -> str:
    """The one-line summary printed for each micro-batch."""
    started = [r for r in results if r.task >= 0]  # tasks that had rows, hence a plan
    mode = "exactly-once" if all(r.exactly_once for r in started) else "at-least-once"
    return (
        f"batch {batch_id}: {sum(r.records for r in results)} records, "
        f"{sum(r.transactions for r in results)} transactions, "
        f"{sum(r.offsets_committed for r in results)} offsets committed, "
        f"{sum(r.stale_rows_skipped for r in results)} stale rows skipped "
        f"({len(results)} tasks, {mode})"
    )


def report_task_failure(kafka: dict[str, str], plan: SourceTaskPlan, trace: str) -> None:
    """Best effort: the task's FAILED state and trace in the status topic (Connect's format)."""
    if not plan.status_topic:
        return
    try:
        store = KafkaStatusStore(kafka, plan.status_topic)
        store.put_task_status(plan.connector, plan.task, StatusState.FAILED, worker_id(), 0, trace)
        store.close()
    except Exception as error:  # the task's own failure is what must surface
        log.warning("could not record the failure of task %d: %s", plan.task, error)


class EosConnectSourceStreamWriter(DataSourceStreamArrowWriter):
    """Writes source rows to Kafka, records and offsets in one transaction per task."""

    def __init__(self, options: Mapping[str, Any]) -> None:
        rest, self.kafka = split_options({str(k).lower(): v for k, v in options.items()})
        self.name = rest.get("name")
        if not self.name:
            raise ConfigError(
                "Missing option name: the source connector whose rows this stream writes "
                "(the same value as the reader's name option)"
            )
        if "bootstrap.servers" not in self.kafka:
            raise ConfigError(
                "Missing option kafka.bootstrap.servers: the Kafka cluster to write to"
            )
        if "transactional.id" in self.kafka:
            raise ConfigError(
                "Option kafka.transactional.id cannot be set: source tasks use "
                "<group.id>-<connector>-<task>"
            )

    def _load_plan(self, key: str) -> SourceTaskPlan:
        plan = read_manifest(key)
        if plan.connector != self.name:
            raise ConfigError(
                f"option name={self.name!r} does not match the connector of the rows "
                f"({plan.connector!r})"
            )
        return plan

    def write(self, iterator: Iterator[pa.RecordBatch]) -> SourceTaskCommitMessage:
        """Executor: write this task's rows of the micro-batch."""
        key = attempt_key()
        writer = SourceTaskWriter(
            self.kafka,
            lambda: self._load_plan(key),
            current_batch_id(),
            boundaries=lambda: read_boundaries(key),
        )
        try:
            return SourceTaskCommitMessage(asdict(writer.write(iterator)))
        except Exception:
            if writer.plan is not None:
                report_task_failure(self.kafka, writer.plan, traceback.format_exc())
            raise
        finally:
            remove_boundaries(key)

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        """Driver: the records are already committed in Kafka; report the batch."""
        results = [
            TaskWriteResult(**m.result) for m in messages if isinstance(m, SourceTaskCommitMessage)
        ]
        print(summarize(batchId, results), flush=True)

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        """Driver: tasks aborted their own transactions; nothing was committed by them."""
        log.warning("batch %d aborted; uncommitted task transactions were aborted", batchId)
