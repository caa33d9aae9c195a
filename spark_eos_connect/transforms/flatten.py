"""Flatten: nested structs (or maps) become one level, names joined with `delimiter`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from spark_eos_connect.api.config import ConfigDef, ConfigType
from spark_eos_connect.api.data import Schema, SchemaBuilder, Struct, Type
from spark_eos_connect.errors import DataError
from spark_eos_connect.transforms._schemas import (
    SchemaCache,
    builder_like,
    copy_schema_basics,
    infer_type,
    require_map,
    require_struct,
    type_name,
)
from spark_eos_connect.transforms.base import KeyOrValueTransformation
from spark_eos_connect.transforms.record import ConnectRecord

__all__ = ["Flatten", "FlattenKey", "FlattenValue"]

_PACKAGE = "org.apache.kafka.connect.transforms."
_KEPT = frozenset(
    {
        Type.INT8,
        Type.INT16,
        Type.INT32,
        Type.INT64,
        Type.FLOAT32,
        Type.FLOAT64,
        Type.BOOLEAN,
        Type.STRING,
        Type.BYTES,
        Type.ARRAY,
    }
)


class Flatten(KeyOrValueTransformation):
    """Flattens nested structs or maps; arrays and their contents are left as they are.

    With a schema, a flattened field is optional when any struct above it is, and takes its
    default from its own schema or from the default of a struct above it.
    """

    OVERVIEW = (
        "Flatten a nested data structure, generating names for each field by concatenating the "
        "field names at each level with a configurable delimiter character. Array fields and "
        "their contents are not modified."
    )
    CONFIG_DEF = ConfigDef().define(
        "delimiter",
        ConfigType.STRING,
        ".",
        doc="Delimiter to insert between field names from the input record when generating "
        "field names for the output record.",
    )
    _PURPOSE = "flattening"

    def setup(self, values: dict[str, Any]) -> None:
        self._delimiter: str = values["delimiter"]
        self._schemas = SchemaCache()

    def _name(self, prefix: str, name: str) -> str:
        return name if not prefix else prefix + self._delimiter + name

    def apply(self, record: ConnectRecord) -> ConnectRecord | None:
        value = self.operating_value(record)
        if value is None:
            return record
        schema = self.operating_schema(record)
        if schema is None:
            flat: dict[Any, Any] = {}
            self._flatten_map(require_map(value, self._PURPOSE), "", flat)
            return self.updated(record, None, flat)
        struct = require_struct(value, self._PURPOSE)
        new_schema = self._schemas.get_or_build(schema, self._flat_schema)
        result = Struct(new_schema)
        self._flatten_struct(struct, "", result)
        return self.updated(record, new_schema, result)

    def _flatten_map(self, source: Mapping[Any, Any], prefix: str, out: dict[Any, Any]) -> None:
        for key, item in source.items():
            name = self._name(prefix, str(key))
            if item is None:
                out[name] = None
                continue
            kind = infer_type(item)
            if kind is None:
                raise DataError(
                    f"Flatten transformation was passed a value of type {type_name(item)} which "
                    "is not supported by Connect's data API"
                )
            if kind in _KEPT:
                out[name] = item
            elif kind is Type.MAP:
                self._flatten_map(item, name, out)
            else:
                raise DataError(
                    f"Flatten transformation does not support {type_name(item)} for record "
                    f"without schemas (for field {name})."
                )

    def _flat_schema(self, schema: Schema) -> Schema:
        builder = copy_schema_basics(schema, SchemaBuilder.struct())
        default = schema.default_value if isinstance(schema.default_value, Struct) else None
        self._add_fields(schema, "", builder, schema.optional, default)
        return builder.build()

    def _add_fields(
        self,
        schema: Schema,
        prefix: str,
        builder: SchemaBuilder,
        optional: bool,
        parent_default: Struct | None,
    ) -> None:
        for field in schema.fields:
            name = self._name(prefix, field.name)
            field_optional = optional or field.schema.optional
            default: Any = field.schema.default_value
            if default is None and parent_default is not None:
                default = parent_default.get(field.name)
            kind = field.schema.type
            if kind in _KEPT:
                builder.field(name, _flat_field(field.schema, field_optional, default))
            elif kind is Type.STRUCT:
                self._add_fields(field.schema, name, builder, field_optional, default)
            else:
                raise DataError(
                    f"Flatten transformation does not support {kind.name} for record with "
                    f"schemas (for field {name})."
                )

    def _flatten_struct(self, source: Struct | None, prefix: str, out: Struct) -> None:
        if source is None:
            return
        for field in source.schema.fields:
            name = self._name(prefix, field.name)
            kind = field.schema.type
            if kind in _KEPT:
                out.put(name, source.get(field.name))
            elif kind is Type.STRUCT:
                self._flatten_struct(source.get(field.name), name, out)
            else:
                raise DataError(
                    f"Flatten transformation does not support {kind.name} for record with "
                    f"schemas (for field {name})."
                )


def _flat_field(original: Schema, optional: bool, default: Any) -> Schema:
    builder = copy_schema_basics(original, builder_like(original))
    if optional:
        builder.optional()
    if default is not None:
        builder.default_value(default)
    return builder.build()


class FlattenKey(Flatten):
    """Flatten on the record key."""

    SIDE = "key"
    CONNECT_CLASS = _PACKAGE + "Flatten$Key"


class FlattenValue(Flatten):
    """Flatten on the record value."""

    SIDE = "value"
    CONNECT_CLASS = _PACKAGE + "Flatten$Value"
