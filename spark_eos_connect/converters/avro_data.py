"""Connect schemas and values to Avro and back, as Confluent's `AvroData` maps them.

Schemas: INT8/INT16 are Avro `int` with `"connect.type"`; INT32 `int`, INT64 `long`, FLOAT32
`float`, FLOAT64 `double`, BOOLEAN, STRING, BYTES their namesakes; STRUCT a `record` (named by
the schema's name, else `io.confluent.connect.avro.ConnectDefault`); ARRAY `array`; a MAP with
(required) string keys a `map`, any other MAP an `array` of `io.confluent.connect.avro.MapEntry`
records with fields `key` and `value`; an optional schema a union with `"null"` (null first,
unless the schema has a default: the default's branch comes first, as Avro requires). Decimal,
Date, Time and Timestamp carry Avro's `decimal`, `date`, `time-millis` and `timestamp-millis`
logical types; a STRING with the `io.confluent.connect.avro.Enum` parameters is an Avro `enum`.
The schema's name, version, doc, parameters and default ride along as `connect.name`,
`connect.version`, `connect.doc`, `connect.parameters`, `connect.default` (records keep their
doc in Avro's `doc`; struct fields' defaults are Avro field defaults), so the round trip is exact.

Values: `from_connect_value` gives the datum fastavro writes with `wire_schema` (the Avro schema
without `logicalType`, so logical values travel as their raw ints and bytes, converted here
with Connect's own logical types); `to_connect_value` reads such a datum back.
"""

from __future__ import annotations

import copy
import dataclasses
import re
from collections.abc import Mapping
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
from spark_eos_connect.errors import DataError

__all__ = [
    "AVRO_NAMESPACE",
    "DEFAULT_RECORD_NAME",
    "ENUM_PARAMETER",
    "MAP_ENTRY_NAME",
    "from_connect_schema",
    "from_connect_value",
    "record_name",
    "to_connect_schema",
    "to_connect_value",
    "wire_schema",
]

AVRO_NAMESPACE = "io.confluent.connect.avro"
DEFAULT_RECORD_NAME = f"{AVRO_NAMESPACE}.ConnectDefault"
MAP_ENTRY_NAME = f"{AVRO_NAMESPACE}.MapEntry"
ENUM_PARAMETER = f"{AVRO_NAMESPACE}.Enum"
FIXED_SIZE_PARAMETER = "connect.fixed.size"
DECIMAL_PRECISION_PARAMETER = "connect.decimal.precision"
DEFAULT_DECIMAL_PRECISION = 64

CONNECT_NAME = "connect.name"
CONNECT_VERSION = "connect.version"
CONNECT_DOC = "connect.doc"
CONNECT_PARAMETERS = "connect.parameters"
CONNECT_DEFAULT = "connect.default"
CONNECT_TYPE = "connect.type"

_PRIMITIVE = {
    Type.INT32: "int",
    Type.INT64: "long",
    Type.FLOAT32: "float",
    Type.FLOAT64: "double",
    Type.BOOLEAN: "boolean",
    Type.STRING: "string",
    Type.BYTES: "bytes",
}
_FROM_AVRO = {
    "int": Type.INT32,
    "long": Type.INT64,
    "float": Type.FLOAT32,
    "double": Type.FLOAT64,
    "boolean": Type.BOOLEAN,
    "string": Type.STRING,
    "bytes": Type.BYTES,
}
_LOGICAL_AVRO = {
    Date.LOGICAL_NAME: "date",
    Time.LOGICAL_NAME: "time-millis",
    Timestamp.LOGICAL_NAME: "timestamp-millis",
}
_INVALID_NAME_CHARS = re.compile(r"[^A-Za-z0-9_]")

AvroSchema = Any
"""An Avro schema as parsed JSON: a type name, a union list or a dict."""


# --- Connect schema -> Avro schema --------------------------------------------------------------


def _valid_name(name: str) -> str:
    """`name` with every part a valid Avro name (invalid characters become `_`)."""
    parts = [_INVALID_NAME_CHARS.sub("_", part) or "_" for part in name.split(".")]
    return ".".join(p if not p[0].isdigit() else f"_{p}" for p in parts)


def _split(full_name: str) -> dict[str, str]:
    namespace, _, name = full_name.rpartition(".")
    return {"name": name, "namespace": namespace} if namespace else {"name": name}


