"""Avro schemas as Apache Avro's Java library holds them, and their text as it writes them.

Confluent's AvroConverter registers `Schema.toString()` of the schema AvroData builds, so the
bytes a registry stores depend on Avro's writer: compact JSON; per kind the reserved keys in a
fixed order, then the other properties in the order they were added; a named type written in
full once, then as a name relative to the enclosing namespace (a different type under a name
already written is an error, as in Avro); `"namespace": ""` for a type without namespace inside
one; strings escaped as Jackson escapes them; floats as Java's `Float.toString` and
`Double.toString` write them.
"""

from __future__ import annotations

import decimal
import math
import struct
from dataclasses import dataclass, field
from typing import Any, Union

from spark_eos_connect.errors import DataError

__all__ = [
    "NO_DEFAULT",
    "PRIMITIVES",
    "AvroField",
    "AvroNode",
    "AvroType",
    "Float32",
    "java_double",
    "java_float",
    "same_schema",
    "schema_text",
]

PRIMITIVES = ("null", "boolean", "int", "long", "float", "double", "bytes", "string")
NAMED = ("record", "enum", "fixed")


class _NoDefault:
    def __repr__(self) -> str:
        return "NO_DEFAULT"


NO_DEFAULT: Any = _NoDefault()
"""A field without a default (None is Avro's null default)."""


class Float32(float):
    """A JSON number written as Java writes a `float` (FLOAT32 defaults)."""


@dataclass(eq=False)
class AvroField:
    """A record field: name, schema, doc, default (`NO_DEFAULT` for none), properties."""

    name: str
    type: AvroType
    doc: str | None = None
    default: Any = NO_DEFAULT
    props: dict[str, Any] = field(default_factory=dict)


@dataclass(eq=False)
class AvroNode:
    """A non-union Avro schema: `kind` is a primitive name or record/enum/fixed/array/map."""

    kind: str
    name: str | None = None
    namespace: str | None = None
    doc: str | None = None
    fields: list[AvroField] = field(default_factory=list)
    symbols: list[str] = field(default_factory=list)
    enum_default: str | None = None
    size: int = 0
    items: AvroType | None = None
    values: AvroType | None = None
    props: dict[str, Any] = field(default_factory=dict)

    @property
    def full_name(self) -> str:
        """`namespace.name` (the name alone without namespace)."""
        return f"{self.namespace}.{self.name}" if self.namespace else str(self.name)

    def add_prop(self, key: str, value: Any) -> None:
        """Add a property as Avro's `addProp`: kept if present with the same value, else an
        error."""
        if key in self.props:
            if self.props[key] != value:
                raise DataError(f"Can't overwrite property: {key}")
            return
        self.props[key] = value


AvroType = Union[AvroNode, list[AvroNode]]  # noqa: UP007 (a runtime alias)
"""A schema: a node, or a union (a list of nodes)."""


# --- equality as Avro's Schema.equals (docs and enum defaults do not count) ------------------


def same_schema(a: AvroType, b: AvroType) -> bool:
    """Whether Avro's Java library holds `a` and `b` equal."""
    if a is b:
        return True
    if isinstance(a, list) or isinstance(b, list):
        if not (isinstance(a, list) and isinstance(b, list)) or len(a) != len(b):
            return False
        return all(same_schema(x, y) for x, y in zip(a, b, strict=True))
    if a.kind != b.kind or a.props != b.props:
        return False
    if a.kind in NAMED and a.full_name != b.full_name:
        return False
    if a.kind == "record":
        return len(a.fields) == len(b.fields) and all(
            _same_field(x, y) for x, y in zip(a.fields, b.fields, strict=True)
        )
    if a.kind == "enum":
        return a.symbols == b.symbols
    if a.kind == "fixed":
        return a.size == b.size
    if a.kind == "array":
        assert a.items is not None and b.items is not None
        return same_schema(a.items, b.items)
    if a.kind == "map":
        assert a.values is not None and b.values is not None
        return same_schema(a.values, b.values)
    return True


def _same_field(a: AvroField, b: AvroField) -> bool:
    return (
        a.name == b.name
        and same_schema(a.type, b.type)
        and _json_equal(a.default, b.default)
        and a.props == b.props
    )


