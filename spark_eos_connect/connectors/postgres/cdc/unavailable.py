"""What Debezium puts in an event for a TOASTed value an update did not touch (pgoutput sends a
marker, not the value): `unavailable.value.placeholder` shaped for the column's schema. A
string column gets the text, a bytes column its bytes, an `hstore` a one-entry map of it (as
JSON text in `hstore.handling.mode=json`), an array one element made of it (integer arrays
its bytes, one element each; `uuid[]` the name-based UUID of its bytes); any other type its
zero when required, null when optional. Pure."""

from __future__ import annotations

import decimal
import hashlib
import json
import uuid
from typing import Any, Final

from spark_eos_connect.api.data import Decimal, Schema, Type
from spark_eos_connect.connectors.postgres.cdc.schemas import ColumnInfo
from spark_eos_connect.connectors.postgres.cdc.value_options import ValueSettings

__all__ = ["missing_value", "unavailable_value"]

_ZEROS: Final[dict[Type, Any]] = {
    Type.INT8: 0,
    Type.INT16: 0,
    Type.INT32: 0,
    Type.INT64: 0,
    Type.FLOAT32: 0.0,
    Type.FLOAT64: 0.0,
    Type.BOOLEAN: False,
    Type.STRING: "",
    Type.BYTES: b"",
}


def missing_value(schema: Schema) -> Any:
    """A value for a required column the database did not send (Debezium fills these too)."""
    if schema.optional:
        return None
    if schema.name == Decimal.LOGICAL_NAME:
        return decimal.Decimal(0)
    return _ZEROS.get(schema.type)


def _type_name(column: ColumnInfo) -> str:
    return "" if column.pg_type is None else column.pg_type.resolved().name


def _name_uuid(data: bytes) -> str:
    """Java's `UUID.nameUUIDFromBytes`: an MD5 name-based (version 3) UUID."""
    return str(uuid.UUID(bytes=hashlib.md5(data).digest(), version=3))


def unavailable_value(column: ColumnInfo, schema: Schema, settings: ValueSettings) -> Any:
    """Debezium's stand-in for `column`'s unchanged TOASTed value."""
    text = settings.unavailable_value_placeholder
    raw = settings.placeholder_bytes
    name = _type_name(column)
    if name == "hstore":
        entry = {text: text}
        return json.dumps(entry, separators=(",", ":")) if schema.type is Type.STRING else entry
    if schema.type is Type.STRING:
        return text
    if schema.type is Type.BYTES and schema.name != Decimal.LOGICAL_NAME:
        return raw
    if schema.type is Type.ARRAY and schema.value_schema is not None:
        element = schema.value_schema
        if name == "_uuid":
            return [_name_uuid(raw)]
        if element.type is Type.STRING:
            return [text]
        if element.type is Type.BYTES and element.name != Decimal.LOGICAL_NAME:
            return [raw]
        if element.type in (Type.INT32, Type.INT64):
            return list(raw)
    return missing_value(schema)