class _ToAvro:
    """One Connect schema's conversion, with the named types defined so far (Avro defines a
    name once)."""

    def __init__(self) -> None:
        self.defined: dict[str, AvroSchema] = {}
        self.counters: dict[str, int] = {}

    def _unique(self, base: str) -> str:
        count = self.counters.get(base, 0) + 1
        self.counters[base] = count
        return base if count == 1 else f"{base}{count}"

    def _named(self, full_name: str, build: Any) -> AvroSchema:
        """The definition of `full_name` the first time, a reference to it afterwards."""
        if full_name in self.defined:
            return full_name
        self.defined[full_name] = None
        built = build()
        self.defined[full_name] = built
        return built

    def schema(self, schema: Schema) -> AvroSchema:
        base = self._base(schema)
        if not schema.optional:
            return base
        if schema.default_value is not None:
            return [base, "null"]
        return ["null", base]

    def _props(self, schema: Schema, out: dict[str, Any], record: bool = False) -> dict[str, Any]:
        if schema.version is not None:
            out[CONNECT_VERSION] = schema.version
        if schema.doc is not None and not record:
            out[CONNECT_DOC] = schema.doc
        if schema.parameters:
            out[CONNECT_PARAMETERS] = dict(schema.parameters)
        if schema.default_value is not None and not record:
            out[CONNECT_DEFAULT] = avro_default(schema, schema.default_value)
        if schema.name is not None:
            out[CONNECT_NAME] = schema.name
        return out

    def _with_props(self, schema: Schema, avro_type: str, **extra: Any) -> AvroSchema:
        out = self._props(schema, {"type": avro_type, **extra})
        return out if len(out) > 1 else avro_type

    def _base(self, schema: Schema) -> AvroSchema:
        kind = schema.type
        if kind in (Type.INT8, Type.INT16):
            return self._with_props(schema, "int", **{CONNECT_TYPE: kind.value})
        logical = _LOGICAL_AVRO.get(schema.name or "")
        if logical is not None:
            return self._with_props(schema, _PRIMITIVE[kind], logicalType=logical)
        if schema.name == Decimal.LOGICAL_NAME:
            params = schema.parameters or {}
            precision = int(params.get(DECIMAL_PRECISION_PARAMETER, DEFAULT_DECIMAL_PRECISION))
            return self._with_props(
                schema,
                "bytes",
                logicalType="decimal",
                precision=precision,
                scale=Decimal.scale(schema),
            )
        params = schema.parameters or {}
        if kind is Type.STRING and ENUM_PARAMETER in params:
            return self._enum(schema, params)
        if kind is Type.BYTES and FIXED_SIZE_PARAMETER in params:
            full = _valid_name(schema.name or DEFAULT_RECORD_NAME)
            size = int(params[FIXED_SIZE_PARAMETER])
            return self._named(
                full,
                lambda: self._props(schema, {"type": "fixed", **_split(full), "size": size}),
            )
        if kind in _PRIMITIVE:
            return self._with_props(schema, _PRIMITIVE[kind])
        if kind is Type.ARRAY:
            assert schema.value_schema is not None
            return self._props(schema, {"type": "array", "items": self.schema(schema.value_schema)})
        if kind is Type.MAP:
            return self._map(schema)
        return self._record(schema)

    def _enum(self, schema: Schema, params: Mapping[str, str]) -> AvroSchema:
        full = _valid_name(params[ENUM_PARAMETER])
        prefix = ENUM_PARAMETER + "."
        symbols = [v for k, v in params.items() if k.startswith(prefix)]
        return self._named(
            full, lambda: self._props(schema, {"type": "enum", **_split(full), "symbols": symbols})
        )

    def _map(self, schema: Schema) -> AvroSchema:
        key, value = schema.key_schema, schema.value_schema
        assert key is not None and value is not None
        if key.type is Type.STRING and not key.optional and key == Schema.STRING:
            return self._props(schema, {"type": "map", "values": self.schema(value)})
        full = self._unique(MAP_ENTRY_NAME)
        entry = {
            "type": "record",
            **_split(full),
            "fields": [
                {"name": "key", "type": self.schema(key)},
                {"name": "value", "type": self.schema(value)},
            ],
        }
        self.defined[full] = entry
        return self._props(schema, {"type": "array", "items": entry})

    def _record(self, schema: Schema) -> AvroSchema:
        full = _valid_name(schema.name) if schema.name else self._unique(DEFAULT_RECORD_NAME)

        def build() -> dict[str, Any]:
            out: dict[str, Any] = {"type": "record", **_split(full)}
            if schema.doc is not None:
                out["doc"] = schema.doc
            out["fields"] = [self._field(f) for f in schema.fields]
            return self._props(schema, out, record=True)

        return self._named(full, build)

    def _field(self, field: Field) -> dict[str, Any]:
        out: dict[str, Any] = {"name": field.name, "type": self.schema(field.schema)}
        fs = field.schema
        if fs.default_value is not None:
            out["default"] = avro_default(fs, fs.default_value)
        elif fs.optional:
            out["default"] = None
        return out


