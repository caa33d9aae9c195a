"""Cast: fields (`field:type,...`) or the whole key/value (`type`) to another primitive type.

Conversions follow Java: narrowing wraps (`(byte) 300` is 44), floats truncate toward zero,
numbers are true when non-zero, strings parse with Java's parsers, and casting to a string
writes Java's `toString` (floats as `Float.toString`/`Double.toString`, bytes in base64, dates
in ISO-8601 via `Values.dateFormatFor`).
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
from typing import Any, Final

from spark_eos_connect.api.config import ConfigDef, ConfigType
from spark_eos_connect.api.data import (
    Date,
    Schema,
    SchemaBuilder,
    Struct,
    Time,
    Timestamp,
    Type,
)
from spark_eos_connect.errors import ConfigError, DataError
from spark_eos_connect.transforms._hashmap import JavaHashMap
from spark_eos_connect.transforms._jnumbers import (
    Float32,
    double_to_string,
    float_to_string,
    narrow_int,
    parse_java_boolean,
    parse_java_double,
    parse_java_float,
    parse_java_int,
    to_float32,
    wrap,
)
from spark_eos_connect.transforms._schemas import (
    SchemaCache,
    copy_schema_basics,
    infer_type,
    require_map,
    require_struct,
    type_name,
)
from spark_eos_connect.transforms._values import format_java_date
from spark_eos_connect.transforms.base import KeyOrValueTransformation
from spark_eos_connect.transforms.field_edits import REPLACE_NULL_DOC, field_value
from spark_eos_connect.transforms.record import ConnectRecord

__all__ = ["Cast", "CastKey", "CastValue", "parse_cast_spec"]

_PACKAGE = "org.apache.kafka.connect.transforms."
_INPUT_TYPES: Final = (
    Type.INT8,
    Type.INT16,
    Type.INT32,
    Type.INT64,
    Type.FLOAT32,
    Type.FLOAT64,
    Type.BOOLEAN,
    Type.STRING,
    Type.BYTES,
)
_OUTPUT_TYPES: Final = _INPUT_TYPES[:-1]
_BITS: Final = {Type.INT8: 8, Type.INT16: 16, Type.INT32: 32, Type.INT64: 64}
_WHOLE: Final = None


def _java_split(text: str) -> list[str]:
    """`String.split(":")`: trailing empty strings are dropped (but "" stays [""])."""
    parts = text.split(":")
    while len(parts) > 1 and parts[-1] == "":
        parts.pop()
    return parts


def _output_type(name: str, text: str) -> Type:
    try:
        kind = Type[text.strip().upper()]
    except KeyError:
        raise ConfigError(
            f"Invalid value for {name}: invalid type found in casting spec: {text.strip()} "
            f"(expected one of {', '.join(t.value for t in _OUTPUT_TYPES)})"
        ) from None
    if kind not in _OUTPUT_TYPES:
        raise ConfigError(
            f"Invalid value for {name}: Cast transformation does not support casting to "
            f"{kind.name}; supported types are {', '.join(t.name for t in _OUTPUT_TYPES)}"
        )
    return kind


def parse_cast_spec(name: str, mappings: list[str]) -> dict[str | None, Type]:
    """`field:type` pairs (or one bare type: the whole value) to {field or None: type}."""
    if not mappings:
        raise ConfigError(f"Invalid value for {name}: Must specify at least one field to cast.")
    casts: dict[str | None, Type] = {}
    whole = False
    for mapping in mappings:
        parts = _java_split(mapping)
        if len(parts) > 2:
            raise ConfigError(
                f"Invalid value for {name}: invalid cast mapping {mapping!r} (expected field:type)"
            )
        if len(parts) == 1:
            casts[_WHOLE] = _output_type(name, parts[0])
            whole = True
        else:
            casts[parts[0].strip()] = _output_type(name, parts[1])
    if whole and len(mappings) > 1:
        raise ConfigError(
            f"Invalid value for {name}: Cast transformations that specify a type to cast the "
            "entire value to may only specify a single cast in their spec"
        )
    return casts


class _CastSpec:
    def __call__(self, name: str, value: Any) -> None:
        parse_cast_spec(name, value)

    def __str__(self) -> str:
        return "list of colon-delimited pairs, e.g. foo:int32,bar:string, or one type"


def _encode_logical(schema: Schema, value: Any) -> Any:
    if schema.name == Date.LOGICAL_NAME:
        return Date.from_logical(schema, value)
    if schema.name == Time.LOGICAL_NAME:
        return Time.from_logical(schema, value)
    if schema.name == Timestamp.LOGICAL_NAME:
        return Timestamp.from_logical(schema, value)
    return value


def _as_number(value: Any, target: Type) -> int | float:
    """`Number.xxxValue()` of an int, float or Decimal (its integer part for integer targets)."""
    if isinstance(value, decimal.Decimal):
        return int(value) if target in _BITS else float(value)
    return value


def _out_of_range(value: Any) -> DataError:
    return DataError(f"Value ({value}) was out of range for requested data type")


def cast_value(schema: Schema | None, value: Any, target: Type) -> Any:
    """Cast one value (with its schema, or None) to `target`, as Connect's `Cast` does."""
    if value is None:
        return None
    source = schema.type if schema is not None else infer_type(value)
    if source is None:
        raise DataError(
            f"Cast transformation was passed a value of type {type_name(value)} which is not "
            "supported by Connect's data API"
        )
    if source not in _INPUT_TYPES:
        raise DataError(
            f"Cast transformation does not support casting from {source.name}; supported types "
            f"are {', '.join(t.name for t in _INPUT_TYPES)}"
        )
    if target is Type.STRING:
        return _to_string(value, source)
    if schema is not None and schema.name is not None:
        value = _encode_logical(schema, value)
    if isinstance(value, bytes | bytearray | memoryview | dt.date | dt.time):
        raise DataError(f"Unexpected type in Cast transformation: {type_name(value)}")
    if target in _BITS:
        bits = _BITS[target]
        if isinstance(value, bool):
            return 1 if value else 0
        if isinstance(value, str):
            try:
                return parse_java_int(value, bits)
            except ValueError:
                raise _out_of_range(value) from None
        return narrow_int(_as_number(value, target), bits)
    if target in (Type.FLOAT32, Type.FLOAT64):
        if isinstance(value, bool):
            one = 1.0 if value else 0.0
            return Float32(one) if target is Type.FLOAT32 else one
        if isinstance(value, str):
            try:
                if target is Type.FLOAT32:
                    return Float32(parse_java_float(value))
                return parse_java_double(value)
            except ValueError:
                raise _out_of_range(value) from None
        number = float(_as_number(value, target))
        return Float32(to_float32(number)) if target is Type.FLOAT32 else number
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        return parse_java_boolean(value)
    if isinstance(value, float):
        return narrow_int(value, 64) != 0
    return wrap(int(value), 64) != 0


