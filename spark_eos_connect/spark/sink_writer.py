"""`writeStream.format("eosconnect")` with a sink `connector.class`: Connect's sink tasks in Spark.

Driver side: the writer checks the options and the row schema and plans the tasks once.
Executor side: `write()` runs one sink task over its rows (`sink.runner`). Driver side
again: `commit()` commits exactly the offsets the tasks' `pre_commit` returned to the consumer
group `connect-<name>`; a failed task means no `commit()`, so nothing is committed.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSourceStreamArrowWriter, WriterCommitMessage
from pyspark.sql.types import StructType

from spark_eos_connect.api.sink import SinkConnector
from spark_eos_connect.errors import ConfigError
from spark_eos_connect.plugins.connectors import resolve_connector_class
from spark_eos_connect.runtime.commit_hooks import installed as installed_hooks
from spark_eos_connect.runtime.errors_dlq import ensure_dlq_topic
from spark_eos_connect.sink.kafka_input import KafkaMetadata
from spark_eos_connect.sink.options import parse_sink_options
from spark_eos_connect.sink.plan import plan_sink
from spark_eos_connect.sink.runner import SinkTaskResult, merge_committable, run_sink_task
from spark_eos_connect.spark.task_context import current_batch_id
from spark_eos_connect.spark.worker_gc import settle_heap

log = logging.getLogger(__name__)

REQUIRED_COLUMNS = ("topic", "partition", "offset", "value")
FOREACH_BATCH_HINT = "foreach_batch_hint"
"""Class attribute of a sink connector that must run through `foreachBatch` (its message)."""


@dataclass
class SinkTaskCommitMessage(WriterCommitMessage):
    """What one sink task did (executor → driver)."""

    result: dict[str, Any]


def check_row_schema(schema: StructType) -> None:
    """Driver: the stream must carry Kafka records (the eosconnect Kafka reader's columns)."""
    names = set(schema.fieldNames())
    missing = [c for c in REQUIRED_COLUMNS if c not in names]
    if missing:
        raise ConfigError(
            f"a sink connector needs Kafka records with columns {', '.join(REQUIRED_COLUMNS)} "
            f"(and optionally key, timestamp, headers); missing: {', '.join(missing)}. Read them "
            "with spark.readStream.format('eosconnect').option('topics', ...)"
        )


def summarize(batch_id: int, group: str, results: list[SinkTaskResult], committed: int) -> str:
    """The one-line summary printed for each micro-batch; counts that are 0 are left out."""
    parts = [f"batch {batch_id}: {sum(r.records_put for r in results)} records put"]
    filtered = sum(r.records_filtered for r in results)
    failed = sum(r.records_failed for r in results)
    if filtered:
        parts.append(f"{filtered} filtered by transforms")
    if failed:
        parts.append(f"{failed} failed records tolerated")
    if committed:
        parts.append(f"{committed} partition offsets committed to {group}")
    return ", ".join(parts) + f" ({len(results)} tasks)"


class EosConnectSinkStreamWriter(DataSourceStreamArrowWriter):
    """Runs a sink connector's tasks on the stream's Kafka records."""

    def __init__(self, options: Mapping[str, Any], schema: StructType) -> None:
        parsed = parse_sink_options(options)
        cls = resolve_connector_class(parsed.values["connector.class"])
        hint = getattr(cls, FOREACH_BATCH_HINT, None)
        if hint:
            raise ConfigError(str(hint))
        if not issubclass(cls, SinkConnector):
            raise ConfigError(f"connector.class {parsed.values['connector.class']!r} is no sink")
        check_row_schema(schema)
        self.plan = plan_sink(parsed, cls())
        ensure_dlq_topic(self.plan.resolved_kafka(), self.plan.errors)

    def write(self, iterator: Iterator[pa.RecordBatch]) -> SinkTaskCommitMessage:
        """Executor: one sink task over this Spark task's rows."""
        settle_heap()
        from pyspark import TaskContext

        context = TaskContext.get()
        task = context.partitionId() if context is not None else 0
        result = run_sink_task(self.plan, task, iterator, current_batch_id())
        return SinkTaskCommitMessage(asdict(result))

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        """Driver: commit what `pre_commit` returned to the consumer group `connect-<name>`."""
        settle_heap()
        results = [
            SinkTaskResult(**m.result) for m in messages if isinstance(m, SinkTaskCommitMessage)
        ]
        offsets = merge_committable(results)
        installed_hooks().reached("before_group_commit", batchId)
        if offsets:
            kafka = self.plan.resolved_kafka()
            KafkaMetadata(kafka).commit_group_offsets(self.plan.group_id, offsets)
        installed_hooks().reached("during_group_commit", batchId)
        print(summarize(batchId, self.plan.group_id, results, len(offsets)), flush=True)

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        """Driver: a task failed; no offsets are committed and Spark retries the batch."""
        log.warning("batch %d aborted; no offsets committed to %s", batchId, self.plan.group_id)