def from_connect_schema(schema: Schema) -> AvroSchema:
    """The Avro schema (parsed JSON) Confluent's AvroData makes of `schema`."""
    return _ToAvro().schema(schema)


def avro_default(schema: Schema, value: Any) -> Any:
    """A Connect default as Avro JSON (bytes as ISO-8859-1 text, as Avro writes them)."""
    datum = from_connect_value(schema, value)
    return _json_datum(datum)


def _json_datum(datum: Any) -> Any:
    if isinstance(datum, bytes | bytearray):
        return bytes(datum).decode("latin-1")
    if isinstance(datum, list):
        return [_json_datum(v) for v in datum]
    if isinstance(datum, dict):
        return {k: _json_datum(v) for k, v in datum.items()}
    return datum


def record_name(avro: AvroSchema) -> str:
    """The full name of a named Avro schema, else its type name (RecordNameStrategy's subject)."""
    if isinstance(avro, dict):
        name = avro.get("name")
        if name is not None:
            namespace = avro.get("namespace")
            return f"{namespace}.{name}" if namespace and "." not in name else str(name)
        return str(avro.get("type"))
    if isinstance(avro, list):
        return "union"
    return str(avro)


def wire_schema(avro: AvroSchema) -> AvroSchema:
    """A copy of `avro` without `logicalType`: what fastavro reads and writes here."""
    return _strip(copy.deepcopy(avro))


def _strip(avro: AvroSchema) -> AvroSchema:
    if isinstance(avro, list):
        return [_strip(branch) for branch in avro]
    if isinstance(avro, dict):
        avro.pop("logicalType", None)
        for key in ("items", "values"):
            if key in avro:
                avro[key] = _strip(avro[key])
        for field in avro.get("fields", ()):
            field["type"] = _strip(field["type"])
        if isinstance(avro.get("type"), dict | list):
            avro["type"] = _strip(avro["type"])
    return avro


# --- Connect value -> Avro datum ----------------------------------------------------------------


def from_connect_value(schema: Schema, value: Any) -> Any:
    """The datum for `value` of `schema` (None for null; DataError when it does not match)."""
    if value is None:
        if not schema.optional and schema.default_value is None:
            raise DataError(f"Found null value for non-optional schema {schema!r}")
        value = schema.default_value
        if value is None:
            return None
    name = schema.name
    if name == Decimal.LOGICAL_NAME:
        return Decimal.from_logical(schema, value)
    if name == Date.LOGICAL_NAME:
        return Date.from_logical(schema, value)
    if name == Time.LOGICAL_NAME:
        return Time.from_logical(schema, value)
    if name == Timestamp.LOGICAL_NAME:
        return Timestamp.from_logical(schema, value)
    kind = schema.type
    if kind is Type.ARRAY:
        items = schema.value_schema
        assert items is not None
        if not isinstance(value, list | tuple):
            schema.validate(value)
        return [from_connect_value(items, v) for v in value]
    if kind is Type.MAP:
        return _map_datum(schema, value)
    if kind is Type.STRUCT:
        if not isinstance(value, Struct) or value.schema != schema:
            schema.validate(value)
        return {
            f.name: from_connect_value(f.schema, value.get_without_default(f.name))
            for f in schema.fields
        }
    schema.validate(value)
    if kind is Type.BYTES:
        return bytes(value)
    if kind in (Type.FLOAT32, Type.FLOAT64):
        return float(value)
    return value


