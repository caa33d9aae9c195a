"""JSON to Connect data, as Connect's JsonConverter reads it.

`parse_json` reads bytes the way JsonConverter's Jackson reader does for what matters here:
fractional numbers stay exact (`decimal.Decimal`) until a schema says what they are. `JsonReader`
turns a schema's JSON into a `Schema` and a parsed value into Connect data under a schema, or
without one: integers as int (INT64), fractions as float (FLOAT64), objects as dicts (MAP).

Where Connect quietly coerces a JSON value of the wrong kind (a string read as INT32 becomes 0,
a number read as STRING becomes null), this reader raises `DataError` naming the field; the
strings `"NaN"`, `"Infinity"`, `"-Infinity"` that JsonConverter writes for non-finite floats
read back as those floats (Connect reads them as 0.0). Integers keep their exact value where
Connect would wrap one beyond 64 bits.
"""

from __future__ import annotations

import base64
import binascii
import decimal
import json
import math
from typing import Any

from spark_eos_connect.api.data import (
    Date,
    Decimal,
    Schema,
    SchemaBuilder,
    Struct,
    Time,
    Timestamp,
    Type,
)
from spark_eos_connect.converters import _java
from spark_eos_connect.converters.json_write import JSON_TYPE_NAMES
from spark_eos_connect.errors import DataError

__all__ = ["MISSING", "JsonReader", "parse_json"]

MISSING: Any = object()
"""What `parse_json` returns for empty input (Jackson's missing node)."""

_TYPES_BY_JSON_NAME = {name: kind for kind, name in JSON_TYPE_NAMES.items()}
_INT_RANGES = {
    Type.INT8: 8,
    Type.INT16: 16,
    Type.INT32: 32,
    Type.INT64: 64,
}


def _reject_constant(name: str) -> Any:
    raise ValueError(f"non-standard JSON constant {name}")


def parse_json(data: bytes) -> Any:
    """Parse UTF-8 JSON; fractions as `decimal.Decimal`; `MISSING` for blank input."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise DataError(f"Converting byte[] to Kafka Connect data failed: {error}") from None
    if not text.strip():
        return MISSING
    try:
        return json.loads(text, parse_float=decimal.Decimal, parse_constant=_reject_constant)
    except ValueError as error:
        raise DataError(
            f"Converting byte[] to Kafka Connect data failed due to serialization error: {error}"
        ) from None


def _node_type(node: Any) -> str:
    """Jackson's node type name, for messages."""
    if node is None:
        return "NULL"
    if isinstance(node, bool):
        return "BOOLEAN"
    if isinstance(node, int | decimal.Decimal):
        return "NUMBER"
    if isinstance(node, str):
        return "STRING"
    if isinstance(node, list):
        return "ARRAY"
    if isinstance(node, dict):
        return "OBJECT"
    return "MISSING"


def _is_int(node: Any) -> bool:
    return isinstance(node, int) and not isinstance(node, bool)


def _is_number(node: Any) -> bool:
    return _is_int(node) or isinstance(node, decimal.Decimal)


_NON_FINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def _float(node: Any) -> float | None:
    """A JSON number as a double (no negative zero: the exact reading has none), or the strings
    JsonConverter writes for non-finite floats; None for anything else."""
    if _is_number(node):
        return float(node) + 0.0
    if isinstance(node, str):
        return _NON_FINITE.get(node)
    return None


