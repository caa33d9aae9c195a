"""Connect's plain converters: strings, raw bytes, big-endian numbers, and header text.

- `StringConverter` (`org.apache.kafka.connect.storage.StringConverter`): text in
  `converter.encoding` (default UTF-8); other values are written as Java's `toString` would
  write them (`true`, `1.0`, `[a, b]`, `{k=v}`, `Struct{a=1}`). Characters the encoding cannot
  hold become `?`, as in Java. Reading decodes strictly: bytes that are not valid text fail the
  record (Java would put U+FFFD in their place).
- `ByteArrayConverter` (`org.apache.kafka.connect.converters.ByteArrayConverter`): bytes as is.
- `ShortConverter`, `IntegerConverter`, `LongConverter`, `FloatConverter`, `DoubleConverter`
  (`org.apache.kafka.connect.converters.*`): one number, big-endian, as Kafka's serializers.
- `SimpleHeaderConverter` (`org.apache.kafka.connect.storage.SimpleHeaderConverter`, Connect's
  default `header.converter`): header values as UTF-8 text in `Values`' forms (see `values`).
"""

from __future__ import annotations

import codecs
import datetime as dt
import decimal
import logging
import struct
from collections.abc import Mapping
from typing import Any, ClassVar

import pyarrow as pa

from spark_eos_connect.api.config import ConfigDef, ConfigType
from spark_eos_connect.api.data import Schema, SchemaAndValue, Struct, Type
from spark_eos_connect.converters import _java, values
from spark_eos_connect.converters.base import (
    ConnectColumn,
    Converter,
    ConverterType,
    HeaderConverter,
)
from spark_eos_connect.errors import ConfigError, DataError

__all__ = [
    "ByteArrayConverter",
    "DoubleConverter",
    "FloatConverter",
    "IntegerConverter",
    "LongConverter",
    "ShortConverter",
    "SimpleHeaderConverter",
    "StringConverter",
]

log = logging.getLogger(__name__)

ENCODING = "converter.encoding"
_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def _java_date_string(value: dt.date | dt.time) -> str:
    """`java.util.Date.toString` in UTC (`Thu Jan 01 00:00:00 UTC 1970`)."""
    if isinstance(value, dt.datetime):
        moment = value if value.tzinfo is not None else value.replace(tzinfo=dt.UTC)
        moment = moment.astimezone(dt.UTC)
    elif isinstance(value, dt.date):
        moment = dt.datetime(value.year, value.month, value.day, tzinfo=dt.UTC)
    else:
        moment = dt.datetime.combine(dt.date(1970, 1, 1), value.replace(tzinfo=None))
    return (
        f"{_DAYS[moment.weekday()]} {_MONTHS[moment.month - 1]} {moment.day:02d} "
        f"{moment:%H:%M:%S} UTC {moment.year}"
    )


def java_to_string(schema: Schema | None, value: Any) -> str:
    """What Java's `toString` gives for the Connect value (as StringConverter writes it)."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if schema is not None and schema.type is Type.FLOAT32:
            return _java.float_to_string(_java.float32(value))
        return _java.double_to_string(value)
    if isinstance(value, decimal.Decimal):
        return _java.decimal_to_string(value)
    if isinstance(value, dt.date | dt.time):
        return _java_date_string(value)
    if isinstance(value, list | tuple):
        element = schema.value_schema if schema is not None else None
        return "[" + ", ".join(java_to_string(element, v) for v in value) + "]"
    if isinstance(value, Mapping):
        keys = schema.key_schema if schema is not None else None
        items = schema.value_schema if schema is not None else None
        return (
            "{"
            + ", ".join(
                f"{java_to_string(keys, k)}={java_to_string(items, v)}" for k, v in value.items()
            )
            + "}"
        )
    if isinstance(value, Struct):
        shown = ",".join(
            f"{f.name}={java_to_string(f.schema, v)}"
            for f in value.schema.fields
            if (v := value.get_without_default(f.name)) is not None
        )
        return f"Struct{{{shown}}}"
    if value is None:
        return "null"
    raise DataError(
        f"StringConverter cannot write a {type(value).__name__} (Java would write the object's "
        "identity); use ByteArrayConverter for bytes"
    )


class StringConverter(Converter):
    """Text in `converter.encoding`; the value's Java `toString` for non-strings."""

    config_def: ClassVar[ConfigDef] = ConfigDef().define(
        ENCODING,
        ConfigType.STRING,
        "UTF-8",
        None,
        "high",
        "The name of the Java character set to use for encoding strings as byte arrays.",
    )

    def configure(
        self, configs: Mapping[str, Any], converter_type: ConverterType, prefix: str = ""
    ) -> None:
        """Read `converter.encoding` and check Python knows the character set."""
        super().configure(configs, converter_type, prefix)
        self.encoding = str(self._options[ENCODING])
        try:
            self._codec = codecs.lookup(self.encoding).name
        except LookupError:
            raise ConfigError(
                f"Invalid value {self.encoding!r} for configuration {prefix}{ENCODING}: unknown "
                "character set"
            ) from None

    def _encode(self, text: str) -> bytes:
        if self._codec == "utf-16":  # Java writes a big-endian byte order mark
            return codecs.BOM_UTF16_BE + text.encode("utf-16-be", errors="replace")
        return text.encode(self._codec, errors="replace")

    def _decode(self, data: bytes) -> str:
        if self._codec == "utf-16" and not data.startswith(codecs.BOM_UTF16_LE):
            return data.removeprefix(codecs.BOM_UTF16_BE).decode("utf-16-be")
        return data.decode(self._codec)

    def from_connect_data(self, topic: str, schema: Schema | None, value: Any) -> bytes | None:
        """The text's bytes; None for None."""
        if value is None:
            return None
        return self._encode(java_to_string(schema, value))

    def to_connect_data(self, topic: str, data: bytes | None) -> SchemaAndValue:
        """An optional string."""
        if data is None:
            return SchemaAndValue(Schema.OPTIONAL_STRING, None)
        try:
            return SchemaAndValue(Schema.OPTIONAL_STRING, self._decode(data))
        except UnicodeDecodeError as error:
            raise DataError(f"Failed to deserialize string as {self.encoding}: {error}") from None

    def to_connect_column(self, topic: str, data: pa.Array) -> ConnectColumn:
        """Optional strings; UTF-8 is decoded by Arrow (raises on bytes that are not UTF-8)."""
        if self._codec == "utf-8":
            texts = data.cast(pa.string()).to_pylist()
        else:
            texts = [None if item is None else self._decode(item) for item in data.to_pylist()]
        return [Schema.OPTIONAL_STRING] * len(texts), texts


