"""TimestampConverter: between Unix epochs, formatted strings and the Date/Time/Timestamp types.

A timestamp is read (from its schema, or from its Python type when schemaless: an int is a Unix
time, a str a formatted one, a date/time/datetime a Timestamp) into epoch milliseconds, then
written as `target.type`. `format` is a `SimpleDateFormat` pattern applied in UTC, for writing
strings and for reading them; `unix.precision` scales Unix times (sub-millisecond digits are
dropped, as in Connect).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any, Final

from spark_eos_connect.api.config import ConfigDef, ConfigType, ValidString
from spark_eos_connect.api.data import (
    MS_PER_DAY,
    Date,
    Schema,
    SchemaBuilder,
    Struct,
    Time,
    Timestamp,
    Type,
)
from spark_eos_connect.errors import DataError
from spark_eos_connect.transforms._dateformat import (
    DateFormatError,
    JavaDateFormat,
    UnparseableDateError,
)
from spark_eos_connect.transforms._hashmap import JavaHashMap
from spark_eos_connect.transforms._schemas import (
    SchemaCache,
    copy_schema_basics,
    require_map,
    require_struct_or_null,
    type_name,
)
from spark_eos_connect.transforms._values import java_date_millis
from spark_eos_connect.transforms.base import KeyOrValueTransformation
from spark_eos_connect.transforms.field_edits import REPLACE_NULL_DOC, field_value
from spark_eos_connect.transforms.record import ConnectRecord

__all__ = ["TimestampConverter", "TimestampConverterKey", "TimestampConverterValue"]

_PACKAGE = "org.apache.kafka.connect.transforms."
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1
_TO_MILLIS: Final = {
    "seconds": 1000,
    "milliseconds": 1,
    "microseconds": -1000,
    "nanoseconds": -1_000_000,
}
"""Positive: multiply by it to get milliseconds; negative: divide by its absolute value."""


def _java_div(a: int, b: int) -> int:
    """Java's `a / b` on longs: the quotient truncated toward zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _saturate(value: int) -> int:
    """`TimeUnit` conversions clamp to the long range instead of overflowing."""
    return max(_LONG_MIN, min(_LONG_MAX, value))


def _unix_to_millis(value: int, precision: str) -> int:
    factor = _TO_MILLIS[precision]
    return _saturate(value * factor) if factor > 0 else _java_div(value, -factor)


def _millis_to_unix(millis: int, precision: str) -> int:
    factor = _TO_MILLIS[precision]
    return _java_div(millis, factor) if factor > 0 else _saturate(millis * -factor)


_TYPES: Final = ("string", "unix", "Date", "Time", "Timestamp")


def _type_schema(target: str, optional: bool) -> Schema:
    base = {
        "string": Schema.STRING,
        "unix": Schema.INT64,
        "Date": Date.SCHEMA,
        "Time": Time.SCHEMA,
        "Timestamp": Timestamp.SCHEMA,
    }[target]
    if not optional:
        return base
    builder = SchemaBuilder(base.type).optional()
    if base.name is not None:
        builder.name(base.name)
    if base.version is not None:
        builder.version(base.version)
    return builder.build()


def _type_from_schema(schema: Schema) -> str:
    if schema.name == Timestamp.LOGICAL_NAME:
        return "Timestamp"
    if schema.name == Date.LOGICAL_NAME:
        return "Date"
    if schema.name == Time.LOGICAL_NAME:
        return "Time"
    if schema.type is Type.STRING:
        return "string"
    if schema.type is Type.INT64:
        return "unix"
    raise DataError(f"Schema {schema!r} does not correspond to a known timestamp type format")


def _inferred_type(value: Any) -> str:
    if isinstance(value, dt.date | dt.time):
        return "Timestamp"
    if isinstance(value, int) and not isinstance(value, bool):
        return "unix"
    if isinstance(value, str):
        return "string"
    raise DataError(f"TimestampConverter does not support {type_name(value)} objects as timestamps")


