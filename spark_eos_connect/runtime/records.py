"""The row shape of source records in Spark, as Arrow, and the conversions to and from it."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from spark_eos_connect.api.source import SourceRecord

SOURCE_ROW_DDL = (
    "topic string, partition int, key binary, value binary, "
    "headers array<struct<key:string,value:binary>>, timestamp timestamp, "
    "source_partition string, source_offset string"
)

HEADER_TYPE = pa.list_(pa.struct([("key", pa.string()), ("value", pa.binary())]))

SOURCE_ROW_SCHEMA = pa.schema(
    [
        ("topic", pa.string()),
        ("partition", pa.int32()),
        ("key", pa.binary()),
        ("value", pa.binary()),
        ("headers", HEADER_TYPE),
        ("timestamp", pa.timestamp("us", tz="UTC")),
        ("source_partition", pa.string()),
        ("source_offset", pa.string()),
    ]
)


def to_bytes(data: Any) -> bytes | None:
    """Kafka bytes for a key or value: bytes as is, str as UTF-8, other values as JSON."""
    if data is None or isinstance(data, bytes):
        return data
    if isinstance(data, str):
        return data.encode("utf-8")
    if isinstance(data, bytearray | memoryview):
        return bytes(data)
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def map_json(data: dict[str, Any] | None) -> str | None:
    """Compact JSON of a source partition or offset (None stays None)."""
    if data is None:
        return None
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False)


def records_to_arrow(records: Sequence[SourceRecord]) -> pa.RecordBatch:
    """One Arrow batch of source rows."""
    topics, partitions, keys, values, headers = [], [], [], [], []
    timestamps, source_partitions, source_offsets = [], [], []
    last_partition: dict[str, Any] | None = None
    last_partition_json: str | None = None
    for record in records:
        topics.append(record.topic)
        partitions.append(record.partition)
        keys.append(to_bytes(record.key))
        values.append(to_bytes(record.value))
        headers.append(
            [{"key": name, "value": to_bytes(value)} for name, value in record.headers]
            if record.headers
            else None
        )
        timestamps.append(None if record.timestamp is None else record.timestamp * 1000)
        if record.source_partition is not last_partition:
            last_partition = record.source_partition
            last_partition_json = map_json(last_partition)
        source_partitions.append(last_partition_json)
        source_offsets.append(map_json(record.source_offset))
    columns = [
        topics,
        partitions,
        keys,
        values,
        headers,
        timestamps,
        source_partitions,
        source_offsets,
    ]
    arrays = [
        pa.array(column, type=field.type)
        for column, field in zip(columns, SOURCE_ROW_SCHEMA, strict=True)
    ]
    return pa.RecordBatch.from_arrays(arrays, schema=SOURCE_ROW_SCHEMA)
