"""Connect schemas to Avro and back, as Confluent's `AvroData` maps them (its options in
`avro_options`; text as Avro's Java library writes it in `avro_json`; values in `avro_values`).

Connect -> Avro, with Confluent's defaults: INT8/INT16 are `int` with `"connect.type"`; INT32
`int`, INT64 `long`, FLOAT32 `float`, FLOAT64 `double`, BOOLEAN, STRING, BYTES their namesakes;
a STRUCT a `record` named by the schema's name (else `io.confluent.connect.avro.ConnectDefault`,
numbered from the second); an `io.confluent.connect.avro.Union` STRUCT an Avro union of its
fields; ARRAY `array`; a MAP with required STRING keys a `map`, any other MAP an `array` of
`MapEntry` records; an optional schema a union with `"null"` (null first, unless it has a
default; an optional STRUCT always null first). The schema's doc, version, parameters, default
and name ride along as `connect.doc`, `connect.version`, `connect.parameters`,
`connect.default`, `connect.name`, in that order; Decimal, Date, Time and Timestamp carry
Avro's logical types; parameters starting with `avro` become properties. A STRING with
`io.confluent.connect.avro.Enum` parameters is an Avro `enum` only with
`enhanced.avro.schema.support`. A record's and its fields' Avro docs come from the parameters
`io.confluent.connect.avro.record.doc` and `io.confluent.connect.avro.field.doc.<field>`.

Avro -> Connect reads what that writes, and the Avro any other producer writes: enums as STRINGs
with the Enum parameters, unions of more than null and one type as Union STRUCTs whose fields
are named by branch (`int`, `string`, a record's name...).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import Any

from spark_eos_connect.api.data import Decimal, Schema, Type
from spark_eos_connect.converters.avro_json import (
    NO_DEFAULT,
    AvroField,
    AvroNode,
    AvroType,
    schema_text,
)
from spark_eos_connect.converters.avro_names import (
    AVRO_NAMESPACE,
    AVRO_PRIMITIVES,
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
    DEFAULT_SCHEMA_NAME,
    ENUM_DEFAULT_PREFIX,
    ENUM_DOC_PREFIX,
    ENUM_PARAMETER,
    FIELD_DEFAULT_FLAG,
    FIELD_DOC_PREFIX,
    FIXED_SIZE_PARAMETER,
    MAP_ENTRY,
    MAP_ENTRY_NAME,
    RECORD_DOC,
    UNION_NAME,
    check_name,
    is_union,
    scrub_full_name,
    scrub_name,
    split_name,
)
from spark_eos_connect.converters.avro_options import DEFAULT_OPTIONS, AvroDataOptions
from spark_eos_connect.converters.avro_to_connect import to_connect_schema
from spark_eos_connect.converters.avro_values import (
    BRANCH_PREFIX,
    default_from_connect,
    from_connect_value,
    to_connect_default,
    to_connect_value,
)
from spark_eos_connect.errors import DataError

__all__ = [
    "AVRO_NAMESPACE",
    "DEFAULT_RECORD_NAME",
    "ENUM_PARAMETER",
    "MAP_ENTRY_NAME",
    "UNION_NAME",
    "avro_schema",
    "from_connect_schema",
    "from_connect_value",
    "record_name",
    "schema_text_of",
    "to_connect_default",
    "to_connect_schema",
    "to_connect_value",
    "wire_schema",
]

_LOGICAL_TYPES = {
    "org.apache.kafka.connect.data.date": ("date", "int"),
    "org.apache.kafka.connect.data.time": ("time-millis", "int"),
    "org.apache.kafka.connect.data.timestamp": ("timestamp-millis", "long"),
}
_DECIMAL = Decimal.LOGICAL_NAME.lower()


def _non_optional(schema: Schema) -> Schema:
    return dataclasses.replace(schema, optional=False) if schema.optional else schema


def _maybe_optional(schema: Schema, base: AvroType) -> AvroType:
    if not schema.optional:
        return base
    null = AvroNode("null")
    return [base, null] if schema.default_value is not None else [null, base]  # type: ignore[list-item]


class _FromConnect:
    """One Connect schema's conversion (Confluent's `FromConnectContext`): the Avro schemas of
    the required schemas converted so far, the records by Connect name, the default-name count
    and the Connect names of the fields seen."""

    def __init__(self, options: AvroDataOptions) -> None:
        self.options = options
        self.converted: dict[Schema, AvroType] = {}
        self.records: dict[str, AvroNode] = {}
        self.name_index = 0
        self.seen_names: set[str] = set()

    def names(self, name: str | None) -> tuple[str | None, str]:
        """The Avro namespace and name of a named type with Connect name `name`."""
        if name is not None:
            space, last = split_name(name, self.options.scrub_invalid_names)
            check_name(last, f"Avro name of Connect schema {name!r}")
            return space, last
        self.name_index += 1
        suffix = str(self.name_index) if self.name_index > 1 else ""
        return AVRO_NAMESPACE, DEFAULT_SCHEMA_NAME + suffix

    def schema(self, schema: Schema, ignore_optional: bool = False) -> AvroType:
        """The Avro schema of `schema` (its optional union too, unless `ignore_optional`)."""
        if not schema.optional and not is_union(schema):
            found = self.converted.get(schema)
            if found is not None:
                return found
        base = self._base(schema)
        final = base
        if isinstance(base, AvroNode):
            self._metadata(schema, base)
            self._logical_type(schema, base)
            for key, value in (schema.parameters or {}).items():
                if key.startswith("avro"):
                    base.add_prop(key, value)
            if not ignore_optional:
                final = _maybe_optional(schema, base)
        if not schema.optional:
            self.converted[schema] = final
        return final

    def with_cycle(self, schema: Schema, ignore_optional: bool = False) -> AvroType:
        """As `schema`, but a record already started under the Connect name is reused."""
        found = self.records.get(schema.name) if schema.name is not None else None
        if found is None:
            return self.schema(schema, ignore_optional)
        return found if ignore_optional else _maybe_optional(schema, found)

    def _base(self, schema: Schema) -> AvroType:
        kind = schema.type
        params = schema.parameters or {}
        if kind in (Type.INT8, Type.INT16):
            return AvroNode("int")
        if kind is Type.STRING and self.options.enhanced and ENUM_PARAMETER in params:
            return self._enum(schema, params)
        if kind is Type.BYTES:
            return self._bytes(schema, params)
        if kind in AVRO_PRIMITIVES:
            return AvroNode(AVRO_PRIMITIVES[kind])
        if kind is Type.ARRAY:
            assert schema.value_schema is not None
            return AvroNode("array", items=self.with_cycle(schema.value_schema))
        if kind is Type.MAP:
            return self._map(schema)
        if is_union(schema):
            branches: list[AvroNode] = [AvroNode("null")] if schema.optional else []
            for f in schema.fields:
                branch = self.with_cycle(_non_optional(f.schema), ignore_optional=True)
                assert isinstance(branch, AvroNode)
                branches.append(branch)
            return branches
        if schema.optional:
            inner = self.with_cycle(_non_optional(schema))
            assert isinstance(inner, AvroNode)
            return [AvroNode("null"), inner]
        return self._record(schema, params)

    def _enum(self, schema: Schema, params: Mapping[str, str]) -> AvroNode:
        prefix = ENUM_PARAMETER + "."
        symbols = [key[len(prefix) :] for key in params if key.startswith(prefix)]
        _, name = self.names(schema.name)
        full = params[ENUM_PARAMETER]
        space, _, last = full.rpartition(".")
        check_name(last, f"Avro enum name {full!r}")
        for symbol in symbols:
            check_name(symbol, f"symbol of Avro enum {full!r}")
        default = params.get(ENUM_DEFAULT_PREFIX + name)
        if default is not None and default not in symbols:
            raise DataError(f"The Enum Default: {default} is not in the enum symbol set: {symbols}")
        return AvroNode(
            "enum",
            name=last,
            namespace=space or None,
            doc=params.get(ENUM_DOC_PREFIX + name),
            symbols=symbols,
            enum_default=default,
        )

    def _bytes(self, schema: Schema, params: Mapping[str, str]) -> AvroNode:
        if schema.name is not None and FIXED_SIZE_PARAMETER in params:
            space, name = self.names(schema.name)
            node = AvroNode(
                "fixed", name=name, namespace=space, size=int(params[FIXED_SIZE_PARAMETER])
            )
        else:
            node = AvroNode("bytes")
        if (schema.name or "").lower() == _DECIMAL:
            node.add_prop("scale", int(params["scale"]))
            node.add_prop(
                "precision", int(params.get(DECIMAL_PRECISION_PARAMETER, DEFAULT_DECIMAL_PRECISION))
            )
        return node

    def _map(self, schema: Schema) -> AvroNode:
        key, value = schema.key_schema, schema.value_schema
        assert key is not None and value is not None
        if key.type is Type.STRING and (not key.optional or self.options.allow_optional_map_keys):
            return AvroNode("map", values=self.with_cycle(value))
        if schema.name is None:
            entry = AvroNode("record", name=MAP_ENTRY, namespace=AVRO_NAMESPACE)
        else:
            space, name = self.names(schema.name)
            entry = AvroNode("record", name=name, namespace=space)
            entry.add_prop(CONNECT_INTERNAL_TYPE, MAP_ENTRY)
        entry.fields = [self._field("key", key, None), self._field("value", value, None)]
        return AvroNode("array", items=entry)

    def _record(self, schema: Schema, params: Mapping[str, str]) -> AvroNode:
        space, name = self.names(schema.name)
        record = AvroNode("record", name=name, namespace=space, doc=params.get(RECORD_DOC))
        if schema.name is not None:
            self.records[schema.name] = record
        for f in schema.fields:
            field_name = scrub_name(f.name, self.options.scrub_invalid_names)
            check_name(field_name, f"field name of {schema.name or 'a struct'}")
            doc = params.get(FIELD_DOC_PREFIX + f.name)
            record.fields.append(self._field(field_name, f.schema, doc))
        return record

    def _field(self, name: str, schema: Schema, doc: str | None) -> AvroField:
        default: Any = NO_DEFAULT
        if schema.default_value is not None:
            default = default_from_connect(schema, schema.default_value, self.options)
        elif schema.optional:
            default = None
        scrubbed = scrub_full_name(schema.name, self.options.scrub_invalid_names)
        seen = scrubbed is not None and scrubbed in self.seen_names
        if scrubbed is not None:
            self.seen_names.add(scrubbed)
        avro = self.schema(schema)
        if default is not NO_DEFAULT and not _valid_default(avro, default):
            default = NO_DEFAULT  # as Confluent's: the field is written without its default
        field = AvroField(name, avro, doc, default)
        if self.options.connect_meta_data and seen and schema.parameters and _is_named(avro):
            params = _written_parameters(schema.parameters)
            if params:
                field.props[CONNECT_PARAMETERS] = params
        return field

    def _metadata(self, schema: Schema, node: AvroNode) -> None:
        if not self.options.connect_meta_data:
            return
        params = schema.parameters or {}
        if schema.doc is not None:
            node.add_prop(CONNECT_DOC, schema.doc)
        if schema.version is not None:
            node.add_prop(CONNECT_VERSION, schema.version)
        written = _written_parameters(params)
        if written:
            node.add_prop(CONNECT_PARAMETERS, written)
        if schema.default_value is not None and FIELD_DEFAULT_FLAG not in params:
            node.add_prop(
                CONNECT_DEFAULT, default_from_connect(schema, schema.default_value, self.options)
            )
        if schema.name is not None:
            node.add_prop(CONNECT_NAME, schema.name)
        if schema.type in (Type.INT8, Type.INT16):
            node.add_prop(CONNECT_TYPE, schema.type.value)

    def _logical_type(self, schema: Schema, node: AvroNode) -> None:
        name = (schema.name or "").lower()
        if name == _DECIMAL:
            params = schema.parameters or {}
            precision = int(params.get(DECIMAL_PRECISION_PARAMETER, DEFAULT_DECIMAL_PRECISION))
            scale = int(params.get("scale", 0))
            if 0 <= scale <= precision and node.kind == "fixed":
                _check_fixed_precision(node, precision)
            node.add_prop("logicalType", "decimal")
            return
        logical = _LOGICAL_TYPES.get(name)
        if logical is not None:
            if node.kind != logical[1]:
                raise DataError(f"Logical type {logical[0]} must be backed by {logical[1]}")
            node.add_prop("logicalType", logical[0])


def _check_fixed_precision(node: AvroNode, precision: int) -> None:
    digits = int((8 * node.size - 1) * 0.30102999566398120)  # log10(2)
    if precision > digits:
        raise DataError(f"fixed({node.size}) cannot store {precision} digits (max {digits})")


def _written_parameters(params: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in params.items() if k != FIELD_DEFAULT_FLAG}


def _is_named(avro: AvroType) -> bool:
    branches = avro if isinstance(avro, list) else [avro]
    return any(b.kind in ("record", "enum", "fixed") for b in branches)


def _valid_default(schema: AvroType, value: Any) -> bool:
    """Whether Avro (1.12) accepts `value` as a field default of `schema`."""
    if isinstance(schema, list):
        return any(_valid_default(branch, value) for branch in schema)
    kind = schema.kind
    if kind == "null":
        return value is None
    if kind == "boolean":
        return isinstance(value, bool)
    if kind in ("int", "long"):
        bits = 31 if kind == "int" else 63
        return (
            isinstance(value, int)
            and not isinstance(value, bool)
            and (-(2**bits) <= value < 2**bits)
        )
    if kind in ("float", "double"):
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind in ("string", "bytes", "enum", "fixed"):
        return isinstance(value, str)
    if kind == "array":
        assert schema.items is not None
        return isinstance(value, list) and all(_valid_default(schema.items, v) for v in value)
    if kind == "map":
        assert schema.values is not None
        return isinstance(value, dict) and all(
            _valid_default(schema.values, v) for v in value.values()
        )
    return isinstance(value, dict) and all(
        (f.name in value and _valid_default(f.type, value[f.name]))
        or (f.name not in value and f.default is not NO_DEFAULT)
        for f in schema.fields
    )


def avro_schema(schema: Schema, options: AvroDataOptions = DEFAULT_OPTIONS) -> AvroType:
    """The Avro schema Confluent's AvroData builds of `schema` (with `options`)."""
    return _FromConnect(options).schema(schema)


