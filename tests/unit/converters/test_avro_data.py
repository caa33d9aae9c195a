"""The Connect <-> Avro schema mapping on its own: the Avro Confluent's AvroData writes for each
Connect type, and exact round trips of schemas (name, version, doc, parameters, defaults)."""

from __future__ import annotations

import datetime as dt
import decimal

import pytest

from spark_eos_connect.api.data import (
    Date,
    Decimal,
    Schema,
    SchemaBuilder,
    Time,
    Timestamp,
)
from spark_eos_connect.converters import avro_data
from spark_eos_connect.converters.avro_options import AvroDataOptions
from spark_eos_connect.errors import DataError

ENUM = "io.confluent.connect.avro.Enum"


def color() -> Schema:
    return (
        SchemaBuilder.string()
        .parameter(ENUM, "com.example.Color")
        .parameter(f"{ENUM}.RED", "RED")
        .parameter(f"{ENUM}.BLUE", "BLUE")
        .build()
    )


@pytest.mark.parametrize(
    ("schema", "avro"),
    [
        (Schema.INT8, {"type": "int", "connect.type": "int8"}),
        (Schema.INT16, {"type": "int", "connect.type": "int16"}),
        (Schema.INT32, "int"),
        (Schema.INT64, "long"),
        (Schema.FLOAT32, "float"),
        (Schema.FLOAT64, "double"),
        (Schema.BOOLEAN, "boolean"),
        (Schema.STRING, "string"),
        (Schema.BYTES, "bytes"),
        (Schema.OPTIONAL_STRING, ["null", "string"]),
        (SchemaBuilder.array(Schema.INT64).build(), {"type": "array", "items": "long"}),
        (
            SchemaBuilder.map(Schema.STRING, Schema.OPTIONAL_INT32).build(),
            {"type": "map", "values": ["null", "int"]},
        ),
        (
            Date.SCHEMA,
            {
                "type": "int",
                "logicalType": "date",
                "connect.version": 1,
                "connect.name": Date.LOGICAL_NAME,
            },
        ),
        (
            Timestamp.SCHEMA,
            {
                "type": "long",
                "logicalType": "timestamp-millis",
                "connect.version": 1,
                "connect.name": Timestamp.LOGICAL_NAME,
            },
        ),
        (
            Decimal.schema(2),
            {
                "type": "bytes",
                "logicalType": "decimal",
                "precision": 64,
                "scale": 2,
                "connect.version": 1,
                "connect.parameters": {"scale": "2"},
                "connect.name": Decimal.LOGICAL_NAME,
            },
        ),
    ],
)
def test_each_connect_type_maps_to_the_avro_confluent_writes(schema: Schema, avro: object) -> None:
    assert avro_data.from_connect_schema(schema) == avro
    assert avro_data.to_connect_schema(avro) == schema


def test_a_struct_is_a_record_with_connect_metadata_and_field_defaults() -> None:
    schema = (
        SchemaBuilder.struct()
        .name("com.example.Order")
        .version(2)
        .doc("an order")
        .parameter("owner", "sales")
        .field("id", Schema.INT64)
        .field("note", Schema.OPTIONAL_STRING)
        .field("qty", SchemaBuilder.int32().default_value(1))
        .build()
    )
    assert avro_data.from_connect_schema(schema) == {
        "type": "record",
        "name": "Order",
        "namespace": "com.example",
        "fields": [
            {"name": "id", "type": "long"},
            {"name": "note", "type": ["null", "string"], "default": None},
            {"name": "qty", "type": {"type": "int", "connect.default": 1}, "default": 1},
        ],
        "connect.doc": "an order",
        "connect.version": 2,
        "connect.parameters": {"owner": "sales"},
        "connect.name": "com.example.Order",
    }


def test_an_unnamed_struct_is_connect_default_and_reads_back_unnamed() -> None:
    schema = SchemaBuilder.struct().field("a", Schema.INT32).build()
    avro = avro_data.from_connect_schema(schema)
    assert (avro["namespace"], avro["name"]) == ("io.confluent.connect.avro", "ConnectDefault")
    assert avro_data.to_connect_schema(avro) == schema


def test_a_map_with_non_string_keys_is_an_array_of_map_entries() -> None:
    schema = SchemaBuilder.map(Schema.INT16, Schema.BOOLEAN).build()
    avro = avro_data.from_connect_schema(schema)
    assert avro == {
        "type": "array",
        "items": {
            "type": "record",
            "name": "MapEntry",
            "namespace": "io.confluent.connect.avro",
            "fields": [
                {"name": "key", "type": {"type": "int", "connect.type": "int16"}},
                {"name": "value", "type": "boolean"},
            ],
        },
    }
    assert avro_data.to_connect_schema(avro) == schema
    datum = avro_data.from_connect_value(schema, {1: True, -2: False})
    assert datum == [{"key": 1, "value": True}, {"key": -2, "value": False}]
    assert avro_data.to_connect_value(schema, datum) == {1: True, -2: False}


