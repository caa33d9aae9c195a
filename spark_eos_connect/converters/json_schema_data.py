"""Connect schemas and values to JSON Schema and JSON, as Confluent's JsonSchemaData maps them.

Schemas: integers are `{"type":"integer","connect.type":"int8|int16|int32|int64"}`, FLOAT32 and
FLOAT64 `number` with `connect.type`, BOOLEAN `boolean`, STRING `string`, BYTES a `string` with
`"connect.type":"bytes"` (base64 values); a STRUCT an `object` with `properties` (each with its
`connect.index`) and `"additionalProperties": false`; ARRAY `array`; a MAP with string keys an
`object` with `additionalProperties`, any other MAP an `array` of `{"key","value"}` objects, both
with `"connect.type":"map"`; an optional schema `{"oneOf":[{"type":"null"}, ...]}`. The name is
the `title`, the doc the `description`, the default `default`; version and parameters ride as
`connect.version` and `connect.parameters`. Logical values: Decimal a JSON number (its exact
digits), Date/Time/Timestamp their integers.
"""

from __future__ import annotations

import base64
import dataclasses
import decimal
import json
import re
from collections.abc import Mapping
from typing import Any

from spark_eos_connect.api.data import Date, Decimal, Field, Schema, Struct, Time, Timestamp, Type
from spark_eos_connect.errors import DataError

__all__ = [
    "dumps_value",
    "from_connect_schema",
    "from_connect_value",
    "loads_value",
    "to_connect_schema",
    "to_connect_value",
]

CONNECT_TYPE = "connect.type"
CONNECT_INDEX = "connect.index"
CONNECT_VERSION = "connect.version"
CONNECT_PARAMETERS = "connect.parameters"

_JSON_TYPE = {
    Type.INT8: "integer",
    Type.INT16: "integer",
    Type.INT32: "integer",
    Type.INT64: "integer",
    Type.FLOAT32: "number",
    Type.FLOAT64: "number",
    Type.BOOLEAN: "boolean",
    Type.STRING: "string",
    Type.BYTES: "string",
}
_LOGICAL: dict[str, Any] = {
    Decimal.LOGICAL_NAME: Decimal,
    Date.LOGICAL_NAME: Date,
    Time.LOGICAL_NAME: Time,
    Timestamp.LOGICAL_NAME: Timestamp,
}

# --- schemas ------------------------------------------------------------------------------------


def _base(schema: Schema) -> dict[str, Any]:
    kind = schema.type
    out: dict[str, Any]
    if schema.name == Decimal.LOGICAL_NAME:
        out = {"type": "number", CONNECT_TYPE: "bytes"}
    elif kind in _JSON_TYPE:
        out = {"type": _JSON_TYPE[kind]}
        if kind not in (Type.BOOLEAN, Type.STRING):
            out[CONNECT_TYPE] = kind.value
    elif kind is Type.ARRAY:
        assert schema.value_schema is not None
        out = {"type": "array", "items": from_connect_schema(schema.value_schema)}
    elif kind is Type.MAP:
        key, value = schema.key_schema, schema.value_schema
        assert key is not None and value is not None
        if key == Schema.STRING:
            out = {"type": "object", "additionalProperties": from_connect_schema(value)}
        else:
            entry = {
                "type": "object",
                "properties": {
                    "key": {**from_connect_schema(key), CONNECT_INDEX: 0},
                    "value": {**from_connect_schema(value), CONNECT_INDEX: 1},
                },
                "additionalProperties": False,
            }
            out = {"type": "array", "items": entry}
        out[CONNECT_TYPE] = "map"
    else:
        properties = {
            f.name: {**from_connect_schema(f.schema), CONNECT_INDEX: f.index} for f in schema.fields
        }
        out = {"type": "object", "properties": properties, "additionalProperties": False}
    if schema.name is not None:
        out["title"] = schema.name
    if schema.doc is not None:
        out["description"] = schema.doc
    if schema.version is not None:
        out[CONNECT_VERSION] = schema.version
    if schema.parameters:
        out[CONNECT_PARAMETERS] = dict(schema.parameters)
    if schema.default_value is not None:
        out["default"] = json.loads(dumps_value(schema, schema.default_value))
    return out


