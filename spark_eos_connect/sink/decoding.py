"""Decoding a sink task's rows into record keys, values and headers (Connect's converters).

`RecordConverters` are the task's key, value and header converters. A key or value column is
converted a topic run at a time (`Converter.to_connect_column`), record by record only to find
the records of a run that failed (`convert_column`); each failing record is kept as a
`FailedRecord` for `errors.tolerance`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from spark_eos_connect.api.config import props_with_prefix
from spark_eos_connect.api.data import Schema, SchemaAndValue
from spark_eos_connect.converters import (
    ConnectColumn,
    Converter,
    HeaderConverter,
    make_converter,
    make_header_converter,
)
from spark_eos_connect.runtime.errors_dlq import FailedRecord, Stage, qualified_name
from spark_eos_connect.sink.options import CONVERTER_OPTIONS
from spark_eos_connect.sink.rows import RawRecord, RecordChunk


@dataclass(frozen=True)
class RecordConverters:
    """The key, value and header converters of one sink task (`spark_eos_connect.converters`)."""

    key: Converter
    value: Converter
    header: HeaderConverter

    @classmethod
    def build(cls, names: Mapping[str, str], options: Mapping[str, Any]) -> RecordConverters:
        """Converters named by `names` (option to class name) configured from `options` (full
        option names); raises `ConfigError` naming the bad option."""
        key, value, header = (props_with_prefix(options, f"{name}.") for name in CONVERTER_OPTIONS)
        return cls(
            make_converter(names["key.converter"], key, is_key=True),
            make_converter(names["value.converter"], value, is_key=False),
            make_header_converter(names["header.converter"], header),
        )


def failed_record(
    raw: RawRecord, stage: Stage, cls: type | str, error: BaseException, context: str = ""
) -> FailedRecord:
    """What a record failed in, and why, for the error reporter."""
    return FailedRecord(
        raw.topic,
        raw.partition,
        raw.offset,
        raw.key,
        raw.value,
        raw.headers,
        raw.timestamp_ms,
        stage,
        cls if isinstance(cls, str) else qualified_name(cls),
        error,
        context,
    )


def convert_column(
    converter: Converter,
    stage: Stage,
    rows: RecordChunk,
    data: pa.Array,
    failed: dict[int, FailedRecord],
) -> ConnectColumn:
    """A key or value column converted a topic run at a time; when a run fails as a whole
    it is converted record by record and each failing record is kept in `failed` (the
    first stage a record fails in is the one reported, as Connect converts key, value,
    then headers)."""
    schemas: list[Schema | None] = []
    values: list[Any] = []
    for topic, start, stop in rows.topic_runs():
        part = data.slice(start, stop - start)
        try:
            run_schemas, run_values = converter.to_connect_column(topic, part)
        except Exception:
            run_schemas, run_values = _one_by_one(converter, stage, rows, start, part, failed)
        schemas += run_schemas
        values += run_values
    return schemas, values


def _one_by_one(
    converter: Converter,
    stage: Stage,
    rows: RecordChunk,
    start: int,
    part: pa.Array,
    failed: dict[int, FailedRecord],
) -> ConnectColumn:
    """The run `part` (rows from `start` on) converted record by record; a record that fails
    is kept in `failed` and gets a null key or value."""
    schemas: list[Schema | None] = []
    values: list[Any] = []
    for row, data in enumerate(part.to_pylist(), start):
        converted = SchemaAndValue.NULL
        if row not in failed:
            try:
                converted = converter.to_connect_data(rows.topics[row], data)
            except Exception as error:
                failed[row] = failed_record(rows.raw(row), stage, type(converter), error)
        schemas.append(converted.schema)
        values.append(converted.value)
    return schemas, values


def convert_headers(
    converter: HeaderConverter, rows: RecordChunk, failed: dict[int, FailedRecord]
) -> list[tuple[tuple[str, SchemaAndValue], ...]]:
    """Each row's headers through the header converter (rows without headers: `()`)."""
    converted: list[tuple[tuple[str, SchemaAndValue], ...]] = [()] * len(rows)
    if not any(rows.headers):
        return converted
    for row, headers in enumerate(rows.headers):
        if not headers or row in failed:
            continue
        topic = rows.topics[row]
        try:
            converted[row] = tuple(
                (name, converter.to_connect_header(topic, name, data)) for name, data in headers
            )
        except Exception as error:
            failed[row] = failed_record(
                rows.raw(row), Stage.HEADER_CONVERTER, type(converter), error
            )
    return converted


def header_values(headers: list[tuple[tuple[str, SchemaAndValue], ...]]) -> list[Any]:
    """`(name, value)` headers for `SinkRecord`s (no Python loop when no row has any)."""
    if not any(headers):
        return headers
    return [tuple((name, data.value) for name, data in row) for row in headers]