class ByteArrayConverter(Converter):
    """Bytes unchanged; the schema, if any, must be BYTES."""

    def from_connect_data(self, topic: str, schema: Schema | None, value: Any) -> bytes | None:
        """The bytes themselves."""
        if schema is not None and schema.type is not Type.BYTES:
            raise DataError(f"Invalid schema type for ByteArrayConverter: {schema.type.name}")
        if value is not None and not isinstance(value, bytes | bytearray):
            raise DataError(
                f"ByteArrayConverter is not compatible with objects of type {type(value).__name__}"
            )
        return None if value is None else bytes(value)

    def to_connect_data(self, topic: str, data: bytes | None) -> SchemaAndValue:
        """Optional bytes."""
        return SchemaAndValue(Schema.OPTIONAL_BYTES, data)

    def to_connect_column(self, topic: str, data: pa.Array) -> ConnectColumn:
        """Optional bytes, the column's as they are."""
        return [Schema.OPTIONAL_BYTES] * len(data), data.to_pylist()


class _NumberConverter(Converter):
    """One big-endian number; `struct` format and Connect's type name per subclass."""

    type_name: ClassVar[str]
    layout: ClassVar[str]
    schema: ClassVar[Schema]

    def from_connect_data(self, topic: str, schema: Schema | None, value: Any) -> bytes | None:
        """The number's bytes; None for None."""
        if value is None:
            return None
        integral = self.schema.type in (Type.INT16, Type.INT32, Type.INT64)
        accepted = int if integral else int | float
        if isinstance(value, bool) or not isinstance(value, accepted):
            raise DataError(f"Failed to serialize to {self.type_name} (was {type(value).__name__})")
        try:
            return struct.pack(self.layout, value)
        except (struct.error, OverflowError) as error:
            raise DataError(f"Failed to serialize {value!r} to {self.type_name}: {error}") from None

    def to_connect_data(self, topic: str, data: bytes | None) -> SchemaAndValue:
        """The number (None for None)."""
        if data is None:
            return SchemaAndValue(self.schema, None)
        size = struct.calcsize(self.layout)
        if len(data) != size:
            raise DataError(
                f"Failed to deserialize {self.type_name}: size of data received is "
                f"{len(data)}, not {size}"
            )
        return SchemaAndValue(self.schema, struct.unpack(self.layout, data)[0])


class ShortConverter(_NumberConverter):
    """INT16, 2 bytes."""

    type_name, layout, schema = "short", ">h", Schema.OPTIONAL_INT16


class IntegerConverter(_NumberConverter):
    """INT32, 4 bytes."""

    type_name, layout, schema = "integer", ">i", Schema.OPTIONAL_INT32


class LongConverter(_NumberConverter):
    """INT64, 8 bytes."""

    type_name, layout, schema = "long", ">q", Schema.OPTIONAL_INT64


class FloatConverter(_NumberConverter):
    """FLOAT32, 4 bytes IEEE 754."""

    type_name, layout, schema = "float", ">f", Schema.OPTIONAL_FLOAT32


class DoubleConverter(_NumberConverter):
    """FLOAT64, 8 bytes IEEE 754."""

    type_name, layout, schema = "double", ">d", Schema.OPTIONAL_FLOAT64


class SimpleHeaderConverter(HeaderConverter):
    """Header values as UTF-8 text; reading infers the schema from the text."""

    def from_connect_header(
        self, topic: str, header_key: str, schema: Schema | None, value: Any
    ) -> bytes | None:
        """`Values.convertToString` as UTF-8 (lone surrogates become `?`)."""
        text = values.to_string(schema, value)
        return None if text is None else text.encode("utf-8", errors="replace")

    def to_connect_header(self, topic: str, header_key: str, data: bytes | None) -> SchemaAndValue:
        """`Values.parseString` of the text; bytes that do not parse stay bytes."""
        if data is None:
            return SchemaAndValue.NULL
        text = data.decode("utf-8", errors="replace")
        try:
            return values.parse_string(text)
        except (DataError, ValueError, OverflowError) as error:
            log.warning(
                "Failed to deserialize value for header '%s' on topic '%s', so using byte "
                "array: %s",
                header_key,
                topic,
                error,
            )
            return SchemaAndValue(Schema.BYTES, data)
