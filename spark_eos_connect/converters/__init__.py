"""Kafka Connect's converters (`key.converter`, `value.converter`, `header.converter`) in Python.

Each writes the very bytes its Connect namesake writes and reads them back into Connect data
(`spark_eos_connect.api.data`): `JsonConverter` (with `schemas.enable`, `decimal.format`,
`replace.null.with.default`, `schemas.cache.size`), `StringConverter` (`converter.encoding`),
`ByteArrayConverter`, the numeric `Short/Integer/Long/Float/DoubleConverter`, and
`SimpleHeaderConverter` for headers; and Confluent's Schema Registry converters `AvroConverter`
and `JsonSchemaConverter` (`schema.registry.url`, ...). Build them by Connect class name or
short name with `make_converter` / `make_header_converter`.
"""

from __future__ import annotations

from spark_eos_connect.converters.avro_converter import AvroConverter
from spark_eos_connect.converters.base import (
    ConnectColumn,
    Converter,
    ConverterType,
    HeaderConverter,
)
from spark_eos_connect.converters.json_converter import JsonConverter
from spark_eos_connect.converters.json_schema_converter import JsonSchemaConverter
from spark_eos_connect.converters.registry import (
    CONVERTERS,
    known_converters,
    make_converter,
    make_header_converter,
)
from spark_eos_connect.converters.simple import (
    ByteArrayConverter,
    DoubleConverter,
    FloatConverter,
    IntegerConverter,
    LongConverter,
    ShortConverter,
    SimpleHeaderConverter,
    StringConverter,
)

__all__ = [
    "CONVERTERS",
    "AvroConverter",
    "ByteArrayConverter",
    "ConnectColumn",
    "Converter",
    "ConverterType",
    "DoubleConverter",
    "FloatConverter",
    "HeaderConverter",
    "IntegerConverter",
    "JsonConverter",
    "JsonSchemaConverter",
    "LongConverter",
    "ShortConverter",
    "SimpleHeaderConverter",
    "StringConverter",
    "known_converters",
    "make_converter",
    "make_header_converter",
]
