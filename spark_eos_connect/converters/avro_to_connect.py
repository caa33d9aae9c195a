"""An Avro schema (parsed JSON, as a registry holds it) as the Connect schema Confluent's AvroData
reads it as.

Enums are STRINGs with the `io.confluent.connect.avro.Enum` parameters (and named by the enum);
a union of null and one type is that type, optional; any other union an
`io.confluent.connect.avro.Union` STRUCT with one optional field per branch, named by the
branch's type (`int`, `string`, `array`...) or a named branch's name (its full name with
`enhanced.avro.schema.support`); a null branch makes the struct optional. A record's Avro doc
and its fields' docs become parameters, the schema's doc comes from `connect.doc`; a field
default without `connect.default` marks the field's schema with
`io.confluent.connect.avro.field.default`.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Mapping
from typing import Any

from spark_eos_connect.api.data import Date, Decimal, Field, Schema, Time, Timestamp, Type
from spark_eos_connect.converters.avro_json import NO_DEFAULT
from spark_eos_connect.converters.avro_names import (
    AVRO_NAMESPACE,
    CONNECT_DEFAULT,
    CONNECT_DOC,
    CONNECT_INTERNAL_TYPE,
    CONNECT_NAME,
    CONNECT_PARAMETERS,
    CONNECT_TYPE,
    CONNECT_VERSION,
    DECIMAL_PRECISION_PARAMETER,
    DEFAULT_DECIMAL_PRECISION,
    DEFAULT_RECORD_NAME,
    ENUM_DEFAULT_PREFIX,
    ENUM_DOC_PREFIX,
    ENUM_PARAMETER,
    FIELD_DEFAULT_FLAG,
    FIELD_DOC_PREFIX,
    FIXED_SIZE_PARAMETER,
    MAP_ENTRY,
    RECORD_DOC,
    UNION_NAME,
)
from spark_eos_connect.converters.avro_options import DEFAULT_OPTIONS, AvroDataOptions
from spark_eos_connect.converters.avro_values import to_connect_default
from spark_eos_connect.errors import DataError

__all__ = ["to_connect_schema"]

_PRIMITIVES = {
    "boolean": Type.BOOLEAN,
    "int": Type.INT32,
    "long": Type.INT64,
    "float": Type.FLOAT32,
    "double": Type.FLOAT64,
    "string": Type.STRING,
    "bytes": Type.BYTES,
}
_RESERVED = frozenset(
    ("type", "name", "namespace", "doc", "fields", "symbols", "size", "items", "values", "aliases")
)
_NAMED = ("record", "enum", "fixed")


@dataclasses.dataclass
class _Parts:
    """What a Connect schema is built from (Connect's SchemaBuilder state)."""

    type: Type
    name: str | None = None
    version: int | None = None
    doc: str | None = None
    parameters: dict[str, str] = dataclasses.field(default_factory=dict)
    fields: list[Field] = dataclasses.field(default_factory=list)
    key: Schema | None = None
    value: Schema | None = None

    def build(self, optional: bool) -> Schema:
        return Schema(
            self.type,
            optional=optional,
            name=self.name,
            version=self.version,
            doc=self.doc,
            parameters=self.parameters or None,
            fields=tuple(self.fields),
            key_schema=self.key,
            value_schema=self.value,
        )


def _logical(schema: Schema) -> _Parts:
    return _Parts(
        schema.type, schema.name, schema.version, parameters=dict(schema.parameters or {})
    )


def _is_null(avro: Any) -> bool:
    return avro == "null" or (isinstance(avro, dict) and avro.get("type") == "null")


class _ToConnect:
    """One Avro schema's conversion: the named types defined so far, by full name."""

    def __init__(self, options: AvroDataOptions) -> None:
        self.options = options
        self.named: dict[str, tuple[dict[str, Any], str | None]] = {}
        self.open: set[str] = set()

    def _define(self, node: dict[str, Any], space: str | None) -> tuple[str, str | None]:
        """The full name and namespace of the named type `node` (remembered the first time)."""
        name = str(node["name"])
        if "." in name:
            own: str | None = name.rpartition(".")[0]
        else:
            own = node.get("namespace", space)
        own = own or None
        full = name if "." in name or own is None else f"{own}.{name}"
        self.named.setdefault(full, (node, own))
        return full, own

    def _resolve(self, avro: Any, space: str | None) -> tuple[Any, str | None]:
        """`avro` with a reference to a named type replaced by its definition (and namespace)."""
        reference = avro if isinstance(avro, str) else None
        if isinstance(avro, dict) and isinstance(avro.get("type"), str):
            kind = avro["type"]
            if kind not in _PRIMITIVES and kind not in (*_NAMED, "array", "map", "null"):
                reference = kind
        if reference is None or reference in _PRIMITIVES or reference == "null":
            return avro, space
        full = reference if "." in reference or not space else f"{space}.{reference}"
        found = self.named.get(full) or self.named.get(reference)
        if found is None:
            raise DataError(f"Unknown Avro type {reference!r}")
        return found

    def convert(
        self,
        avro: Any,
        space: str | None,
        optional: bool = False,
        field_default: Any = NO_DEFAULT,
        version: int | None = None,
    ) -> Schema:
        """The Connect schema of `avro` inside namespace `space`."""
        node, space = self._resolve(avro, space)
        if isinstance(node, list):
            return self._union(node, space)
        if isinstance(node, str):
            node = {"type": node}
        if not isinstance(node, dict):
            raise DataError(f"Invalid Avro schema: {node!r}")
        if isinstance(node["type"], dict | list):
            return self.convert(node["type"], space, optional, field_default, version)
        kind = str(node["type"])
        full = None
        if kind in _NAMED:
            full, own = self._define(node, space)
            if full in self.open:
                raise DataError(f"Recursive Avro type {full!r} has no Connect counterpart here")
            self.open.add(full)
            try:
                parts = self._base(node, kind, own, full)
            finally:
                self.open.discard(full)
        else:
            parts = self._base(node, kind, space, None)
        props = {k: v for k, v in node.items() if k not in _RESERVED}
        self._metadata(parts, props, version)
        default = self._default(parts, props, field_default)
        self._name(parts, props, kind, full)
        built = parts.build(optional)
        if default is not None:
            # as Confluent's: an invalid default is ignored
            with contextlib.suppress(DataError, TypeError, ValueError, KeyError, AttributeError):
                built = dataclasses.replace(built, default_value=to_connect_default(built, default))
        return built

    def _base(self, node: dict[str, Any], kind: str, space: str | None, full: str | None) -> _Parts:
        if kind == "record":
            return self._record(node, space)
        if kind == "enum":
            assert full is not None
            return self._enum(node, full)
        if kind in ("bytes", "fixed"):
            return self._bytes(node, kind)
        if kind == "array":
            return self._array(node, space)
        if kind == "map":
            value = self.convert(node["values"], space)
            return _Parts(Type.MAP, key=Schema.STRING, value=value)
        if kind == "int":
            return self._int(node)
        if kind == "long":
            logical = str(node.get("logicalType", "")).lower()
            return (
                _logical(Timestamp.SCHEMA) if logical == "timestamp-millis" else _Parts(Type.INT64)
            )
        if kind in _PRIMITIVES:
            return _Parts(_PRIMITIVES[kind])
        if kind == "null":
            raise DataError("Standalone null schemas are not supported by this converter")
        raise DataError(f"Couldn't translate unsupported schema type {kind}.")

    def _int(self, node: dict[str, Any]) -> _Parts:
        connect_type, logical = node.get(CONNECT_TYPE), node.get("logicalType")
        if logical is not None:
            if str(logical).lower() == "date":
                return _logical(Date.SCHEMA)
            if str(logical).lower() == "time-millis":
                return _logical(Time.SCHEMA)
            return _Parts(Type.INT32)
        if connect_type is None:
            return _Parts(Type.INT32)
        if connect_type not in ("int8", "int16"):
            raise DataError("Connect type annotation for Avro int field is null")
        return _Parts(Type(connect_type))

    def _bytes(self, node: dict[str, Any], kind: str) -> _Parts:
        if str(node.get("logicalType", "")).lower() == "decimal":
            scale = node.get("scale")
            parts = _logical(Decimal.schema(scale if isinstance(scale, int) else 0))
            precision = node.get("precision")
            if precision is not None:
                if not isinstance(precision, int) or isinstance(precision, bool):
                    raise DataError("precision property must be a JSON Integer.")
                if precision != DEFAULT_DECIMAL_PRECISION:
                    parts.parameters[DECIMAL_PRECISION_PARAMETER] = str(precision)
        else:
            parts = _Parts(Type.BYTES)
        if kind == "fixed":
            parts.parameters[FIXED_SIZE_PARAMETER] = str(node["size"])
        return parts

    def _array(self, node: dict[str, Any], space: str | None) -> _Parts:
        items, items_space = self._resolve(node["items"], space)
        if isinstance(items, dict) and items.get("type") == "record":
            _, own = self._define(items, items_space)
            entry = (own == AVRO_NAMESPACE and items["name"].rpartition(".")[2] == MAP_ENTRY) or (
                items.get(CONNECT_INTERNAL_TYPE) == MAP_ENTRY
            )
            if entry:
                fields = {f["name"]: f["type"] for f in items.get("fields", ())}
                if len(fields) != 2 or "key" not in fields or "value" not in fields:
                    raise DataError(
                        "Found map encoded as array of key-value pairs, but array elements do "
                        "not match the expected format."
                    )
                key = self.convert(fields["key"], own)
                value = self.convert(fields["value"], own)
                return _Parts(Type.MAP, key=key, value=value)
        return _Parts(Type.ARRAY, value=self.convert(node["items"], space))

    def _record(self, node: dict[str, Any], space: str | None) -> _Parts:
        parts = _Parts(Type.STRUCT)
        meta = self.options.connect_meta_data
        if meta and node.get("doc") is not None:
            parts.parameters[RECORD_DOC] = str(node["doc"])
        for index, field in enumerate(node.get("fields", ())):
            name = str(field["name"])
            if meta and field.get("doc") is not None:
                parts.parameters[FIELD_DOC_PREFIX + name] = str(field["doc"])
            default = field.get("default", NO_DEFAULT)
            schema = self.convert(field["type"], space, field_default=default)
            field_params = field.get(CONNECT_PARAMETERS)
            if meta and isinstance(field_params, Mapping):
                schema = _with_field_parameters(schema, field_params)
            parts.fields.append(Field(name, index, schema))
        return parts

    def _enum(self, node: dict[str, Any], full: str) -> _Parts:
        parts = _Parts(Type.STRING)
        short = str(node["name"]).rpartition(".")[2]
        if self.options.connect_meta_data:
            if node.get("doc") is not None:
                parts.parameters[ENUM_DOC_PREFIX + short] = str(node["doc"])
            if node.get("default") is not None:
                parts.parameters[ENUM_DEFAULT_PREFIX + short] = str(node["default"])
        parts.parameters[ENUM_PARAMETER] = full
        for symbol in node["symbols"]:
            parts.parameters[f"{ENUM_PARAMETER}.{symbol}"] = str(symbol)
        return parts

    def _union(self, branches: list[Any], space: str | None) -> Schema:
        if len(branches) == 1 and self.options.flatten_singleton_unions:
            return self.convert(branches[0], space)
        if len(branches) == 2 and any(_is_null(b) for b in branches):
            other = branches[1] if _is_null(branches[0]) else branches[0]
            if not _is_null(other):
                return self.convert(other, space, optional=True)
        optional = False
        fields: list[Field] = []
        for branch in branches:
            if _is_null(branch):
                optional = True
                continue
            name = self._member_name(branch, space)
            if any(f.name == name for f in fields):
                raise DataError(
                    f"Multiple union schemas map to the Connect union field name {name!r}"
                )
            fields.append(Field(name, len(fields), self.convert(branch, space, optional=True)))
        return Schema(Type.STRUCT, optional=optional, name=UNION_NAME, fields=tuple(fields))

    def _member_name(self, branch: Any, space: str | None) -> str:
        node, own = self._resolve(branch, space)
        if isinstance(node, dict) and node.get("type") in _NAMED:
            full, _ = self._define(node, own)
            return full if self.options.enhanced else full.rpartition(".")[2]
        if isinstance(node, dict):
            return str(node["type"])
        return str(node)

    def _metadata(self, parts: _Parts, props: Mapping[str, Any], version: int | None) -> None:
        meta = self.options.connect_meta_data
        if meta and props.get(CONNECT_DOC) is not None:
            parts.doc = str(props[CONNECT_DOC])
        found = props.get(CONNECT_VERSION, version)
        if found is not None:
            if not isinstance(found, int) or isinstance(found, bool):
                raise DataError(f"Invalid Connect version found: {found}")
            if parts.version is not None and parts.version != found:
                raise DataError(
                    f"Mismatched versions: version already added to SchemaBuilder "
                    f"({parts.version}) differs from version in source schema ({found})"
                )
            parts.version = found if found >= 0 else parts.version
        params = props.get(CONNECT_PARAMETERS)
        if meta and params is not None:
            if not isinstance(params, Mapping):
                raise DataError(f"Expected JSON object for schema parameters but found: {params}")
            for key, value in params.items():
                if not isinstance(value, str):
                    raise DataError(
                        f"Expected schema parameter values to be strings but found: {value}"
                    )
                parts.parameters[str(key)] = value
        for key, value in props.items():
            if key.startswith("avro"):
                parts.parameters[key] = value if isinstance(value, str) else str(value)

    def _default(self, parts: _Parts, props: Mapping[str, Any], field_default: Any) -> Any:
        """The JSON default of the schema: the field's, else `connect.default`."""
        connect_default = props.get(CONNECT_DEFAULT)
        if field_default is NO_DEFAULT:
            return connect_default
        if self.options.connect_meta_data and CONNECT_DEFAULT not in props:
            parts.parameters[FIELD_DEFAULT_FLAG] = "true"
        return field_default

    def _name(self, parts: _Parts, props: Mapping[str, Any], kind: str, full: str | None) -> None:
        name = props.get(CONNECT_NAME)
        if name is not None and not isinstance(name, str):
            raise DataError(f"Invalid schema name: {name}")
        if name is None and (
            kind in ("record", "enum") or (kind == "fixed" and parts.name is None)
        ):
            name = full
        if name is None or name.startswith(DEFAULT_RECORD_NAME):
            return
        if parts.name is not None and parts.name != name:
            raise DataError(
                f"Mismatched names: name already added to SchemaBuilder ({parts.name}) differs "
                f"from name in source schema ({name})"
            )
        parts.name = name


def _with_field_parameters(schema: Schema, overrides: Mapping[Any, Any]) -> Schema:
    """`schema` with a field's `connect.parameters` over its type's (as Confluent's)."""
    current = schema.parameters or {}
    if all(str(v) == current.get(str(k)) for k, v in overrides.items()):
        return schema
    merged = {**current, **{str(k): str(v) for k, v in overrides.items()}}
    return dataclasses.replace(schema, parameters=merged)


def to_connect_schema(
    avro: Any, options: AvroDataOptions = DEFAULT_OPTIONS, version: int | None = None
) -> Schema:
    """The Connect schema of a (writer's) Avro schema, as Confluent's AvroData reads it;
    `version` is the Connect version when the schema has no `connect.version`."""
    return _ToConnect(options).convert(avro, None, version=version)