def _json_equal(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b if isinstance(a, float) else a == b


# --- text -----------------------------------------------------------------------------------


def schema_text(schema: AvroType) -> str:
    """`schema` as Avro's `Schema.toString()` writes it."""
    out: list[str] = []
    _Writer(out).schema(schema, None)
    return "".join(out)


class _Writer:
    """One schema's text: the named types written so far (Avro's `Names`)."""

    def __init__(self, out: list[str]) -> None:
        self.out = out
        self.names: dict[str, AvroNode] = {}

    def schema(self, schema: AvroType, space: str | None) -> None:
        out = self.out
        if isinstance(schema, list):
            out.append("[")
            for position, branch in enumerate(schema):
                if position:
                    out.append(",")
                self.schema(branch, space)
            out.append("]")
            return
        kind = schema.kind
        if kind in NAMED:
            self._named(schema, space)
        elif kind == "array" or kind == "map":
            out.append('{"type":' + json_text(kind))
            out.append(',"items":' if kind == "array" else ',"values":')
            inner = schema.items if kind == "array" else schema.values
            assert inner is not None
            self.schema(inner, space)
            self._props(schema.props)
            out.append("}")
        elif schema.props:
            out.append('{"type":' + json_text(kind))
            self._props(schema.props)
            out.append("}")
        else:
            out.append(json_text(kind))

    def _named(self, node: AvroNode, space: str | None) -> None:
        out = self.out
        full = node.full_name
        known = self.names.get(full)
        if known is not None:
            if not same_schema(known, node):
                raise DataError(
                    f"Can't redefine: {full} (two different Avro types would have this name; "
                    "give the Connect schemas different names)"
                )
            out.append(json_text(_qualified(node, space)))
            return
        self.names[full] = node
        out.append('{"type":' + json_text(node.kind) + ',"name":' + json_text(str(node.name)))
        if node.namespace:
            if node.namespace != space:
                out.append(',"namespace":' + json_text(node.namespace))
        elif space:
            out.append(',"namespace":""')
        if node.doc is not None:
            out.append(',"doc":' + json_text(node.doc))
        if node.kind == "record":
            out.append(',"fields":[')
            for position, f in enumerate(node.fields):
                if position:
                    out.append(",")
                self._field(f, node.namespace or None)
            out.append("]")
        elif node.kind == "enum":
            out.append(',"symbols":' + json_text(node.symbols))
            if node.enum_default is not None:
                out.append(',"default":' + json_text(node.enum_default))
        else:
            out.append(',"size":' + str(node.size))
        self._props(node.props)
        out.append("}")

    def _field(self, f: AvroField, space: str | None) -> None:
        out = self.out
        out.append('{"name":' + json_text(f.name) + ',"type":')
        self.schema(f.type, space)
        if f.doc is not None:
            out.append(',"doc":' + json_text(f.doc))
        if f.default is not NO_DEFAULT:
            out.append(',"default":' + json_text(f.default))
        self._props(f.props)
        out.append("}")

    def _props(self, props: dict[str, Any]) -> None:
        for key, value in props.items():
            self.out.append("," + json_text(key) + ":" + json_text(value))


def _qualified(node: AvroNode, space: str | None) -> str:
    """The name a reference to `node` is written with inside namespace `space`."""
    if node.namespace and node.namespace == space and node.name not in _TYPE_NAMES:
        return str(node.name)
    return node.full_name


_TYPE_NAMES = frozenset((*PRIMITIVES, "record", "enum", "array", "map", "union", "fixed"))


# --- JSON values as Jackson writes them -------------------------------------------------------

_SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\f": "\\f"}
_SHORT_ESCAPES.update({"\n": "\\n", "\r": "\\r"})


def _escape(text: str) -> str:
    if text.isprintable() and '"' not in text and "\\" not in text:
        return '"' + text + '"'
    parts = ['"']
    for char in text:
        short = _SHORT_ESCAPES.get(char)
        if short is not None:
            parts.append(short)
        elif char < " ":
            parts.append(f"\\u{ord(char):04X}")
        else:
            parts.append(char)
    parts.append('"')
    return "".join(parts)


def json_text(value: Any) -> str:
    """`value` (parsed JSON; `Float32` for floats) as compact JSON, written as Jackson does."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return _escape(value)
    if isinstance(value, Float32):
        return java_float(value)
    if isinstance(value, float):
        return java_double(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, dict):
        return "{" + ",".join(_escape(str(k)) + ":" + json_text(v) for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(json_text(v) for v in value) + "]"
    raise DataError(f"Cannot write {type(value).__name__} {value!r} as JSON")


def java_double(value: float) -> str:
    """`value` as Java's `Double.toString` writes it (shortest digits that read back)."""
    return _java_number(value, repr(value))


def java_float(value: float) -> str:
    """`value` as Java's `Float.toString` writes it (shortest digits that read back as the same
    32-bit float)."""
    if not math.isfinite(value) or value == 0:
        return _java_number(value, repr(value))
    single = struct.unpack(">f", struct.pack(">f", value))[0]
    for digits in range(1, 10):
        text = f"{single:.{digits - 1}e}"
        if struct.unpack(">f", struct.pack(">f", float(text)))[0] == single:
            return _java_number(single, text)
    return _java_number(single, repr(single))


def _java_number(value: float, shortest: str) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    sign, digit_tuple, exponent = decimal.Decimal(shortest).normalize().as_tuple()
    assert isinstance(exponent, int)
    digits = "".join(map(str, digit_tuple))
    scientific = len(digits) - 1 + exponent
    prefix = "-" if sign else ""
    if -3 <= scientific < 7:
        if scientific >= 0:
            whole = digits[: scientific + 1].ljust(scientific + 1, "0")
            fraction = digits[scientific + 1 :] or "0"
        else:
            whole, fraction = "0", "0" * (-scientific - 1) + digits
        return f"{prefix}{whole}.{fraction}"
    return f"{prefix}{digits[0]}.{digits[1:] or '0'}E{scientific}"