def _to_string(value: Any, source: Type) -> str:
    if isinstance(value, dt.date | dt.time):
        return format_java_date(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        single = source is Type.FLOAT32 or isinstance(value, Float32)
        return float_to_string(value) if single else double_to_string(value)
    return str(value)


class Cast(KeyOrValueTransformation):
    """Casts fields, or the whole key or value, to int8 ... float64, boolean or string."""

    OVERVIEW = (
        "Cast fields or the entire key or value to a specific type, e.g. to force an integer "
        "field to a smaller width. Cast from integers, floats, boolean and string to any other "
        "type, and cast binary to string (base64 encoded)."
    )
    CONFIG_DEF = (
        ConfigDef()
        .define(
            "spec",
            ConfigType.LIST,
            validator=_CastSpec(),
            importance="high",
            doc="List of fields and the type to cast them to of the form field1:type,field2:type "
            "to cast fields of Maps or Structs. A single type to cast the entire value. Valid "
            "types are int8, int16, int32, int64, float32, float64, boolean, and string. Note "
            "that binary fields can only be cast to string.",
        )
        .define("replace.null.with.default", ConfigType.BOOLEAN, True, doc=REPLACE_NULL_DOC)
    )
    _PURPOSE = "cast types"

    def setup(self, values: dict[str, Any]) -> None:
        casts = parse_cast_spec("spec", values["spec"])
        self._whole = casts.get(_WHOLE)
        field_casts = {name: kind for name, kind in casts.items() if name is not None}
        ordered = JavaHashMap()
        ordered.put_all(field_casts.items())
        self._casts: dict[str, Type] = ordered.to_dict()
        self._defaults = bool(values["replace.null.with.default"])
        self._schemas = SchemaCache()

    def apply(self, record: ConnectRecord) -> ConnectRecord | None:
        value = self.operating_value(record)
        if value is None:
            return record
        schema = self.operating_schema(record)
        if schema is None:
            if self._whole is not None:
                return self.updated(record, None, cast_value(None, value, self._whole))
            source = require_map(value, self._PURPOSE)
            updated = JavaHashMap.copy_of(source)
            for name, kind in self._casts.items():
                updated.put(name, cast_value(None, source.get(name), kind))
            return self.updated(record, None, updated.to_dict())
        new_schema = self._schemas.get_or_build(schema, self._cast_schema)
        if self._whole is not None:
            return self.updated(record, new_schema, cast_value(schema, value, self._whole))
        struct = require_struct(value, self._PURPOSE)
        result = Struct(new_schema)
        for field in struct.schema.fields:
            original = field_value(struct, field.name, self._defaults)
            target = self._casts.get(field.name)
            result.put(
                field.name,
                original if target is None else cast_value(field.schema, original, target),
            )
        return self.updated(record, new_schema, result)

    def _cast_schema(self, schema: Schema) -> Schema:
        if self._whole is not None:
            builder = copy_schema_basics(schema, SchemaBuilder(self._whole))
        else:
            builder = copy_schema_basics(schema, SchemaBuilder.struct())
            for field in schema.fields:
                kind = self._casts.get(field.name)
                if kind is None:
                    builder.field(field.name, field.schema)
                    continue
                field_builder = SchemaBuilder(kind)
                if field.schema.optional:
                    field_builder.optional()
                if field.schema.default_value is not None:
                    field_builder.default_value(
                        cast_value(field.schema, field.schema.default_value, kind)
                    )
                builder.field(field.name, field_builder.build())
        if schema.optional:
            builder.optional()
        if schema.default_value is not None:
            builder.default_value(cast_value(schema, schema.default_value, builder.type))
        return builder.build()


class CastKey(Cast):
    """Cast on the record key."""

    SIDE = "key"
    CONNECT_CLASS = _PACKAGE + "Cast$Key"


class CastValue(Cast):
    """Cast on the record value."""

    SIDE = "value"
    CONNECT_CLASS = _PACKAGE + "Cast$Value"
