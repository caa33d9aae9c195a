"""`readStream.format("eosconnect").option("topics", ...)`: Kafka topics as a Spark stream.

Driver side: `EosConnectKafkaStreamReader` (one per query, in a long-lived Python process) plans
each micro-batch as offset ranges below the last stable offsets, so a micro-batch replayed from
Spark's offsets reads exactly the same records. Executor side: `read()` reads one range with a
read_committed consumer and yields Arrow batches (rows as in `KAFKA_ROW_DDL`).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxRows,
    SupportsTriggerAvailableNow,
)

from spark_eos_connect.runtime.kafka_source import (
    TP,
    KafkaMetadata,
    KafkaReaderConfig,
    OffsetRange,
    offsets_from_json,
    offsets_to_json,
    parse_reader_options,
    plan_end_offsets,
    plan_ranges,
    read_range,
)

log = logging.getLogger(__name__)


@dataclass
class KafkaRangePartition(InputPartition):
    """One topic partition's offset range of a micro-batch (driver → executor)."""

    range: OffsetRange
    kafka: dict[str, str]
    poll_timeout_ms: int


class EosConnectKafkaStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Micro-batches of Kafka records; Spark's offsets are `{"topic": {"partition": offset}}`."""

    def __init__(self, options: Mapping[str, Any]) -> None:
        self.config: KafkaReaderConfig = parse_reader_options(options)
        self._metadata: KafkaMetadata | None = None
        self._available_now: dict[TP, int] | None = None

    def _kafka(self) -> KafkaMetadata:
        if self._metadata is None:
            self._metadata = KafkaMetadata(self.config.kafka)
        return self._metadata

    def _latest(self) -> dict[TP, int]:
        metadata = self._kafka()
        return metadata.last_stable_offsets(metadata.partitions(self.config))

    def initialOffset(self) -> dict[str, dict[str, int]]:
        """Driver: consumer group `connect-<name>`'s offsets, else `startingOffsets`."""
        return offsets_to_json(self._kafka().initial_offsets(self.config))

    def getDefaultReadLimit(self) -> ReadLimit:
        """Driver: `maxRecordsPerTrigger` if set."""
        limit = self.config.max_records_per_trigger
        return ReadAllAvailable() if limit is None else ReadMaxRows(limit)

    def prepareForTriggerAvailableNow(self) -> None:
        """Driver: `Trigger.AvailableNow` reads up to the offsets stable right now."""
        self._available_now = self._latest()

    def latestOffset(
        self, start: dict[str, Any] | None = None, limit: ReadLimit | None = None
    ) -> dict[str, dict[str, int]]:
        """Driver: the next batch's end, capped by the read limit (shared by lag)."""
        begin = offsets_from_json(start) if start is not None else {}
        latest = self._latest()
        if self._available_now is not None:
            target = self._available_now
            latest = {tp: min(o, target.get(tp, begin.get(tp, 0))) for tp, o in latest.items()}
        rows = limit.max_rows if isinstance(limit, ReadMaxRows) else None
        return offsets_to_json(plan_end_offsets(begin, latest, rows))

    def reportLatestOffset(self) -> dict[str, dict[str, int]] | None:
        """Driver: the last stable offsets, for the query's progress."""
        return offsets_to_json(self._latest())

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> Sequence[InputPartition]:
        """Driver: one input partition per topic partition with records in `[start, end)`."""
        ranges = plan_ranges(offsets_from_json(start), offsets_from_json(end))
        return [
            KafkaRangePartition(r, self.config.kafka, self.config.poll_timeout_ms) for r in ranges
        ]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        """Executor: the committed records of one range."""
        assert isinstance(partition, KafkaRangePartition)
        yield from read_range(partition.kafka, partition.range, partition.poll_timeout_ms)

    def commit(self, end: dict[str, Any]) -> None:
        """Driver: nothing; sinks commit offsets to the consumer group (or keep them)."""

    def stop(self) -> None:
        """Driver: drop the admin client."""
        self._metadata = None