def from_connect_schema(schema: Schema) -> dict[str, Any]:
    """The JSON Schema (parsed) of `schema`."""
    base = _base(schema)
    if not schema.optional:
        return base
    return {"oneOf": [{"type": "null"}, base]}


def to_connect_schema(node: Any) -> Schema:
    """The Connect schema of a JSON Schema (the subset `from_connect_schema` writes, plus plain
    objects, arrays and scalars)."""
    if not isinstance(node, dict):
        raise DataError(f"Unsupported JSON Schema: {node!r}")
    for key in ("oneOf", "anyOf"):
        branches = node.get(key)
        if branches is not None:
            others = [b for b in branches if b != {"type": "null"}]
            if len(others) == 1 and len(branches) == 2:
                return dataclasses.replace(to_connect_schema(others[0]), optional=True)
            raise DataError(f"JSON Schema {key} other than null and one type is not supported")
    kind = node.get("type")
    connect_type = node.get(CONNECT_TYPE)
    if isinstance(kind, list):
        others = [k for k in kind if k != "null"]
        if len(others) == 1 and len(kind) == 2:
            return dataclasses.replace(
                to_connect_schema({**node, "type": others[0]}), optional=True
            )
        raise DataError(f"JSON Schema type list {kind!r} is not supported")
    built: Schema
    if kind == "integer":
        built = Schema(Type(connect_type) if connect_type else Type.INT64)
    elif kind == "number":
        built = Schema(Type.BYTES if connect_type == "bytes" else Type(connect_type or "float64"))
    elif kind == "boolean":
        built = Schema(Type.BOOLEAN)
    elif kind == "string":
        built = Schema(Type.BYTES if connect_type == "bytes" else Type.STRING)
    elif kind == "array" and connect_type == "map":
        props = node["items"]["properties"]
        built = Schema(
            Type.MAP,
            key_schema=to_connect_schema(_unindexed(props["key"])),
            value_schema=to_connect_schema(_unindexed(props["value"])),
        )
    elif kind == "array":
        built = Schema(Type.ARRAY, value_schema=to_connect_schema(node.get("items", {})))
    elif kind == "object" and "properties" not in node:
        values = node.get("additionalProperties")
        if not isinstance(values, dict):
            raise DataError("A JSON Schema object needs properties or additionalProperties")
        built = Schema(Type.MAP, key_schema=Schema.STRING, value_schema=to_connect_schema(values))
    elif kind == "object":
        props = node["properties"]
        names = sorted(props, key=lambda n: props[n].get(CONNECT_INDEX, len(props)))
        fields = [
            Field(name, i, to_connect_schema(_unindexed(props[name])))
            for i, name in enumerate(names)
        ]
        built = Schema(Type.STRUCT, fields=tuple(fields))
    else:
        raise DataError(f"Unsupported JSON Schema type {kind!r}")
    changes: dict[str, Any] = {}
    if "title" in node:
        changes["name"] = node["title"]
    if "description" in node:
        changes["doc"] = node["description"]
    if CONNECT_VERSION in node:
        changes["version"] = int(node[CONNECT_VERSION])
    if CONNECT_PARAMETERS in node:
        changes["parameters"] = {str(k): str(v) for k, v in node[CONNECT_PARAMETERS].items()}
    if changes:
        built = dataclasses.replace(built, **changes)
    if node.get("default") is not None:
        built = dataclasses.replace(
            built, default_value=to_connect_value(built, _exact(node["default"]))
        )
    return built


def _unindexed(node: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in node.items() if k != CONNECT_INDEX}


def _exact(node: Any) -> Any:
    return json.loads(json.dumps(node), parse_float=decimal.Decimal)


