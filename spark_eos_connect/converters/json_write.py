"""Connect data to JSON text, byte for byte as Connect's JsonConverter (Jackson, compact) writes it.

`JsonWriter.value` renders a value under its schema (or inferred from the Python type when there
is none); `JsonWriter.schema` renders a schema as JsonConverter's schema JSON: `type`, then
`items` / `keys`+`values` / `fields`, then `optional` (always), `name`, `version`, `doc`,
`parameters`, `default` when set; a struct field is its schema's object with `field` last.
Floats use Java's shortest-digit forms (`1.0`, `1.0E10`; non-finite ones as the strings `"NaN"`,
`"Infinity"`), bytes and BASE64 decimals are base64 strings, NUMERIC decimals
`BigDecimal.toString`, maps with non-string keys arrays of `[key, value]` pairs.

`JsonWriter.write` is `value` for records: it renders a schema's values with a writer made once
per schema (a struct's field names written once, strings, ints, floats and booleans of their
plain Python class at a glance), and hands any other value, and any value that does not fit,
to `value`, which writes it or raises the error it raises.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import operator
from collections.abc import Callable, Mapping
from typing import Any, Final

from spark_eos_connect.api.data import (
    Date,
    Decimal,
    Schema,
    Struct,
    Time,
    Timestamp,
    Type,
    validate_value,
)
from spark_eos_connect.converters import _java
from spark_eos_connect.errors import DataError
from spark_eos_connect.protocol._json import quote

__all__ = ["JSON_TYPE_NAMES", "JsonWriter"]

JSON_TYPE_NAMES = {
    Type.BOOLEAN: "boolean",
    Type.INT8: "int8",
    Type.INT16: "int16",
    Type.INT32: "int32",
    Type.INT64: "int64",
    Type.FLOAT32: "float",
    Type.FLOAT64: "double",
    Type.BYTES: "bytes",
    Type.STRING: "string",
    Type.ARRAY: "array",
    Type.MAP: "map",
    Type.STRUCT: "struct",
}
"""Connect type to the name JsonConverter's schemas use (FLOAT32 is "float", FLOAT64 "double")."""

_NULL = "null"
_COMPILED_SCHEMAS: Final = 1024
"""Schemas whose writers a `JsonWriter` keeps (all are dropped when one more comes)."""


class _Unplain(Exception):
    """A value the compiled writer does not take: `JsonWriter.value` writes it (or fails)."""


Write = Callable[[Any], str]


def _where(path: str) -> str:
    if not path:
        return "value"
    return f"value{path}" if path.startswith("[") else f'field "{path}"'


def _string(text: str, path: str) -> str:
    try:
        return quote(text)
    except ValueError as error:
        raise DataError(f"Invalid string for {_where(path)}: {error}") from None


def _base64(data: bytes | bytearray) -> str:
    return '"' + base64.b64encode(bytes(data)).decode("ascii") + '"'


def _number_text(text: str) -> str:
    """Jackson writes non-finite numbers as JSON strings."""
    return text if text[-1].isdigit() else f'"{text}"'


