"""A sink task's records from Kafka rows, as Connect's WorkerSinkTask makes them.

`RecordMaker.make(chunk)` converts a chunk's keys, values and headers a column at a time with
the connector's converters (`sink.decoding`), then runs the `transforms` chain (with
`predicates`) on each record: a record a stage filters out is not put, but its offset counts as
consumed; a failing stage is a `TRANSFORMATION` failure. Records that fail are handled by
`errors.tolerance` (`runtime.errors_dlq`), in row order. Without transforms the records stay
columns (`SinkRecords`).
"""

from __future__ import annotations

import itertools
from typing import Any

from spark_eos_connect.api.sink import SinkRecord, SinkRecords
from spark_eos_connect.runtime.errors_dlq import ErrorReporter, FailedRecord, Stage
from spark_eos_connect.sink.decoding import (
    RecordConverters,
    convert_column,
    convert_headers,
    failed_record,
    header_values,
)
from spark_eos_connect.sink.options import TRANSFORMS
from spark_eos_connect.sink.rows import RecordChunk
from spark_eos_connect.transforms.arrow import split_topic_stages


class RecordMaker:
    """Converters and transforms of one sink task (kept for the task's life)."""

    def __init__(self, converters: RecordConverters, chain: Any, reporter: ErrorReporter) -> None:
        self.converters = converters
        self.chain = chain
        self.reporter = reporter
        self.head, rest = split_topic_stages(chain)
        self.stages = rest.stages
        self.routes: dict[str, str | None] = {}
        """The topic-only head's outcome per topic (decided once per topic)."""
        self.filtered = 0
        """Records a transformation filtered out so far."""

    def make(self, rows: RecordChunk) -> tuple[SinkRecords, list[int]]:
        """The chunk's records for `put` and the row of each."""
        failed: dict[int, FailedRecord] = {}
        converters = self.converters
        key_schemas, keys = convert_column(
            converters.key, Stage.KEY_CONVERTER, rows, rows.keys, failed
        )
        value_schemas, values = convert_column(
            converters.value, Stage.VALUE_CONVERTER, rows, rows.values, failed
        )
        headers = convert_headers(converters.header, rows, failed)
        for row in sorted(failed):
            self.reporter.report(failed[row])
        if self.chain:
            converted = (keys, values, key_schemas, value_schemas, headers)
            return self._transformed(rows, converted, failed)
        plain = header_values(headers)
        columns: list[list[Any]] = [
            rows.topics,
            rows.partitions,
            rows.offsets,
            keys,
            values,
            rows.timestamps,
            plain,
            key_schemas,
            value_schemas,
        ]
        kept = list(range(len(rows)))
        if failed:
            keep = [row not in failed for row in kept]
            columns = [list(itertools.compress(column, keep)) for column in columns]
            kept = list(itertools.compress(kept, keep))
        return SinkRecords(columns), kept

    def _transformed(
        self, rows: RecordChunk, columns: tuple[list[Any], ...], failed: dict[int, FailedRecord]
    ) -> tuple[SinkRecords, list[int]]:
        """The records after the transforms (those converted), with their rows."""
        from spark_eos_connect.transforms import ConnectRecord, Header

        keys, values, key_schemas, value_schemas, headers = columns
        records: list[SinkRecord] = []
        kept: list[int] = []
        for row in range(len(rows)):
            if row in failed:
                continue
            record = ConnectRecord(
                rows.topics[row],
                rows.partitions[row],
                key_schemas[row],
                keys[row],
                value_schemas[row],
                values[row],
                rows.timestamps[row],
                tuple(Header(name, data.value, data.schema) for name, data in headers[row]),
                kafka_offset=rows.offsets[row],
            )
            transformed = self._transform(rows, row, record)
            if transformed is not None:
                records.append(transformed)
                kept.append(row)
        return SinkRecords.of(records), kept

    def _transform(self, rows: RecordChunk, row: int, record: Any) -> SinkRecord | None:
        """The record after the chain (None: filtered, or a tolerated failure), as Connect's
        WorkerSinkTask runs it after the converters; the topic-only head is decided once per
        topic. The offset stays the consumed record's, whatever the topic becomes."""
        from spark_eos_connect.transforms import TransformationError

        topic_read = rows.topics[row]
        try:
            if self.head:
                if topic_read not in self.routes:
                    self.routes[topic_read] = self.head.outcome(topic_read)
                topic = self.routes[topic_read]
                if topic is None:
                    self.filtered += 1
                    return None
                if topic != record.topic:
                    record = record.new_record(topic=topic)
            for stage in self.stages:
                record = stage.apply(record)
                if record is None:
                    self.filtered += 1
                    return None
        except TransformationError as error:
            where = "predicate of transformation" if error.in_predicate else "transformation"
            self.reporter.report(
                failed_record(
                    rows.raw(row),
                    Stage.TRANSFORMATION,
                    error.class_name,
                    error.cause,
                    f"{where} '{error.alias}' ({TRANSFORMS}.{error.alias}.type={error.class_name})",
                )
            )
            return None
        return SinkRecord(
            record.topic,
            rows.partitions[row] if record.kafka_partition is None else record.kafka_partition,
            rows.offsets[row],
            record.key,
            record.value,
            record.timestamp,
            tuple((header.key, header.value) for header in record.headers),
            record.key_schema,
            record.value_schema,
        )
