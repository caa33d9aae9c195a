"""JsonSchemaConverter against the `mock://` registry: the JSON Schema it registers, its bytes,
exact round trips, and reading what confluent-kafka's JSONSerializer-shaped bytes hold."""

from __future__ import annotations

import datetime as dt
import decimal
import itertools
import json
from typing import Any

import pytest
from confluent_kafka.schema_registry import Schema as RegistrySchema

from spark_eos_connect.api.data import (
    Date,
    Decimal,
    Schema,
    SchemaBuilder,
    Struct,
    Timestamp,
)
from spark_eos_connect.converters import JsonSchemaConverter, make_converter
from spark_eos_connect.converters.schema_registry import mock_client
from spark_eos_connect.errors import DataError

_scopes = itertools.count()

ORDER = (
    SchemaBuilder.struct()
    .name("com.example.Order")
    .version(1)
    .doc("an order")
    .field("id", Schema.INT64)
    .field("small", Schema.INT8)
    .field("price", Decimal.schema(2))
    .field("day", Date.SCHEMA)
    .field("placed", Timestamp.SCHEMA)
    .field("tags", SchemaBuilder.array(Schema.STRING))
    .field("attrs", SchemaBuilder.map(Schema.STRING, Schema.OPTIONAL_FLOAT64))
    .field("codes", SchemaBuilder.map(Schema.INT32, Schema.BOOLEAN))
    .field("blob", Schema.OPTIONAL_BYTES)
    .field("qty", SchemaBuilder.int32().optional().default_value(3))
    .build()
)


def order() -> Struct:
    return Struct(
        ORDER,
        {
            "id": 9,
            "small": 1,
            "price": decimal.Decimal("10.05"),
            "day": dt.date(2024, 3, 1),
            "placed": dt.datetime(2024, 3, 1, 12, tzinfo=dt.UTC),
            "tags": ["a"],
            "attrs": {"w": 0.25},
            "codes": {7: True},
            "blob": b"\xfe",
            "qty": 3,
        },
    )


def converter(url: str, **options: str) -> Any:
    return make_converter(
        "io.confluent.connect.json.JsonSchemaConverter",
        {"schema.registry.url": url, **options},
        False,
    )


def scope() -> str:
    return f"mock://json-schema-test-{next(_scopes)}"


def test_both_names_build_it() -> None:
    assert isinstance(converter(scope()), JsonSchemaConverter)
    made = make_converter("JsonSchemaConverter", {"schema.registry.url": scope()}, True)
    assert isinstance(made, JsonSchemaConverter)


def test_it_registers_a_json_schema_and_writes_framed_json() -> None:
    url = scope()
    written = converter(url).from_connect_data("orders", ORDER, order())
    assert written is not None
    assert written[:5] == b"\x00\x00\x00\x00\x01"
    assert json.loads(written[5:]) == {
        "id": 9,
        "small": 1,
        "price": 10.05,
        "day": 19783,
        "placed": 1709294400000,
        "tags": ["a"],
        "attrs": {"w": 0.25},
        "codes": [{"key": 7, "value": True}],
        "blob": "/g==",
        "qty": 3,
    }
    assert b'"price":10.05' in written
    registered = mock_client(url).get_latest_version("orders-value").schema
    assert registered.schema_type == "JSON"
    node = json.loads(registered.schema_str)
    assert (node["type"], node["title"], node["description"]) == (
        "object",
        "com.example.Order",
        "an order",
    )
    assert node["properties"]["small"] == {
        "type": "integer",
        "connect.type": "int8",
        "connect.index": 1,
    }
    assert node["properties"]["blob"]["oneOf"][0] == {"type": "null"}


@pytest.mark.parametrize(
    ("schema", "value"),
    [
        (ORDER, None),
        (Schema.OPTIONAL_STRING, "x"),
        (SchemaBuilder.array(Schema.FLOAT32).build(), [1.5, -2.0]),
        (Decimal.schema(3), decimal.Decimal("-1.250")),
    ],
)
def test_round_trips_are_exact(schema: Schema, value: Any) -> None:
    url = scope()
    value = order() if value is None else value
    written = converter(url).from_connect_data("t", schema, value)
    result = converter(url).to_connect_data("t", written)
    assert result.schema == schema
    assert result.value == value


def test_a_plain_json_schema_registered_elsewhere_reads_as_connect_data() -> None:
    url = scope()
    schema = {
        "type": "object",
        "title": "Person",
        "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
    }
    schema_id = mock_client(url).register_schema(
        "people-value", RegistrySchema(json.dumps(schema), "JSON")
    )
    data = b"\x00" + schema_id.to_bytes(4, "big") + b'{"name":"ann","age":41}'
    result = converter(url).to_connect_data("people", data)
    assert result.schema is not None and result.schema.name == "Person"
    assert result.value.to_dict() == {"name": "ann", "age": 41}


def test_an_avro_schema_id_is_refused_naming_its_type() -> None:
    url = scope()
    schema_id = mock_client(url).register_schema("x-value", RegistrySchema('"string"', "AVRO"))
    with pytest.raises(DataError, match="AVRO schema, not a JSON Schema"):
        converter(url).to_connect_data("x", b"\x00" + schema_id.to_bytes(4, "big") + b'"a"')


# --- confluent-kafka's own JSON Schema serde (needs the jsonschema package) -------------------

PERSON_JSON_SCHEMA = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "title": "Person",
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "age": {"type": "integer"},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["name", "age"],
}


def test_what_confluent_kafkas_json_serializer_writes_reads_as_connect_data() -> None:
    from confluent_kafka.schema_registry.json_schema import JSONSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    url = scope()
    serializer = JSONSerializer(json.dumps(PERSON_JSON_SCHEMA), mock_client(url))
    context = SerializationContext("people", MessageField.VALUE)
    written = serializer({"name": "ann", "age": 41, "tags": ["a"]}, context)
    result = converter(url).to_connect_data("people", written)
    assert result.value.get("name") == "ann"
    assert result.value.get("age") == 41
    assert result.value.get("tags") == ["a"]
    with pytest.raises(Exception, match="is a required property"):
        serializer({"name": "no age"}, context)  # the serializer validates: jsonschema works


def test_confluent_kafkas_json_deserializer_reads_what_the_converter_writes() -> None:
    from confluent_kafka.schema_registry.json_schema import JSONDeserializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    url = scope()
    written = converter(url).from_connect_data("orders", ORDER, order())
    deserializer = JSONDeserializer(None, schema_registry_client=mock_client(url))
    decoded = deserializer(written, SerializationContext("orders", MessageField.VALUE))
    assert decoded["id"] == order().get("id")
    assert decoded["tags"] == order().get("tags")
