"""`writeStream.format("eosconnect")` for a source connector's stream.

The source tasks have already written their records and offsets to Kafka, in transactions, by
the time Spark sees a row (see `source.task_loop`); each row is a committed record. This writer
checks that it is attached to the connector it names and reports each micro-batch.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSourceStreamArrowWriter, WriterCommitMessage

from spark_eos_connect.api.config import InvalidConfigError
from spark_eos_connect.errors import ConfigError
from spark_eos_connect.runtime.config.options import DataSourceOptions
from spark_eos_connect.spark.worker_gc import settle_heap

log = logging.getLogger(__name__)

COMMITTED_COLUMNS = ("topic", "partition", "offset")


@dataclass
class CommittedRowsMessage(WriterCommitMessage):
    """How many committed records one Spark task saw (executor → driver)."""

    records: int


def summarize(batch_id: int, messages: list[CommittedRowsMessage]) -> str | None:
    """The one-line summary printed for a micro-batch; None when it committed nothing (an idle
    source's batches print no line)."""
    records = sum(m.records for m in messages)
    if not records:
        return None
    return f"batch {batch_id}: {records} records committed to Kafka ({len(messages)} tasks)"


class EosConnectSourceStreamWriter(DataSourceStreamArrowWriter):
    """The end of a source connector's stream: its records are committed to Kafka already."""

    def __init__(self, options: Mapping[str, Any] | DataSourceOptions) -> None:
        read = DataSourceOptions.read(options)
        kafka = read.kafka
        self.name = read.get("name")
        problems: dict[str, list[str]] = {}
        if not self.name:
            problems["name"] = [
                "Missing option name: the source connector whose stream this is "
                "(the same value as the reader's name option)"
            ]
        if "transactional.id" in kafka:
            problems["kafka.transactional.id"] = [
                "Option kafka.transactional.id cannot be set: source tasks use "
                "<group.id>-<connector>-<task>"
            ]
        if problems:  # every problem at once, when Spark creates the writer
            raise InvalidConfigError(problems)

    def write(self, iterator: Iterator[pa.RecordBatch]) -> CommittedRowsMessage:
        """Executor: count the committed records of one source task."""
        settle_heap()
        records = 0
        for batch in iterator:
            if batch.num_rows == 0:
                continue
            if batch.schema.names[: len(COMMITTED_COLUMNS)] != list(COMMITTED_COLUMNS):
                raise ConfigError(
                    "the eosconnect writer (source mode) takes the stream of "
                    "spark.readStream.format('eosconnect') with a source connector as it is "
                    f"(columns {', '.join(COMMITTED_COLUMNS)}); got {batch.schema.names}"
                )
            records += batch.num_rows
        return CommittedRowsMessage(records)

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        """Driver: the records are already committed in Kafka; report the batch."""
        settle_heap()
        done = [m for m in messages if isinstance(m, CommittedRowsMessage)]
        summary = summarize(batchId, done)
        if summary:
            print(summary, flush=True)

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        """Driver: Spark gave up on the batch; what tasks committed in Kafka stays committed."""
        log.warning("batch %d aborted by Spark; Kafka holds what the tasks committed", batchId)
