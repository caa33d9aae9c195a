"""The row shape of source records in Spark, as Arrow, and the conversions to and from it."""

from __future__ import annotations

import json
import re
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


_COMPACT = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)


def map_json(data: dict[str, Any] | None) -> str | None:
    """Compact JSON of a source partition or offset (None stays None)."""
    return None if data is None else _COMPACT.encode(data)


_PLAIN_KEY = re.compile(r"[A-Za-z0-9_.\-]+")
_plain_keys: dict[str, bool] = {}


def offset_json(offset: dict[str, Any]) -> str:
    """`map_json` for one offset, with a fast path for the usual shape: plain keys, int values."""
    parts = []
    for key, value in offset.items():
        plain = _plain_keys.get(key)
        if plain is None:
            plain = _plain_keys[key] = bool(_PLAIN_KEY.fullmatch(key))
        if not plain or value.__class__ is not int:
            return _COMPACT.encode(offset)
        parts.append(f'"{key}":{value}')
    return "{" + ",".join(parts) + "}"


def _kafka_bytes(items: list[Any]) -> list[bytes | None]:
    return [v if v is None or v.__class__ is bytes else to_bytes(v) for v in items]


def _partition_json(records: Sequence[SourceRecord]) -> list[str | None]:
    """Source partitions as JSON, encoding each distinct dict object once (tasks reuse them)."""
    encoded: dict[int, str | None] = {}
    result = []
    for record in records:
        partition = record.source_partition
        key = id(partition)
        if key not in encoded:
            encoded[key] = map_json(partition)
        result.append(encoded[key])
    return result


def records_to_arrow(records: Sequence[SourceRecord]) -> pa.RecordBatch:
    """One Arrow batch of source rows (column by column: this is the reader's hot loop)."""
    columns = [
        [r.topic for r in records],
        [r.partition for r in records],
        _kafka_bytes([r.key for r in records]),
        _kafka_bytes([r.value for r in records]),
        [
            [{"key": name, "value": to_bytes(value)} for name, value in r.headers]
            if r.headers
            else None
            for r in records
        ],
        [None if r.timestamp is None else r.timestamp * 1000 for r in records],
        _partition_json(records),
        [None if r.source_offset is None else offset_json(r.source_offset) for r in records],
    ]
    arrays = [
        pa.array(column, type=field.type)
        for column, field in zip(columns, SOURCE_ROW_SCHEMA, strict=True)
    ]
    return pa.RecordBatch.from_arrays(arrays, schema=SOURCE_ROW_SCHEMA)