def schema_text_of(schema: Schema, options: AvroDataOptions = DEFAULT_OPTIONS) -> str:
    """The schema text Confluent's AvroConverter registers for `schema` (byte for byte)."""
    return schema_text(avro_schema(schema, options))


def from_connect_schema(schema: Schema, options: AvroDataOptions = DEFAULT_OPTIONS) -> Any:
    """The Avro schema of `schema` as parsed JSON (named types defined once, then named)."""
    return json.loads(schema_text_of(schema, options))


def record_name(avro: Any) -> str:
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


# --- the schema fastavro reads and writes with --------------------------------------------------


def wire_schema(avro: Any, tag_unions: bool = False) -> Any:
    """A copy of parsed Avro JSON `avro` without `logicalType` (logical values travel raw here);
    with `tag_unions`, each branch of a union of more than null and one type is wrapped in a
    one-field record (the same bytes) whose name tells the branch when fastavro reads it with
    `return_record_name`."""
    counter = [0]
    return _wire(avro, tag_unions, counter)


def _wire(avro: Any, tag: bool, counter: list[int]) -> Any:
    if isinstance(avro, list):
        branches = [_wire(b, tag, counter) for b in avro]
        if not tag or len([b for b in avro if b != "null"]) < 2:
            return branches
        return _tagged(branches, counter)
    if not isinstance(avro, dict):
        return avro
    out = {k: v for k, v in avro.items() if k != "logicalType"}
    for key in ("items", "values", "type"):
        if isinstance(out.get(key), dict | list):
            out[key] = _wire(out[key], tag, counter)
    if "fields" in out:
        out["fields"] = [{**f, "type": _wire(f["type"], tag, counter)} for f in out["fields"]]
    return out


def _tagged(branches: list[Any], counter: list[int]) -> list[Any]:
    counter[0] += 1
    tagged: list[Any] = []
    position = 0
    for branch in branches:
        if branch == "null":
            tagged.append("null")
            continue
        name = f"{BRANCH_PREFIX}{position}_{counter[0]}"
        tagged.append({"type": "record", "name": name, "fields": [{"name": "v", "type": branch}]})
        position += 1
    return tagged
