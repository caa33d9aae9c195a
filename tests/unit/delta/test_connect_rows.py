"""DeltaSink's columns from Schema Registry converters' schemas (no Spark session): Connect types
as Spark types, versions merged by field name, and the options refused with a reason."""

from __future__ import annotations

import pytest
from pyspark.sql import types as T

from spark_eos_connect.api.data import Date, Decimal, Schema, SchemaBuilder, Time, Timestamp
from spark_eos_connect.delta.config import parse_delta_config
from spark_eos_connect.delta.connect_rows import registry_converter, spark_type, value_columns
from spark_eos_connect.errors import ConfigError, DataError


def test_connect_types_become_spark_types() -> None:
    schema = (
        SchemaBuilder.struct()
        .field("a", Schema.INT8)
        .field("b", Schema.INT64)
        .field("c", Schema.OPTIONAL_FLOAT32)
        .field("d", Decimal.schema(2))
        .field("e", Date.SCHEMA)
        .field("f", Time.SCHEMA)
        .field("g", Timestamp.SCHEMA)
        .field("h", SchemaBuilder.array(Schema.BYTES))
        .field("i", SchemaBuilder.map(Schema.INT32, Schema.STRING))
        .build()
    )
    assert spark_type(schema).simpleString() == (
        "struct<a:tinyint,b:bigint,c:float,d:decimal(38,2),e:date,f:int,g:timestamp,"
        "h:array<binary>,i:map<int,string>>"
    )


def test_versions_merge_by_name_and_a_type_change_is_refused() -> None:
    v1 = SchemaBuilder.struct().field("line", Schema.STRING).build()
    v2 = SchemaBuilder.struct().field("line", Schema.STRING).field("n", Schema.INT32).build()
    merged = value_columns([v1, v2])
    assert merged.fieldNames() == ["line", "n"]
    assert all(f.nullable for f in merged.fields)
    assert value_columns([Schema.STRING]) == T.StructType([T.StructField("value", T.StringType())])
    bad = SchemaBuilder.struct().field("line", Schema.INT64).build()
    with pytest.raises(DataError, match="'line' is string in one schema"):
        value_columns([v1, bad])
    with pytest.raises(DataError, match="_kafka_"):
        value_columns([SchemaBuilder.struct().field("_kafka_offset", Schema.INT64).build()])


def test_only_registry_converters_and_not_with_value_schema() -> None:
    with pytest.raises(ConfigError, match="only for the Schema Registry converters"):
        registry_converter({"value.converter": "JsonConverter"})
    found = registry_converter(
        {"value.converter": "AvroConverter", "value.converter.schema.registry.url": "mock://d"}
    )
    assert type(found).__name__ == "AvroConverter"
    with pytest.raises(ConfigError, match="not both"):
        parse_delta_config(
            {"name": "d", "path": "/t", "value.schema": "a INT", "value.converter": "AvroConverter"}
        )
