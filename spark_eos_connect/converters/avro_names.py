"""What Confluent's AvroData names: its constants, name splitting and scrubbing, union branches."""

from __future__ import annotations

from spark_eos_connect.api.data import Schema, Type
from spark_eos_connect.converters.avro_options import AvroDataOptions
from spark_eos_connect.errors import DataError

__all__ = [
    "AVRO_NAMESPACE",
    "AVRO_PRIMITIVES",
    "ENUM_PARAMETER",
    "UNION_NAME",
    "branch_name",
    "check_name",
    "is_union",
    "scrub_full_name",
    "scrub_name",
    "split_name",
]

AVRO_NAMESPACE = "io.confluent.connect.avro"
DEFAULT_SCHEMA_NAME = "ConnectDefault"
DEFAULT_RECORD_NAME = f"{AVRO_NAMESPACE}.{DEFAULT_SCHEMA_NAME}"
MAP_ENTRY = "MapEntry"
MAP_ENTRY_NAME = f"{AVRO_NAMESPACE}.{MAP_ENTRY}"
ENUM_PARAMETER = f"{AVRO_NAMESPACE}.Enum"
UNION_NAME = f"{AVRO_NAMESPACE}.Union"
RECORD_DOC = f"{AVRO_NAMESPACE}.record.doc"
FIELD_DOC_PREFIX = f"{AVRO_NAMESPACE}.field.doc."
ENUM_DOC_PREFIX = f"{AVRO_NAMESPACE}.enum.doc."
ENUM_DEFAULT_PREFIX = f"{AVRO_NAMESPACE}.enum.default."
FIELD_DEFAULT_FLAG = f"{AVRO_NAMESPACE}.field.default"
FIXED_SIZE_PARAMETER = "connect.fixed.size"
DECIMAL_PRECISION_PARAMETER = "connect.decimal.precision"
DEFAULT_DECIMAL_PRECISION = 64

CONNECT_NAME = "connect.name"
CONNECT_VERSION = "connect.version"
CONNECT_DOC = "connect.doc"
CONNECT_PARAMETERS = "connect.parameters"
CONNECT_DEFAULT = "connect.default"
CONNECT_TYPE = "connect.type"
CONNECT_INTERNAL_TYPE = "connect.internal.type"

_URL_SAFE = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-*_")


def _name_ok(name: str) -> bool:
    return (
        bool(name)
        and all("a" <= c <= "z" or "A" <= c <= "Z" or "0" <= c <= "9" or c == "_" for c in name)
        and not name[0].isdigit()
    )


def _url_encode(name: str) -> str:
    """As Java's `URLEncoder.encode(name, "UTF-8")`."""
    out = []
    for byte in name.encode("utf-8"):
        if byte in _URL_SAFE:
            out.append(chr(byte))
        elif byte == 0x20:
            out.append("+")
        else:
            out.append(f"%{byte:02X}")
    return "".join(out)


def scrub_name(name: str, scrub: bool) -> str:
    """`name` with the characters Avro names cannot have replaced (only when `scrub`)."""
    if not scrub or not name or _name_ok(name):
        return name
    encoded = _url_encode(name)
    if encoded[0].isdigit():
        encoded = "x" + encoded
    return "".join(
        c if ("a" <= c <= "z" or "A" <= c <= "Z" or "0" <= c <= "9" or c == "_") else "_"
        for c in encoded
    )


def _java_split(full_name: str) -> list[str]:
    """`full_name.split("\\\\.")` as Java splits (trailing empty parts dropped)."""
    parts = full_name.split(".")
    while len(parts) > 1 and not parts[-1]:
        parts.pop()
    return parts


def split_name(full_name: str, scrub: bool) -> tuple[str | None, str]:
    """The namespace (None without one) and the last part of a dotted name, scrubbed."""
    parts = [scrub_name(p, scrub) for p in _java_split(full_name)]
    if len(parts) <= 1:
        return None, parts[0]
    return ".".join(parts[:-1]) or None, parts[-1]


def scrub_full_name(full_name: str | None, scrub: bool) -> str | None:
    """A dotted name with each part scrubbed (unchanged when not `scrub`)."""
    if full_name is None or not scrub:
        return full_name
    space, name = split_name(full_name, scrub)
    return name if space is None else f"{space}.{name}"


def check_name(name: str, what: str) -> str:
    """`name` if Avro accepts it as a name, else a DataError naming it (as Avro refuses it)."""
    if not (name and (name[0].isalpha() or name[0] == "_")) or not all(
        c.isalnum() or c == "_" for c in name
    ):
        raise DataError(
            f"Illegal character in {what} {name!r}: Avro names are letters, digits and _ (not "
            "starting with a digit); set scrub.invalid.names=true to have them replaced"
        )
    return name


def is_union(schema: Schema) -> bool:
    """Whether `schema` is the Connect form of a general Avro union."""
    return schema.type is Type.STRUCT and schema.name == UNION_NAME


AVRO_PRIMITIVES = {
    Type.INT32: "int",
    Type.INT64: "long",
    Type.FLOAT32: "float",
    Type.FLOAT64: "double",
    Type.BOOLEAN: "boolean",
    Type.STRING: "string",
    Type.BYTES: "bytes",
}
"""The Avro primitive each Connect type maps to (INT8 and INT16 are ints marked `connect.type`)."""

_BRANCHES = {**AVRO_PRIMITIVES, Type.INT8: "int", Type.INT16: "int", Type.ARRAY: "array"}


def branch_name(schema: Schema, options: AvroDataOptions) -> str | None:
    """The Avro union branch a Union struct's field of `schema` is written as: the Avro type
    name, or a named type's full name (None for a struct without name: matched by shape)."""
    params = schema.parameters or {}
    if schema.type is Type.STRUCT:
        return scrub_full_name(schema.name, options.scrub_invalid_names)
    if schema.type is Type.STRING and options.enhanced and ENUM_PARAMETER in params:
        return params[ENUM_PARAMETER]
    if schema.type is Type.BYTES and schema.name is not None and FIXED_SIZE_PARAMETER in params:
        return scrub_full_name(schema.name, options.scrub_invalid_names)
    if schema.type is Type.MAP:
        key = schema.key_schema
        assert key is not None
        string_keys = key.type is Type.STRING
        return (
            "map"
            if string_keys and (not key.optional or options.allow_optional_map_keys)
            else ("array")
        )
    return _BRANCHES[schema.type]
