"""`writeStream.format("eosconnect")` with a sink `connector.class`: Connect's sink tasks in Spark.

Driver side: the writer checks the options (the reader's, which the stream's schema carries,
completed with its own: `spark.reader_options`) and the row schema and plans the tasks once.
Executor side: `write()` runs one micro-batch of one sink task on the task's host
(`sink.host`): the rows it gets from the `eosconnect` reader are the task's assigned ranges,
and the task, kept alive there between micro-batches, reads their records from Kafka itself.
Driver side again: `commit()` commits exactly the offsets the tasks' `pre_commit` returned to
the consumer group `connect-<name>`; a failed task means no `commit()`, so nothing is
committed.
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
from spark_eos_connect.kafka.group_offsets import KafkaGroupOffsets
from spark_eos_connect.plugins.connectors import resolve_connector_class
from spark_eos_connect.protocol.sink_groups import merge_committable
from spark_eos_connect.runtime.commit_hooks import installed as installed_hooks
from spark_eos_connect.runtime.errors_dlq import ensure_dlq_topic
from spark_eos_connect.sink.host import run_sink_batch
from spark_eos_connect.sink.kafka_input import (
    SINK_RANGE_SCHEMA,
    poll_timeout_ms,
    ranges_of,
)
from spark_eos_connect.sink.live_task import SinkBatch, SinkTaskResult
from spark_eos_connect.sink.options import parse_sink_options
from spark_eos_connect.sink.plan import plan_sink
from spark_eos_connect.spark.task_context import current_batch_id
from spark_eos_connect.spark.worker_gc import settle_heap

log = logging.getLogger(__name__)

REQUIRED_COLUMNS = tuple(SINK_RANGE_SCHEMA.names)
FOREACH_BATCH_HINT = "foreach_batch_hint"
"""Class attribute of a sink connector that must run through `foreachBatch` (its message)."""


@dataclass
class SinkTaskCommitMessage(WriterCommitMessage):
    """What one sink task did (executor → driver)."""

    result: dict[str, Any]


def check_row_schema(schema: StructType) -> None:
    """Driver: the stream must carry Kafka records (the eosconnect Kafka reader's columns)."""
    if tuple(schema.fieldNames()) != REQUIRED_COLUMNS:
        raise ConfigError(
            "a sink connector's stream is the eosconnect reader's with the connector's options: "
            "spark.readStream.format('eosconnect').options(**options).load(), whose options "
            "the writer takes (its rows are each sink task's offset ranges, columns "
            f"{', '.join(REQUIRED_COLUMNS)}; the tasks read the records themselves); got "
            f"columns {', '.join(schema.fieldNames())}"
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
        self.poll_timeout_ms = poll_timeout_ms(options)
        ensure_dlq_topic(self.plan.resolved_kafka(), self.plan.errors)

    def write(self, iterator: Iterator[pa.RecordBatch]) -> WriterCommitMessage:
        """Executor: one micro-batch of the sink task whose ranges are this Spark task's rows,
        on the task's host. No rows: no task (the topics have no partitions yet)."""
        settle_heap()
        batches = [batch for batch in iterator if batch.num_rows]
        if not batches:
            return WriterCommitMessage()
        share = ranges_of(batches)
        batch = SinkBatch(share.task, current_batch_id(), share.run, share.generation, share.ranges)
        kafka = self.plan.resolved_kafka()
        result = run_sink_batch(kafka, self.plan, batch, self.poll_timeout_ms)
        return SinkTaskCommitMessage(asdict(result))

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        """Driver: commit what `pre_commit` returned to the consumer group `connect-<name>`."""
        settle_heap()
        results = [
            SinkTaskResult(**m.result) for m in messages if isinstance(m, SinkTaskCommitMessage)
        ]
        offsets = merge_committable(r.committable for r in results)
        installed_hooks().reached("before_group_commit", batchId)
        if offsets:
            KafkaGroupOffsets(self.plan.resolved_kafka()).commit(self.plan.group_id, offsets)
        installed_hooks().reached("during_group_commit", batchId)
        print(summarize(batchId, self.plan.group_id, results, len(offsets)), flush=True)

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        """Driver: a task failed; no offsets are committed and Spark retries the batch."""
        log.warning("batch %d aborted; no offsets committed to %s", batchId, self.plan.group_id)