class JsonWriter:
    """Renders values and schemas with one converter's `decimal.format` and
    `replace.null.with.default` settings."""

    def __init__(self, decimal_numeric: bool, replace_null_with_default: bool) -> None:
        self.decimal_numeric = decimal_numeric
        self.replace_null_with_default = replace_null_with_default
        self._compiled: dict[int, tuple[Schema, Write]] = {}

    # --- records -----------------------------------------------------------------------------

    def write(self, schema: Schema | None, value: Any) -> str:
        """As `value(schema, value)`, through the schema's compiled writer."""
        if schema is None:
            return self.value(None, value)
        entry = self._compiled.get(id(schema))
        if entry is None or entry[0] is not schema:
            if len(self._compiled) >= _COMPILED_SCHEMAS:
                self._compiled.clear()
            entry = self._compiled[id(schema)] = (schema, self._compile(schema))
        try:
            return entry[1](value)
        except (_Unplain, DataError, ValueError):
            return self.value(schema, value)

    def _compile(self, schema: Schema) -> Write:
        """A writer of the plain values of `schema`; it raises `_Unplain` on any other."""
        null = self._null_text(schema)
        kind, plain = schema.type, schema._plain
        if kind is Type.STRUCT and schema.name not in _LOGICAL:
            return self._compile_struct(schema, null)
        if plain is str:

            def write_str(value: Any) -> str:
                if value.__class__ is str:
                    return quote(value)
                if value is None and null is not None:
                    return null
                raise _Unplain

            return write_str
        if plain is int and schema._bounds is not None:
            low, high = schema._bounds

            def write_int(value: Any) -> str:
                if value.__class__ is int and low <= value < high:
                    return str(value)
                if value is None and null is not None:
                    return null
                raise _Unplain

            return write_int
        if plain is bool:

            def write_bool(value: Any) -> str:
                if value is True:
                    return "true"
                if value is False:
                    return "false"
                if value is None and null is not None:
                    return null
                raise _Unplain

            return write_bool

        def write_other(value: Any) -> str:
            return self.value(schema, value)  # its errors name no path: `write` writes anew

        return write_other

    def _compile_struct(self, schema: Schema, null: str | None) -> Write:
        """A struct's writer as one generated function: each field's plain values written
        inline (strings, bounded ints, booleans, nulls), other fields by their own writers. A
        flat struct (fields of those kinds only) also remembers its last value, field values
        and JSON, and writes them again when the same struct holds the same objects (a
        `source` block shared by a transaction's events)."""
        namespace: dict[str, Any] = {
            "Struct": Struct,
            "_Unplain": _Unplain,
            "quote": quote,
            "schema": schema,
            "null": null,
            "is_": operator.is_,
        }
        lines: list[str] = []
        pieces: list[str] = []
        flat = True
        for i, f in enumerate(schema.fields):
            prefix = ("{" if i == 0 else ",") + _field_name(f.name, "") + ":"
            namespace[f"P{i}"] = prefix
            pieces.append(f"{{P{i}}}{{t{i}}}")
            fs = f.schema
            field_null = self._null_text(fs)
            namespace[f"N{i}"] = field_null
            if field_null is None:
                orelse = "        raise _Unplain"
            else:
                orelse = (
                    f"        if v{i} is not None:\n            raise _Unplain\n        t{i} = N{i}"
                )
            plain = fs._plain
            if plain is str and fs.type is Type.STRING:
                lines.append(f"    if v{i}.__class__ is str:\n        t{i} = quote(v{i})")
            elif plain is int and fs._bounds is not None:
                namespace[f"L{i}"], namespace[f"H{i}"] = fs._bounds
                lines.append(
                    f"    if v{i}.__class__ is int and L{i} <= v{i} < H{i}:\n"
                    f"        t{i} = str(v{i})"
                )
            elif plain is bool:
                lines.append(
                    f'    if v{i} is True:\n        t{i} = "true"\n'
                    f'    elif v{i} is False:\n        t{i} = "false"'
                )
            else:
                flat = False
                namespace[f"W{i}"] = self._compile(fs)
                lines.append(f"    t{i} = W{i}(v{i})")
                continue
            lines.append("    else:\n" + orelse)
        count = len(schema.fields)
        names = ", ".join(f"v{i}" for i in range(count))
        text = 'f"' + "".join(pieces) + '}}"' if count else '"{}"'
        head = [
            "def write_struct(value):",
            "    if value.__class__ is not Struct or value._schema is not schema:",
            "        if value is None and null is not None:",
            "            return null",
            "        raise _Unplain",
            "    values = value._values",
        ]
        if flat and count:
            namespace["last"] = [None, (), ""]
            head += [
                "    if value is last[0] and all(map(is_, values, last[1])):",
                "        return last[2]",
            ]
        if count:
            head.append(f"    {names}{',' if count == 1 else ''} = values")
        body = head + lines
        if flat and count:
            body += [f"    text = {text}", "    last[:] = [value, tuple(values), text]"]
            body.append("    return text")
        else:
            body.append(f"    return {text}")
        exec("\n".join(body), namespace)  # the code holds names only: field names are constants
        write: Write = namespace["write_struct"]
        return write

    def _null_text(self, schema: Schema) -> str | None:
        """What `value` writes for a null of `schema`, None when that is not a plain `null`."""
        if schema.default_value is not None and self.replace_null_with_default:
            return None
        return _NULL if schema.optional else None

    # --- schemas -----------------------------------------------------------------------------

    def schema(self, schema: Schema) -> str:
        """The schema as JSON text."""
        parts = [f'"type":"{JSON_TYPE_NAMES[schema.type]}"']
        if schema.type is Type.ARRAY:
            assert schema.value_schema is not None
            parts.append('"items":' + self.schema(schema.value_schema))
        elif schema.type is Type.MAP:
            assert schema.key_schema is not None and schema.value_schema is not None
            parts.append('"keys":' + self.schema(schema.key_schema))
            parts.append('"values":' + self.schema(schema.value_schema))
        elif schema.type is Type.STRUCT:
            fields = [
                self.schema(f.schema)[:-1] + ',"field":' + _string(f.name, "") + "}"
                for f in schema.fields
            ]
            parts.append('"fields":[' + ",".join(fields) + "]")
        parts.append('"optional":' + ("true" if schema.optional else "false"))
        if schema.name is not None:
            parts.append('"name":' + _string(schema.name, ""))
        if schema.version is not None:
            parts.append(f'"version":{int(schema.version)}')
        if schema.doc is not None:
            parts.append('"doc":' + _string(schema.doc, ""))
        if schema.parameters is not None:
            params = ",".join(
                _string(k, "") + ":" + _string(v, "") for k, v in schema.parameters.items()
            )
            parts.append('"parameters":{' + params + "}")
        if schema.default_value is not None:
            parts.append('"default":' + self.value(schema, schema.default_value))
        return "{" + ",".join(parts) + "}"

    # --- values ------------------------------------------------------------------------------

    def value(self, schema: Schema | None, value: Any, path: str = "") -> str:
        """The value as JSON text (`null` for a null value allowed by the schema)."""
        if value is None:
            if schema is None:
                return _NULL
            if schema.default_value is not None and self.replace_null_with_default:
                return self.value(schema, schema.default_value, path)
            if schema.optional:
                return _NULL
            raise DataError(
                f"Conversion error: null value for {_where(path)}, which is required and has "
                f"no default value ({schema!r})"
            )
        if schema is None:
            return self._schemaless(value, path)
        logical = self._logical(schema, value, path)
        if logical is not None:
            return logical
        kind = schema.type
        if kind is Type.ARRAY:
            return self._array(schema, value, path)
        if kind is Type.MAP:
            return self._map(schema, value, path)
        if kind is Type.STRUCT:
            return self._struct(schema, value, path)
        self._check_leaf(schema, value, path)
        return self._primitive(kind, value, path)

    def _check_leaf(self, schema: Schema, value: Any, path: str) -> None:
        try:
            validate_value(schema, value)
        except DataError as error:
            message = str(error).replace(
                "Invalid value for value", f"Invalid value for {_where(path)}"
            )
            raise DataError(message) from None

    def _primitive(self, kind: Type, value: Any, path: str) -> str:
        if kind is Type.BOOLEAN:
            return "true" if value else "false"
        if kind in (Type.INT8, Type.INT16, Type.INT32, Type.INT64):
            return str(int(value))
        if kind is Type.FLOAT32:
            try:
                single = _java.float32(float(value))
            except OverflowError:
                raise DataError(
                    f"Invalid value for {_where(path)}: {value!r} is too large for FLOAT32"
                ) from None
            return _number_text(_java.float_to_string(single))
        if kind is Type.FLOAT64:
            return _number_text(_java.double_to_string(float(value)))
        if kind is Type.STRING:
            return _string(value, path)
        return _base64(value)  # BYTES

    def _logical(self, schema: Schema, value: Any, path: str) -> str | None:
        name = schema.name
        try:
            if name == Decimal.LOGICAL_NAME:
                if not isinstance(value, decimal.Decimal):
                    raise DataError(
                        f"Invalid type for Decimal, expected decimal.Decimal but was "
                        f"{type(value).__name__}"
                    )
                if self.decimal_numeric:
                    if not value.is_finite():
                        raise DataError(f"Decimal value {value} is not finite")
                    return _java.decimal_to_string(value)
                return _base64(Decimal.from_logical(schema, value))
            if name == Date.LOGICAL_NAME:
                if not isinstance(value, dt.date) or isinstance(value, dt.datetime):
                    raise DataError(f"Invalid type for Date: {type(value).__name__}")
                return str(Date.from_logical(schema, value))
            if name == Time.LOGICAL_NAME:
                if not isinstance(value, dt.time):
                    raise DataError(f"Invalid type for Time: {type(value).__name__}")
                return str(Time.from_logical(schema, value))
            if name == Timestamp.LOGICAL_NAME:
                if not isinstance(value, dt.datetime):
                    raise DataError(f"Invalid type for Timestamp: {type(value).__name__}")
                return str(Timestamp.from_logical(schema, value))
        except DataError as error:
            raise DataError(f"Invalid value for {_where(path)}: {error}") from None
        return None

    def _schemaless(self, value: Any, path: str) -> str:
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, int):
            if not -(2**63) <= value < 2**63:
                return self._raise_type(value, path, "an int64")
            return str(value)
        if isinstance(value, float):
            return self._primitive(Type.FLOAT64, value, path)
        if isinstance(value, str):
            return _string(value, path)
        if isinstance(value, bytes | bytearray):
            return _base64(value)
        if isinstance(value, list | tuple):
            items = (self.value(None, item, f"{path}[{i}]") for i, item in enumerate(value))
            return "[" + ",".join(items) + "]"
        if isinstance(value, Mapping):
            return self._map(None, value, path)
        if isinstance(value, Struct):
            raise DataError(
                f"Mismatching schema for {_where(path)}: a Struct needs its schema "
                "(set the record's key_schema/value_schema)"
            )
        return self._raise_type(value, path, "a schemaless JSON value")

    @staticmethod
    def _raise_type(value: Any, path: str, expected: str) -> str:
        raise DataError(
            f"Invalid value for {_where(path)}: {type(value).__name__} {value!r} has no "
            f"corresponding schema type ({expected} was expected); give the record a schema"
        )

    def _array(self, schema: Schema, value: Any, path: str) -> str:
        if not isinstance(value, list | tuple):
            self._check_leaf(schema, value, path)
        items = (
            self.value(schema.value_schema, item, f"{path}[{i}]") for i, item in enumerate(value)
        )
        return "[" + ",".join(items) + "]"

    def _map(self, schema: Schema | None, value: Any, path: str) -> str:
        if not isinstance(value, Mapping):
            assert schema is not None
            self._check_leaf(schema, value, path)
        if schema is None:
            key_schema = value_schema = None
            object_mode = all(isinstance(k, str) for k in value)
        else:
            key_schema, value_schema = schema.key_schema, schema.value_schema
            assert key_schema is not None
            object_mode = key_schema.type is Type.STRING
        entries = []
        for key, item in value.items():
            key_json = self.value(key_schema, key, f"{path}[key {key!r}]")
            item_json = self.value(value_schema, item, f"{path}[{key!r}]")
            if object_mode:
                # Jackson takes the key node's text: a null key becomes the name "null".
                entries.append((key_json if key_json != _NULL else '"null"') + ":" + item_json)
            else:
                entries.append(f"[{key_json},{item_json}]")
        return "{" + ",".join(entries) + "}" if object_mode else "[" + ",".join(entries) + "]"

    def _struct(self, schema: Schema, value: Any, path: str) -> str:
        if not isinstance(value, Struct) or (value.schema is not schema and value.schema != schema):
            shown = value.schema if isinstance(value, Struct) else type(value).__name__
            raise DataError(
                f"Mismatching schema for {_where(path)}: expected {schema!r}, got {shown}"
            )
        fields = (
            _field_name(name, path) + ":" + self.value(f.schema, item, _join(path, name))
            for f, (name, item) in zip(schema.fields, value, strict=True)
        )
        return "{" + ",".join(fields) + "}"


_LOGICAL: Final = (
    Decimal.LOGICAL_NAME,
    Date.LOGICAL_NAME,
    Time.LOGICAL_NAME,
    Timestamp.LOGICAL_NAME,
)

_FIELD_NAMES: dict[str, str] = {}
"""Field name -> its JSON string (the names of a few schemas, written for every record)."""


def _field_name(name: str, path: str) -> str:
    written = _FIELD_NAMES.get(name)
    if written is None:
        written = _string(name, path)
        if len(_FIELD_NAMES) < 65536:
            _FIELD_NAMES[name] = written
    return written


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name