def _where(path: str) -> str:
    if not path:
        return "value"
    return f"value{path}" if path.startswith("[") else f'field "{path}"'


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _decode_base64(text: str, path: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise DataError(f"Invalid bytes for {_where(path)}: not base64: {text[:40]!r}") from None


class JsonReader:
    """Reads schemas and values with one converter's `replace.null.with.default` setting."""

    def __init__(self, replace_null_with_default: bool) -> None:
        self.replace_null_with_default = replace_null_with_default

    # --- schemas -----------------------------------------------------------------------------

    def schema(self, node: Any) -> Schema | None:
        """The `Schema` a schema JSON object describes (None for JSON null)."""
        if node is None or node is MISSING:
            return None
        if not isinstance(node, dict):
            raise DataError(f"Schema must be a JSON object, found {_node_type(node)}")
        type_name = node.get("type")
        if not isinstance(type_name, str):
            raise DataError("Schema must contain 'type' field")
        kind = _TYPES_BY_JSON_NAME.get(type_name)
        if kind is None:
            raise DataError(f"Unknown schema type: {type_name}")
        builder = self._builder(kind, node)
        if node.get("optional") is True:
            builder.optional()
        else:
            builder.required()
        name = node.get("name")
        if isinstance(name, str):
            builder.name(name)
        version = node.get("version")
        if isinstance(version, int) and not isinstance(version, bool):
            builder.version(version)
        doc = node.get("doc")
        if isinstance(doc, str):
            builder.doc(doc)
        parameters = node.get("parameters")
        if isinstance(parameters, dict):
            for key, value in parameters.items():
                if not isinstance(value, str):
                    raise DataError("Schema parameters must have string values.")
                builder.parameter(key, value)
        if "default" in node:
            default = self.value(builder.build(), node["default"], "default")
            builder.default_value(default)
        return builder.build()

    def _builder(self, kind: Type, node: dict[str, Any]) -> SchemaBuilder:
        if kind is Type.ARRAY:
            items = self.schema(node.get("items"))
            if items is None:
                raise DataError("Array schema did not specify the element type")
            return SchemaBuilder.array(items)
        if kind is Type.MAP:
            if "keys" not in node:
                raise DataError("Map schema did not specify the key type")
            if "values" not in node:
                raise DataError("Map schema did not specify the value type")
            keys, values = self.schema(node["keys"]), self.schema(node["values"])
            if keys is None or values is None:
                raise DataError("Map schema needs non-null key and value types")
            return SchemaBuilder.map(keys, values)
        if kind is Type.STRUCT:
            fields = node.get("fields")
            if not isinstance(fields, list):
                raise DataError('Struct schema\'s "fields" argument is not an array.')
            builder = SchemaBuilder.struct()
            for field in fields:
                field_name = field.get("field") if isinstance(field, dict) else None
                if not isinstance(field_name, str):
                    raise DataError("Struct schema's field name not specified properly")
                field_schema = self.schema(field)
                assert field_schema is not None
                builder.field(field_name, field_schema)
            return builder
        return SchemaBuilder.of(kind)

    # --- values ------------------------------------------------------------------------------

    def value(self, schema: Schema | None, node: Any, path: str = "") -> Any:
        """Connect data for the parsed JSON `node` under `schema` (inferred when None)."""
        if schema is None:
            return self._schemaless(node)
        if node is None or node is MISSING:
            if schema.default_value is not None and self.replace_null_with_default:
                return schema.default_value
            if schema.optional:
                return None
            raise DataError(f"Invalid null value for required {schema.type.name} {_where(path)}")
        if schema.name in _LOGICAL_READERS:
            return _LOGICAL_READERS[schema.name](schema, node, path)
        kind = schema.type
        if kind is Type.BOOLEAN:
            if not isinstance(node, bool):
                raise self._mismatch(schema, node, path)
            return node
        bits = _INT_RANGES.get(kind)
        if bits is not None:
            if not _is_int(node) or not -(2 ** (bits - 1)) <= node < 2 ** (bits - 1):
                raise self._mismatch(schema, node, path)
            return node
        if kind in (Type.FLOAT32, Type.FLOAT64):
            number = _float(node)
            if number is None:
                raise self._mismatch(schema, node, path)
            return _java.float32(number) if kind is Type.FLOAT32 else number
        if kind is Type.STRING:
            if not isinstance(node, str):
                raise self._mismatch(schema, node, path)
            return node
        if kind is Type.BYTES:
            if not isinstance(node, str):
                raise self._mismatch(schema, node, path)
            return _decode_base64(node, path)
        if kind is Type.ARRAY:
            if not isinstance(node, list):
                raise self._mismatch(schema, node, path)
            return [
                self.value(schema.value_schema, item, f"{path}[{i}]") for i, item in enumerate(node)
            ]
        if kind is Type.MAP:
            return self._map(schema, node, path)
        return self._struct(schema, node, path)

    @staticmethod
    def _mismatch(schema: Schema, node: Any, path: str) -> DataError:
        shown = repr(node)
        if len(shown) > 60:
            shown = shown[:57] + "..."
        return DataError(
            f"Invalid JSON for {_where(path)}: expected {schema.type.name}, "
            f"found {_node_type(node)} {shown}"
        )

    def _schemaless(self, node: Any) -> Any:
        if node is MISSING:
            return None
        if isinstance(node, decimal.Decimal):
            return float(node) + 0.0
        if isinstance(node, list):
            return [self._schemaless(item) for item in node]
        if isinstance(node, dict):
            return {key: self._schemaless(item) for key, item in node.items()}
        return node

    def _map(self, schema: Schema, node: Any, path: str) -> dict[Any, Any]:
        key_schema, value_schema = schema.key_schema, schema.value_schema
        assert key_schema is not None
        if key_schema.type is Type.STRING:
            if not isinstance(node, dict):
                raise DataError(
                    f"Maps with string fields should be encoded as JSON objects, but found "
                    f"{_node_type(node)} for {_where(path)}"
                )
            return {k: self.value(value_schema, v, f"{path}[{k!r}]") for k, v in node.items()}
        if not isinstance(node, list):
            raise DataError(
                f"Maps with non-string fields should be encoded as JSON array of tuples, but "
                f"found {_node_type(node)} for {_where(path)}"
            )
        result: dict[Any, Any] = {}
        for position, entry in enumerate(node):
            if not isinstance(entry, list) or len(entry) != 2:
                raise DataError(
                    f"Found invalid map entry {position} for {_where(path)}, expected an array "
                    f"of length 2: {entry!r}"
                )
            key = self.value(key_schema, entry[0], f"{path}[key {position}]")
            if isinstance(key, list):
                key = tuple(key)
            try:
                hash(key)
            except TypeError:
                raise DataError(
                    f"Map key {position} of {_where(path)} ({type(key).__name__}) cannot be a "
                    "Python dict key"
                ) from None
            result[key] = self.value(value_schema, entry[1], f"{path}[{key!r}]")
        return result

    def _struct(self, schema: Schema, node: Any, path: str) -> Struct:
        if not isinstance(node, dict):
            raise DataError(
                f"Structs should be encoded as JSON objects, but found {_node_type(node)} for "
                f"{_where(path)}"
            )
        result = Struct(schema)
        for field in schema.fields:
            child = _join(path, field.name)
            value = self.value(field.schema, node.get(field.name), child)
            try:
                result.put(field.name, value)
            except DataError as error:
                raise DataError(f"{error} (at {_where(child)})") from None
        return result


def _read_decimal(schema: Schema, node: Any, path: str) -> decimal.Decimal:
    if _is_number(node):
        return decimal.Decimal(node)
    if isinstance(node, str):
        try:
            return Decimal.to_logical(schema, _decode_base64(node, path))
        except DataError as error:
            raise DataError(f"Invalid bytes for Decimal {_where(path)}: {error}") from None
    raise DataError(
        f"Invalid type for Decimal {_where(path)}, underlying representation should be numeric "
        f"or bytes but was {_node_type(node)}"
    )


def _int32_node(node: Any, what: str, path: str) -> int:
    if not _is_int(node) or not -(2**31) <= node < 2**31:
        raise DataError(
            f"Invalid type for {what} {_where(path)}, underlying representation should be "
            f"integer but was {_node_type(node)} {node!r}"
        )
    return int(node)


def _read_timestamp(schema: Schema, node: Any, path: str) -> Any:
    if not _is_int(node):
        raise DataError(
            f"Invalid type for Timestamp {_where(path)}, underlying representation should be "
            f"integral but was {_node_type(node)}"
        )
    return Timestamp.to_logical(schema, node)


_LOGICAL_READERS = {
    Decimal.LOGICAL_NAME: _read_decimal,
    Date.LOGICAL_NAME: lambda s, n, p: Date.to_logical(s, _int32_node(n, "Date", p)),
    Time.LOGICAL_NAME: lambda s, n, p: Time.to_logical(s, _int32_node(n, "Time", p)),
    Timestamp.LOGICAL_NAME: _read_timestamp,
}
