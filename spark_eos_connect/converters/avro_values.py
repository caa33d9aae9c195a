"""Connect values as the Avro datums fastavro writes and reads, and defaults as Avro JSON.

Logical values travel raw (the wire schema has no `logicalType`) and are converted here with
Connect's own logical types. A Union struct's value is its first non-null field, written as
fastavro's `(branch name, datum)` tuple so the branch is the field's, as Confluent's AvroData
picks it; read back through the wrapper records `wire_schema(..., tag_unions=True)` puts around
union branches (the same bytes), whose names carry the field's position.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from spark_eos_connect.api.data import (
    Date,
    Decimal,
    Field,
    Schema,
    Struct,
    Time,
    Timestamp,
    Type,
)
from spark_eos_connect.converters.avro_json import Float32
from spark_eos_connect.converters.avro_names import branch_name, is_union, scrub_name
from spark_eos_connect.converters.avro_options import DEFAULT_OPTIONS, AvroDataOptions
from spark_eos_connect.errors import DataError

__all__ = [
    "BRANCH_PREFIX",
    "default_from_connect",
    "from_connect_value",
    "to_connect_default",
    "to_connect_value",
]

BRANCH_PREFIX = "eosconnect_union_f"
"""How the names of the records wrapping union branches in the reading wire schema start (no
namespace of their own: the branch's names resolve as they did unwrapped)."""

_TO_AVRO_LOGICAL: dict[str, Callable[[Schema, Any], Any]] = {
    Decimal.LOGICAL_NAME: Decimal.from_logical,
    Date.LOGICAL_NAME: Date.from_logical,
    Time.LOGICAL_NAME: Time.from_logical,
    Timestamp.LOGICAL_NAME: Timestamp.from_logical,
}
_TO_CONNECT_LOGICAL: dict[str, Callable[[Schema, Any], Any]] = {
    Decimal.LOGICAL_NAME: Decimal.to_logical,
    Date.LOGICAL_NAME: Date.to_logical,
    Time.LOGICAL_NAME: Time.to_logical,
    Timestamp.LOGICAL_NAME: Timestamp.to_logical,
}


# --- Connect value -> Avro datum ----------------------------------------------------------------


def from_connect_value(
    schema: Schema, value: Any, options: AvroDataOptions = DEFAULT_OPTIONS
) -> Any:
    """The datum for `value` of `schema` (None for null; DataError when it does not match)."""
    if value is None:
        if not schema.optional and schema.default_value is None:
            raise DataError(f"Found null value for non-optional schema {schema!r}")
        value = schema.default_value
        if value is None:
            return None
    logical = _TO_AVRO_LOGICAL.get(schema.name or "")
    if logical is not None:
        return logical(schema, value)
    kind = schema.type
    if kind is Type.ARRAY:
        items = schema.value_schema
        assert items is not None
        if not isinstance(value, list | tuple):
            schema.validate(value)
        return [from_connect_value(items, v, options) for v in value]
    if kind is Type.MAP:
        return _map_datum(schema, value, options)
    if kind is Type.STRUCT:
        if not isinstance(value, Struct) or value.schema != schema:
            schema.validate(value)
        if is_union(schema):
            return _union_datum(schema, value, options)
        return {
            scrub_name(f.name, options.scrub_invalid_names): _field_datum(value, f, options)
            for f in schema.fields
        }
    schema.validate(value)
    if kind is Type.BYTES:
        return bytes(value)
    if kind in (Type.FLOAT32, Type.FLOAT64):
        return float(value)
    return value


def _field_value(struct: Struct, field: Field, options: AvroDataOptions) -> Any:
    """The field's value, its default for null (unless ignore.default.for.nullables and the
    field is optional)."""
    value = struct.get_without_default(field.name)
    if value is None and not (options.ignore_default_for_nullables and field.schema.optional):
        return field.schema.default_value
    return value


def _field_datum(struct: Struct, field: Field, options: AvroDataOptions) -> Any:
    value = _field_value(struct, field, options)
    if value is None and field.schema.optional:
        return None
    return from_connect_value(field.schema, value, options)


def _union_datum(schema: Schema, value: Struct, options: AvroDataOptions) -> Any:
    for f in schema.fields:
        member = _field_value(value, f, options)
        if member is None:
            continue
        datum = from_connect_value(f.schema, member, options)
        branch = branch_name(f.schema, options)
        return datum if branch is None else (branch, datum)
    if not schema.optional:
        raise DataError(f"Found null value for non-optional schema {schema!r}")
    return None


def _map_datum(schema: Schema, value: Any, options: AvroDataOptions) -> Any:
    key_schema, value_schema = schema.key_schema, schema.value_schema
    assert key_schema is not None and value_schema is not None
    if not isinstance(value, Mapping):
        schema.validate(value)
    if key_schema.type is Type.STRING and (
        not key_schema.optional or options.allow_optional_map_keys
    ):
        return {k: from_connect_value(value_schema, v, options) for k, v in value.items()}
    return [
        {
            "key": from_connect_value(key_schema, k, options),
            "value": from_connect_value(value_schema, v, options),
        }
        for k, v in value.items()
    ]


# --- Avro datum -> Connect value ----------------------------------------------------------------


def to_connect_value(schema: Schema, datum: Any, scrub: bool = False) -> Any:
    """The Connect value of a datum fastavro read with the tagging `wire_schema` of `schema`'s
    Avro schema (its logical values raw)."""
    if datum is None:
        return None
    logical = _TO_CONNECT_LOGICAL.get(schema.name or "")
    if logical is not None:
        return logical(schema, datum)
    kind = schema.type
    if kind is Type.STRUCT:
        if is_union(schema):
            return _union_value(schema, datum, scrub)
        result = Struct(schema)
        for f in schema.fields:
            result.put(f.name, to_connect_value(f.schema, datum.get(scrub_name(f.name, scrub))))
        return result
    if kind is Type.ARRAY:
        items = schema.value_schema
        assert items is not None
        return [to_connect_value(items, v, scrub) for v in datum]
    if kind is Type.MAP:
        keys, values = schema.key_schema, schema.value_schema
        assert keys is not None and values is not None
        if isinstance(datum, dict):
            return {k: to_connect_value(values, v, scrub) for k, v in datum.items()}
        return {
            to_connect_value(keys, e["key"], scrub): to_connect_value(values, e["value"], scrub)
            for e in datum
        }
    if kind is Type.FLOAT32 or kind is Type.FLOAT64:
        return float(datum)
    return datum


def _union_value(schema: Schema, datum: Any, scrub: bool) -> Struct:
    wrapper = str(datum[0]).rpartition(".")[2] if isinstance(datum, tuple) else ""
    if not wrapper.startswith(BRANCH_PREFIX):
        raise DataError(f"Avro union value {datum!r} was not read with its branch")
    position = int(wrapper[len(BRANCH_PREFIX) :].partition("_")[0])
    field = schema.fields[position]
    return Struct(schema).put(field.name, to_connect_value(field.schema, datum[1]["v"], scrub))


# --- defaults ---------------------------------------------------------------------------------


def default_from_connect(schema: Schema, value: Any, options: AvroDataOptions) -> Any:
    """A Connect default as Avro JSON, as Confluent's AvroData writes it (bytes as ISO-8859-1
    text; a non-string-keyed map as `[key, value]` pairs; a Union struct as its first field)."""
    if value is None:
        return None
    logical = _TO_AVRO_LOGICAL.get(schema.name or "")
    if logical is not None:
        value = logical(schema, value)
    kind = schema.type
    if kind in (Type.INT8, Type.INT16, Type.INT32, Type.INT64):
        return int(value)
    if kind is Type.FLOAT32:
        return Float32(value)
    if kind is Type.FLOAT64:
        return float(value)
    if kind is Type.BYTES:
        return bytes(value).decode("latin-1")
    if kind is Type.ARRAY:
        assert schema.value_schema is not None
        return [default_from_connect(schema.value_schema, v, options) for v in value]
    if kind is Type.MAP:
        return _map_default(schema, value, options)
    if kind is Type.STRUCT:
        fields = [(f, value.get(f.name)) for f in schema.fields]
        if is_union(schema):
            return (
                default_from_connect(fields[0][0].schema, fields[0][1], options) if fields else None
            )
        return {
            scrub_name(f.name, options.scrub_invalid_names): default_from_connect(
                f.schema, v, options
            )
            for f, v in fields
        }
    return value


def _struct_default(schema: Schema, value: Struct, options: AvroDataOptions) -> Any:
    fields = [(f, value.get(f.name)) for f in schema.fields]
    if is_union(schema):
        if not fields:
            return None
        return default_from_connect(fields[0][0].schema, fields[0][1], options)
    scrub = options.scrub_invalid_names
    return {
        scrub_name(f.name, scrub): default_from_connect(f.schema, v, options) for f, v in fields
    }


def _map_default(schema: Schema, value: Mapping[Any, Any], options: AvroDataOptions) -> Any:
    keys, values = schema.key_schema, schema.value_schema
    assert keys is not None and values is not None
    if keys.type is Type.STRING and (not keys.optional or options.allow_optional_map_keys):
        return {k: default_from_connect(values, v, options) for k, v in value.items()}
    return [
        [default_from_connect(keys, k, options), default_from_connect(values, v, options)]
        for k, v in value.items()
    ]


def to_connect_default(schema: Schema, node: Any) -> Any:
    """An Avro JSON default as the Connect value of `schema`."""
    return to_connect_value(schema, _datum_of_json(schema, node))


def _datum_of_json(schema: Schema, node: Any) -> Any:
    if node is None:
        return None
    if schema.type is Type.BYTES and isinstance(node, str):
        return node.encode("latin-1")
    if schema.type is Type.ARRAY and isinstance(node, list):
        assert schema.value_schema is not None
        return [_datum_of_json(schema.value_schema, v) for v in node]
    if schema.type is Type.MAP:
        assert schema.key_schema is not None and schema.value_schema is not None
        if isinstance(node, dict):
            return {k: _datum_of_json(schema.value_schema, v) for k, v in node.items()}
        return [_entry_of_json(schema.key_schema, schema.value_schema, e) for e in node]
    if schema.type is Type.STRUCT and isinstance(node, dict):
        return {
            f.name: _datum_of_json(f.schema, node.get(f.name, f.schema.default_value))
            for f in schema.fields
        }
    if schema.type in (Type.FLOAT32, Type.FLOAT64) and isinstance(node, int | float):
        return float(node)
    return node


def _entry_of_json(key: Schema, value: Schema, entry: Any) -> dict[str, Any]:
    if isinstance(entry, list) and len(entry) == 2:
        return {"key": _datum_of_json(key, entry[0]), "value": _datum_of_json(value, entry[1])}
    return {
        "key": _datum_of_json(key, entry["key"]),
        "value": _datum_of_json(value, entry["value"]),
    }