def _map_datum(schema: Schema, value: Any) -> Any:
    key_schema, value_schema = schema.key_schema, schema.value_schema
    assert key_schema is not None and value_schema is not None
    if not isinstance(value, Mapping):
        schema.validate(value)
    if key_schema == Schema.STRING:
        return {k: from_connect_value(value_schema, v) for k, v in value.items()}
    return [
        {"key": from_connect_value(key_schema, k), "value": from_connect_value(value_schema, v)}
        for k, v in value.items()
    ]


# --- Avro schema -> Connect schema --------------------------------------------------------------


class _ToConnect:
    """One Avro schema's conversion, with the named types seen so far."""

    def __init__(self) -> None:
        self.named: dict[str, Schema] = {}

    def schema(self, avro: AvroSchema, namespace: str = "") -> Schema:
        if isinstance(avro, list):
            return self._union(avro, namespace)
        if isinstance(avro, str):
            if avro in _FROM_AVRO:
                return Schema(_FROM_AVRO[avro])
            full = avro if "." in avro or not namespace else f"{namespace}.{avro}"
            found = self.named.get(full) or self.named.get(avro)
            if found is None:
                raise DataError(f"Unknown Avro type {avro!r}")
            return found
        if not isinstance(avro, dict):
            raise DataError(f"Invalid Avro schema: {avro!r}")
        kind = avro.get("type")
        if isinstance(kind, dict | list):
            return self.schema(kind, namespace)
        if kind == "record":
            return self._record(avro, namespace)
        if kind == "enum":
            return self._enum(avro, namespace)
        if kind == "fixed":
            full = _full_name(avro, namespace)
            base = Schema(
                Type.BYTES, name=full, parameters={FIXED_SIZE_PARAMETER: str(avro["size"])}
            )
            built = self._meta(avro, base)
            self.named[full] = built
            return built
        if kind == "array":
            items = avro["items"]
            entry = self._map_entry(items, namespace)
            if entry is not None:
                return self._meta(avro, entry)
            return self._meta(avro, Schema(Type.ARRAY, value_schema=self.schema(items, namespace)))
        if kind == "map":
            values = self.schema(avro["values"], namespace)
            return self._meta(avro, Schema(Type.MAP, key_schema=Schema.STRING, value_schema=values))
        if kind in _FROM_AVRO:
            return self._meta(avro, self._primitive(avro, kind))
        if kind == "null":
            raise DataError("An Avro null schema has no Connect counterpart outside a union")
        raise DataError(f"Unsupported Avro type {kind!r}")

    def _primitive(self, avro: dict[str, Any], kind: str) -> Schema:
        logical = avro.get("logicalType")
        connect_type = avro.get(CONNECT_TYPE)
        if kind == "int" and connect_type in ("int8", "int16"):
            return Schema(Type(connect_type))
        if logical == "date" and kind == "int":
            return Date.SCHEMA
        if logical == "time-millis" and kind == "int":
            return Time.SCHEMA
        if logical == "timestamp-millis" and kind == "long":
            return Timestamp.SCHEMA
        if logical == "decimal" and kind == "bytes":
            builder = Decimal.builder(int(avro.get("scale", 0)))
            if "precision" in avro:
                builder.parameter(DECIMAL_PRECISION_PARAMETER, str(avro["precision"]))
            return builder.build()
        return Schema(_FROM_AVRO[kind])

    def _meta(self, avro: dict[str, Any], base: Schema) -> Schema:
        """`base` with the `connect.*` properties of `avro` (they win over what was inferred)."""
        changes: dict[str, Any] = {}
        if CONNECT_NAME in avro:
            changes["name"] = avro[CONNECT_NAME]
        if CONNECT_VERSION in avro:
            changes["version"] = int(avro[CONNECT_VERSION])
        if CONNECT_DOC in avro:
            changes["doc"] = avro[CONNECT_DOC]
        if CONNECT_PARAMETERS in avro:
            changes["parameters"] = {str(k): str(v) for k, v in avro[CONNECT_PARAMETERS].items()}
        built = dataclasses.replace(base, **changes) if changes else base
        if CONNECT_DEFAULT in avro:
            built = dataclasses.replace(
                built, default_value=to_connect_default(built, avro[CONNECT_DEFAULT])
            )
        return built

    def _union(self, branches: list[Any], namespace: str) -> Schema:
        kinds = [b for b in branches if b != "null"]
        if len(kinds) == 1 and len(branches) == 2:
            inner = self.schema(kinds[0], namespace)
            return dataclasses.replace(inner, optional=True)
        raise DataError(
            f"Avro union {branches!r} is not supported: only a union of null and one type "
            "(an optional Connect schema)"
        )

    def _map_entry(self, items: AvroSchema, namespace: str) -> Schema | None:
        if not (isinstance(items, dict) and items.get("type") == "record"):
            return None
        full = _full_name(items, namespace)
        fields = [f["name"] for f in items.get("fields", ())]
        if not full.startswith(MAP_ENTRY_NAME) or fields != ["key", "value"]:
            return None
        space = full.rpartition(".")[0]
        key = self.schema(items["fields"][0]["type"], space)
        value = self.schema(items["fields"][1]["type"], space)
        return Schema(Type.MAP, key_schema=key, value_schema=value)

    def _enum(self, avro: dict[str, Any], namespace: str) -> Schema:
        full = _full_name(avro, namespace)
        params = {ENUM_PARAMETER: full}
        for symbol in avro["symbols"]:
            params[f"{ENUM_PARAMETER}.{symbol}"] = symbol
        built = self._meta(avro, Schema(Type.STRING, parameters=params))
        self.named[full] = built
        return built

    def _record(self, avro: dict[str, Any], namespace: str) -> Schema:
        full = _full_name(avro, namespace)
        space = full.rpartition(".")[0]
        fields: list[Field] = []
        for index, field in enumerate(avro.get("fields", ())):
            fs = self.schema(field["type"], space)
            if "default" in field and field["default"] is not None:
                fs = dataclasses.replace(fs, default_value=to_connect_default(fs, field["default"]))
            fields.append(Field(field["name"], index, fs))
        name = None if full.startswith(DEFAULT_RECORD_NAME) else full
        base = Schema(Type.STRUCT, name=name, doc=avro.get("doc"), fields=tuple(fields))
        built = self._meta(avro, base)
        self.named[full] = built
        return built