class TimestampConverter(KeyOrValueTransformation):
    """Converts a timestamp field (or the whole key/value when `field` is empty)."""

    OVERVIEW = (
        "Convert timestamps between different formats such as Unix epoch, strings, and Connect "
        "Date/Time/Timestamp types; applies to one field or to the entire value."
    )
    CONFIG_DEF = (
        ConfigDef()
        .define(
            "field",
            ConfigType.STRING,
            "",
            importance="high",
            doc="The field containing the timestamp, or empty if the entire value is a timestamp.",
        )
        .define(
            "target.type",
            ConfigType.STRING,
            validator=ValidString.one_of(*_TYPES),
            importance="high",
            doc="The desired timestamp representation: string, unix, Date, Time, or Timestamp.",
        )
        .define(
            "format",
            ConfigType.STRING,
            "",
            doc="A SimpleDateFormat-compatible format for the timestamp (UTC). Used to generate "
            "the output when target.type=string or to parse the input if the input is a string.",
        )
        .define(
            "unix.precision",
            ConfigType.STRING,
            "milliseconds",
            validator=ValidString.one_of("nanoseconds", "microseconds", "milliseconds", "seconds"),
            importance="low",
            doc="The Unix precision for the timestamp: seconds, milliseconds, microseconds, or "
            "nanoseconds. Used to generate the output when target.type=unix or to parse the "
            "input if the input is an integer. Sub-millisecond components are lost.",
        )
        .define("replace.null.with.default", ConfigType.BOOLEAN, True, doc=REPLACE_NULL_DOC)
    )
    _PURPOSE = "converting timestamp formats"

    @classmethod
    def cross_check(cls, values: Mapping[str, Any], prefix: str) -> list[tuple[str, str]]:
        key = prefix + "format"
        pattern = values["format"]
        if values["target.type"] == "string" and not pattern.strip():
            return [
                (
                    key,
                    f"Missing {key}: TimestampConverter requires format option to be specified "
                    "when using string timestamps (a SimpleDateFormat pattern)",
                )
            ]
        if pattern.strip():
            try:
                JavaDateFormat(pattern)
            except DateFormatError as error:
                return [
                    (
                        key,
                        f"Invalid value {pattern!r} for {key}: TimestampConverter requires a "
                        f"SimpleDateFormat-compatible pattern ({error})",
                    )
                ]
        return []

    def setup(self, values: dict[str, Any]) -> None:
        self._field: str = values["field"]
        self._target: str = values["target.type"]
        pattern: str = values["format"]
        self._format = JavaDateFormat(pattern) if pattern.strip() else None
        self._precision: str = values["unix.precision"]
        self._defaults = bool(values["replace.null.with.default"])
        self._schemas = SchemaCache()

    # --- conversions --------------------------------------------------------------------------

    def _to_millis(self, value: Any, kind: str) -> int:
        if kind == "string":
            if not isinstance(value, str):
                raise DataError(
                    f"Expected string timestamp to be a String, but found {type_name(value)}"
                )
            if self._format is None:
                raise DataError("TimestampConverter needs the format option to parse strings")
            try:
                return self._format.parse(value)
            except UnparseableDateError:
                raise DataError(
                    f"Could not parse timestamp: value ({value}) does not match pattern "
                    f"({self._format.pattern})"
                ) from None
        if kind == "unix":
            if not isinstance(value, int) or isinstance(value, bool):
                raise DataError(
                    f"Expected Unix timestamp to be a Long, but found {type_name(value)}"
                )
            return _unix_to_millis(value, self._precision)
        if not isinstance(value, dt.date | dt.time):
            raise DataError(
                f"Expected {kind} to be a date, time or datetime, but found {type_name(value)}"
            )
        return java_date_millis(value)

    def _from_millis(self, millis: int) -> Any:
        target = self._target
        if target == "string":
            assert self._format is not None
            return self._format.format(millis)
        if target == "unix":
            return _millis_to_unix(millis, self._precision)
        if target == "Date":
            return Date.to_logical(Date.SCHEMA, millis // MS_PER_DAY)
        if target == "Time":
            return Time.to_logical(Time.SCHEMA, millis % MS_PER_DAY)
        return Timestamp.to_logical(Timestamp.SCHEMA, millis)

    def convert(self, value: Any, kind: str | None) -> Any:
        """Convert one timestamp read as `kind` (None: inferred from its type) to the target."""
        if value is None:
            return None
        return self._from_millis(self._to_millis(value, kind or _inferred_type(value)))

    # --- records ------------------------------------------------------------------------------

    def apply(self, record: ConnectRecord) -> ConnectRecord | None:
        schema = self.operating_schema(record)
        value = self.operating_value(record)
        if schema is None:
            if value is None or not self._field:
                return self.updated(record, None, self.convert(value, None))
            source = require_map(value, self._PURPOSE)
            updated = JavaHashMap.copy_of(source)
            updated.put(self._field, self.convert(source.get(self._field), None))
            return self.updated(record, None, updated.to_dict())
        if not self._field:
            new_schema = _type_schema(self._target, schema.optional)
            return self.updated(record, new_schema, self.convert(value, _type_from_schema(schema)))
        struct = require_struct_or_null(value, self._PURPOSE)
        new_schema = self._schemas.get_or_build(schema, self._converted_schema)
        return self.updated(record, new_schema, self._convert_struct(struct, new_schema))

    def _convert_struct(self, value: Struct | None, schema: Schema) -> Struct | None:
        if value is None:
            return None
        result = Struct(schema)
        for field in value.schema.fields:
            item = field_value(value, field.name, self._defaults)
            if field.name == self._field:
                item = self.convert(item, _type_from_schema(field.schema))
            result.put(field.name, item)
        return result

    def _converted_schema(self, schema: Schema) -> Schema:
        builder = copy_schema_basics(schema, SchemaBuilder.struct())
        for field in schema.fields:
            if field.name == self._field:
                builder.field(field.name, _type_schema(self._target, field.schema.optional))
            else:
                builder.field(field.name, field.schema)
        if schema.optional:
            builder.optional()
        if isinstance(schema.default_value, Struct):
            without_default = builder.build()
            builder.default_value(self._convert_struct(schema.default_value, without_default))
        return builder.build()


class TimestampConverterKey(TimestampConverter):
    """TimestampConverter on the record key."""

    SIDE = "key"
    CONNECT_CLASS = _PACKAGE + "TimestampConverter$Key"


class TimestampConverterValue(TimestampConverter):
    """TimestampConverter on the record value."""

    SIDE = "value"
    CONNECT_CLASS = _PACKAGE + "TimestampConverter$Value"