# --- values -------------------------------------------------------------------------------------

_DECIMAL_MARK = "\u0001decimal:"
_DECIMAL_TOKEN = re.compile(r'"\\u0001decimal:([^"]*)"')


def from_connect_value(schema: Schema, value: Any) -> Any:
    """The JSON-ready value of `value` (decimals as marked strings `dumps_value` unmarks)."""
    if value is None:
        if not schema.optional and schema.default_value is None:
            raise DataError(f"Found null value for non-optional schema {schema!r}")
        return (
            None
            if schema.default_value is None
            else from_connect_value(schema, schema.default_value)
        )
    if schema.name == Decimal.LOGICAL_NAME:
        Decimal.from_logical(schema, value)  # checks the scale
        return _DECIMAL_MARK + str(value)
    logical = _LOGICAL.get(schema.name or "")
    if logical is not None:
        return logical.from_logical(schema, value)
    kind = schema.type
    if kind is Type.ARRAY:
        assert schema.value_schema is not None
        if not isinstance(value, list | tuple):
            schema.validate(value)
        return [from_connect_value(schema.value_schema, v) for v in value]
    if kind is Type.MAP:
        key, item = schema.key_schema, schema.value_schema
        assert key is not None and item is not None
        if not isinstance(value, Mapping):
            schema.validate(value)
        if key == Schema.STRING:
            return {k: from_connect_value(item, v) for k, v in value.items()}
        return [
            {"key": from_connect_value(key, k), "value": from_connect_value(item, v)}
            for k, v in value.items()
        ]
    if kind is Type.STRUCT:
        if not isinstance(value, Struct) or value.schema != schema:
            schema.validate(value)
        return {
            f.name: from_connect_value(f.schema, value.get_without_default(f.name))
            for f in schema.fields
        }
    schema.validate(value)
    if kind is Type.BYTES:
        return base64.b64encode(bytes(value)).decode("ascii")
    return value


def dumps_value(schema: Schema, value: Any) -> str:
    """The JSON text of `value` (decimals written with their exact digits)."""
    text = json.dumps(from_connect_value(schema, value), separators=(",", ":"))
    if "\\u0001decimal:" in text:
        text = _DECIMAL_TOKEN.sub(lambda m: m.group(1), text)
    return text


def loads_value(schema: Schema, data: bytes | memoryview) -> Any:
    """The Connect value of JSON bytes written for `schema`."""
    try:
        node = json.loads(bytes(data), parse_float=decimal.Decimal)
    except ValueError as error:
        raise DataError(f"Invalid JSON: {error}") from None
    return to_connect_value(schema, node)


def to_connect_value(schema: Schema, node: Any) -> Any:
    """The Connect value of a parsed JSON node (numbers with fractions as `decimal.Decimal`)."""
    if node is None:
        return None
    name = schema.name
    if name == Decimal.LOGICAL_NAME:
        scale = Decimal.scale(schema)
        return decimal.Decimal(node).quantize(decimal.Decimal(1).scaleb(-scale))
    logical = _LOGICAL.get(name or "")
    if logical is not None:
        return logical.to_logical(schema, int(node))
    kind = schema.type
    if kind is Type.STRUCT:
        result = Struct(schema)
        for f in schema.fields:
            result.put(f.name, to_connect_value(f.schema, node.get(f.name)))
        return result
    if kind is Type.ARRAY:
        assert schema.value_schema is not None
        return [to_connect_value(schema.value_schema, v) for v in node]
    if kind is Type.MAP:
        key, item = schema.key_schema, schema.value_schema
        assert key is not None and item is not None
        if isinstance(node, dict):
            return {k: to_connect_value(item, v) for k, v in node.items()}
        return {to_connect_value(key, e["key"]): to_connect_value(item, e["value"]) for e in node}
    if kind in (Type.FLOAT32, Type.FLOAT64):
        return float(node)
    if kind is Type.BYTES:
        return base64.b64decode(node)
    return node
