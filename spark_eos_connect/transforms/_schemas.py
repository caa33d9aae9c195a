"""Helpers the transformations share: value requirements, schema copies, the schema cache.

The requirement checks raise `DataError` with the meaning of Connect's `Requirements` messages
("Only Map objects supported in absence of schema for [field insertion], found: str").
"""

from __future__ import annotations

import datetime as dt
import decimal
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any

from spark_eos_connect.api.data import Schema, SchemaBuilder, Struct, Type
from spark_eos_connect.errors import DataError
from spark_eos_connect.transforms.record import ConnectRecord

__all__ = [
    "SchemaCache",
    "copy_schema_basics",
    "infer_type",
    "require_map",
    "require_map_or_null",
    "require_schema",
    "require_sink_record",
    "require_struct",
    "require_struct_or_null",
    "type_name",
]


def type_name(value: Any) -> str:
    """A value's type as messages show it ("null" for None)."""
    return "null" if value is None else type(value).__name__


def require_schema(schema: Schema | None, purpose: str) -> Schema:
    """`schema`, or DataError if there is none."""
    if schema is None:
        raise DataError(f"Schema required for [{purpose}]")
    return schema


def require_map(value: Any, purpose: str) -> Mapping[Any, Any]:
    """`value` if it is a mapping (schemaless data), else DataError."""
    if not isinstance(value, Mapping):
        raise DataError(
            f"Only Map objects supported in absence of schema for [{purpose}], "
            f"found: {type_name(value)}"
        )
    return value


def require_map_or_null(value: Any, purpose: str) -> Mapping[Any, Any] | None:
    """None stays None; anything else must be a mapping."""
    return None if value is None else require_map(value, purpose)


def require_struct(value: Any, purpose: str) -> Struct:
    """`value` if it is a Struct, else DataError."""
    if not isinstance(value, Struct):
        raise DataError(f"Only Struct objects supported for [{purpose}], found: {type_name(value)}")
    return value


def require_struct_or_null(value: Any, purpose: str) -> Struct | None:
    """None stays None; anything else must be a Struct."""
    return None if value is None else require_struct(value, purpose)


def require_sink_record(record: ConnectRecord, purpose: str) -> int:
    """The record's Kafka offset; DataError for a source record (it has none)."""
    if record.kafka_offset is None:
        raise DataError(f"Only SinkRecord supported for [{purpose}], found: SourceRecord")
    return record.kafka_offset


def copy_schema_basics(source: Schema, builder: SchemaBuilder) -> SchemaBuilder:
    """Copy name, version, doc and parameters of `source` onto `builder`."""
    if source.name is not None:
        builder.name(source.name)
    if source.version is not None:
        builder.version(source.version)
    if source.doc is not None:
        builder.doc(source.doc)
    if source.parameters:
        builder.parameters(source.parameters)
    return builder


def builder_like(source: Schema) -> SchemaBuilder:
    """A builder of the same type as `source` (arrays and maps keep their element schemas)."""
    if source.type is Type.ARRAY:
        assert source.value_schema is not None
        return SchemaBuilder.array(source.value_schema)
    if source.type is Type.MAP:
        assert source.key_schema is not None and source.value_schema is not None
        return SchemaBuilder.map(source.key_schema, source.value_schema)
    return SchemaBuilder(source.type)


def infer_type(value: Any) -> Type | None:
    """The schema type Connect infers from a schemaless value's class (None: unsupported).

    Python ints stand for Java's Long and floats for Double, as JsonConverter produces them.
    """
    if isinstance(value, bool):
        return Type.BOOLEAN
    if isinstance(value, int):
        return Type.INT64
    if isinstance(value, float):
        return Type.FLOAT64
    if isinstance(value, str):
        return Type.STRING
    if isinstance(value, bytes | bytearray | memoryview):
        return Type.BYTES
    if isinstance(value, list | tuple):
        return Type.ARRAY
    if isinstance(value, Mapping):
        return Type.MAP
    if isinstance(value, Struct):
        return Type.STRUCT
    return None


def is_java_date(value: Any) -> bool:
    """True for the values Connect holds as `java.util.Date` (Date, Time, Timestamp)."""
    return isinstance(value, dt.date | dt.time)


def is_big_decimal(value: Any) -> bool:
    """True for a Decimal logical value."""
    return isinstance(value, decimal.Decimal)


class SchemaCache:
    """Derived schemas by input schema, the 16 most recent (Connect's `LRUCache(16)`)."""

    __slots__ = ("_entries", "_size")

    def __init__(self, size: int = 16) -> None:
        self._size = size
        self._entries: OrderedDict[Schema, Schema] = OrderedDict()

    def get_or_build(self, schema: Schema, build: Callable[[Schema], Schema]) -> Schema:
        """The cached schema derived from `schema`, built with `build` on a miss."""
        found = self._entries.get(schema)
        if found is not None:
            self._entries.move_to_end(schema)
            return found
        built = build(schema)
        self._entries[schema] = built
        if len(self._entries) > self._size:
            self._entries.popitem(last=False)
        return built

    def clear(self) -> None:
        """Forget every entry."""
        self._entries.clear()