def _full_name(avro: dict[str, Any], namespace: str) -> str:
    name = str(avro["name"])
    if "." in name:
        return name
    space = avro.get("namespace", namespace)
    return f"{space}.{name}" if space else name


def to_connect_schema(avro: AvroSchema) -> Schema:
    """The Connect schema of a (writer's) Avro schema, as Confluent's AvroData reads it."""
    return _ToConnect().schema(avro)


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
        return [
            {
                "key": _datum_of_json(schema.key_schema, e["key"]),
                "value": _datum_of_json(schema.value_schema, e["value"]),
            }
            for e in node
        ]
    if schema.type is Type.STRUCT and isinstance(node, dict):
        return {
            f.name: _datum_of_json(f.schema, node.get(f.name, f.schema.default_value))
            for f in schema.fields
        }
    return node


# --- Avro datum -> Connect value ----------------------------------------------------------------


def to_connect_value(schema: Schema, datum: Any) -> Any:
    """The Connect value of a datum fastavro read with the `wire_schema` of `schema`'s Avro
    schema (its logical values raw)."""
    if datum is None:
        return None
    name = schema.name
    if name == Decimal.LOGICAL_NAME:
        return Decimal.to_logical(schema, datum)
    if name == Date.LOGICAL_NAME:
        return Date.to_logical(schema, datum)
    if name == Time.LOGICAL_NAME:
        return Time.to_logical(schema, datum)
    if name == Timestamp.LOGICAL_NAME:
        return Timestamp.to_logical(schema, datum)
    kind = schema.type
    if kind is Type.STRUCT:
        result = Struct(schema)
        for f in schema.fields:
            result.put(f.name, to_connect_value(f.schema, datum.get(f.name)))
        return result
    if kind is Type.ARRAY:
        items = schema.value_schema
        assert items is not None
        return [to_connect_value(items, v) for v in datum]
    if kind is Type.MAP:
        keys, values = schema.key_schema, schema.value_schema
        assert keys is not None and values is not None
        if isinstance(datum, dict):
            return {k: to_connect_value(values, v) for k, v in datum.items()}
        return {
            to_connect_value(keys, e["key"]): to_connect_value(values, e["value"]) for e in datum
        }
    if kind is Type.FLOAT32 or kind is Type.FLOAT64:
        return float(datum)
    return datum