def test_an_enum_string_is_an_avro_string_by_default_and_an_enum_with_the_enhanced_option() -> None:
    assert avro_data.from_connect_schema(color()) == {
        "type": "string",
        "connect.parameters": dict(color().parameters or {}),
    }
    assert avro_data.to_connect_schema(avro_data.from_connect_schema(color())) == color()
    avro = avro_data.from_connect_schema(color(), AvroDataOptions(enhanced=True))
    assert avro["type"] == "enum"
    assert (avro["name"], avro["namespace"], avro["symbols"]) == (
        "Color",
        "com.example",
        ["RED", "BLUE"],
    )
    # an Avro enum reads as a STRING named by the enum
    assert avro_data.to_connect_schema(avro) == (
        SchemaBuilder.string()
        .parameters(color().parameters or {})
        .name("com.example.Color")
        .build()
    )
    plain = {"type": "enum", "name": "Suit", "symbols": ["HEARTS", "SPADES"]}
    assert avro_data.to_connect_schema(plain).parameters == {
        ENUM: "Suit",
        f"{ENUM}.HEARTS": "HEARTS",
        f"{ENUM}.SPADES": "SPADES",
    }


def test_plain_avro_logical_types_read_as_connect_logical_types() -> None:
    assert avro_data.to_connect_schema({"type": "int", "logicalType": "date"}) == Date.SCHEMA
    assert avro_data.to_connect_schema({"type": "int", "logicalType": "time-millis"}) == Time.SCHEMA
    decimal_schema = avro_data.to_connect_schema(
        {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 3}
    )
    assert decimal_schema.name == Decimal.LOGICAL_NAME
    assert decimal_schema.parameters == {"scale": "3", "connect.decimal.precision": "10"}


def test_a_named_struct_used_twice_is_defined_once_then_referenced() -> None:
    address = SchemaBuilder.struct().name("com.example.Address").field("zip", Schema.STRING)
    schema = (
        SchemaBuilder.struct()
        .name("com.example.Person")
        .field("home", address)
        .field("work", address.build())
        .build()
    )
    avro = avro_data.from_connect_schema(schema)
    assert avro["fields"][0]["type"]["name"] == "Address"
    assert avro["fields"][1]["type"] == "Address"  # Avro writes it relative to com.example
    assert avro_data.to_connect_schema(avro) == schema


def test_defaults_of_every_kind_round_trip() -> None:
    item = SchemaBuilder.struct().name("com.example.Item").field("sku", Schema.STRING).build()
    schema = (
        SchemaBuilder.struct()
        .name("com.example.Defaults")
        .field("blob", SchemaBuilder.bytes().default_value(b"\x00\xff"))
        .field("price", Decimal.builder(2).default_value(decimal.Decimal("1.50")))
        .field("day", Date.builder().default_value(dt.date(2020, 1, 2)))
        .field("tags", SchemaBuilder.array(Schema.STRING).default_value(["a"]))
        .field("attrs", SchemaBuilder.map(Schema.STRING, Schema.INT32).default_value({"k": 1}))
        .field("item", SchemaBuilder.array(item).optional().default_value([]))
        .field("color", color())
        .build()
    )
    assert avro_data.to_connect_schema(avro_data.from_connect_schema(schema)) == schema


def test_a_value_that_does_not_match_its_schema_is_a_data_error() -> None:
    schema = SchemaBuilder.struct().field("a", Schema.INT8).build()
    with pytest.raises(DataError, match="type STRUCT"):
        avro_data.from_connect_value(schema, {"a": 1})
    with pytest.raises(DataError, match=r"int in \[-128, 127\]"):
        avro_data.from_connect_value(Schema.INT8, 300)
    with pytest.raises(DataError, match="non-optional"):
        avro_data.from_connect_value(Schema.STRING, None)


def test_a_union_of_more_than_null_and_one_type_is_a_union_struct() -> None:
    schema = avro_data.to_connect_schema(["null", "int", "string"])
    assert schema == (
        SchemaBuilder.struct()
        .name("io.confluent.connect.avro.Union")
        .field("int", Schema.OPTIONAL_INT32)
        .field("string", Schema.OPTIONAL_STRING)
        .optional()
        .build()
    )
    assert avro_data.from_connect_schema(schema) == ["null", "int", "string"]
