"""The Schema Registry test double answers confluent-kafka's own client as a registry does:
register, versions, latest, lookup, by id, subjects, delete, config, compatibility (Avro's
BACKWARD/FORWARD/FULL rules), with Confluent's error codes; and the converters work against it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.error import SchemaRegistryError
from confluent_kafka.serialization import MessageField, SerializationContext

from spark_eos_connect.api.data import Schema as ConnectSchema
from spark_eos_connect.api.data import SchemaBuilder, Struct
from spark_eos_connect.converters import make_converter
from spark_eos_connect.converters.schema_registry import RegistryError
from spark_eos_connect.testing.avro_compatibility import can_read
from spark_eos_connect.testing.schema_registry import SchemaRegistryDouble

V1 = {"type": "record", "name": "R", "namespace": "n", "fields": [{"name": "a", "type": "int"}]}
V2_DEFAULT = {
    "type": "record",
    "name": "R",
    "namespace": "n",
    "fields": [
        {"name": "a", "type": "int"},
        {"name": "b", "type": "string", "default": "x"},
    ],
}
V2_NO_DEFAULT = {
    "type": "record",
    "name": "R",
    "namespace": "n",
    "fields": [{"name": "a", "type": "int"}, {"name": "b", "type": "string"}],
}


def avro(schema: Any) -> Schema:
    return Schema(json.dumps(schema), "AVRO")


@pytest.fixture
def registry() -> Iterator[SchemaRegistryDouble]:
    with SchemaRegistryDouble() as double:
        yield double


@pytest.fixture
def client(registry: SchemaRegistryDouble) -> SchemaRegistryClient:
    return SchemaRegistryClient({"url": registry.url})


def test_register_versions_latest_lookup_and_by_id(client: SchemaRegistryClient) -> None:
    first = client.register_schema("t-value", avro(V1))
    second = client.register_schema("t-value", avro(V2_DEFAULT))
    assert (first, second) == (1, 2)
    assert client.register_schema("t-value", avro(V1)) == 1
    assert client.get_versions("t-value") == [1, 2]
    latest = client.get_latest_version("t-value")
    assert (latest.schema_id, latest.version, latest.subject) == (2, 2, "t-value")
    assert json.loads(latest.schema.schema_str) == V2_DEFAULT
    assert client.get_version("t-value", 1).schema_id == 1
    assert client.lookup_schema("t-value", avro(V1)).version == 1
    assert client.get_subjects() == ["t-value"]
    fresh = SchemaRegistryClient({"url": client._rest_client.base_urls[0]})
    assert json.loads(fresh.get_schema(1).schema_str) == V1


def test_the_same_schema_under_two_subjects_shares_its_id(client: SchemaRegistryClient) -> None:
    assert client.register_schema("a-value", avro(V1)) == client.register_schema(
        "b-value", avro(V1)
    )


def test_errors_carry_confluents_codes(client: SchemaRegistryClient) -> None:
    cases = [
        (lambda: client.get_schema(42), 404, 40403),
        (lambda: client.get_latest_version("none"), 404, 40401),
        (lambda: client.lookup_schema("none", avro(V1)), 404, 40401),
    ]
    client.register_schema("t-value", avro(V1))
    cases += [
        (lambda: client.get_version("t-value", 9), 404, 40402),
        (lambda: client.lookup_schema("t-value", avro(V2_DEFAULT)), 404, 40403),
        (lambda: client.register_schema("t-value", avro(V2_NO_DEFAULT)), 409, 409),
    ]
    for call, status, code in cases:
        with pytest.raises(SchemaRegistryError) as caught:
            call()
        assert (caught.value.http_status_code, caught.value.error_code) == (status, code)


def test_backward_allows_a_field_added_with_a_default_only(client: SchemaRegistryClient) -> None:
    client.register_schema("t-value", avro(V1))
    assert client.get_compatibility() == "BACKWARD"
    assert client.test_compatibility("t-value", avro(V2_DEFAULT))
    assert not client.test_compatibility("t-value", avro(V2_NO_DEFAULT))
    with pytest.raises(SchemaRegistryError, match=r"b: reader field has no default"):
        client.register_schema("t-value", avro(V2_NO_DEFAULT))
    assert client.register_schema("t-value", avro(V2_DEFAULT)) == 2


def test_config_per_subject_and_global(client: SchemaRegistryClient) -> None:
    client.register_schema("t-value", avro(V1))
    client.set_compatibility("t-value", "NONE")
    assert client.get_compatibility("t-value") == "NONE"
    assert client.get_compatibility() == "BACKWARD"
    assert client.register_schema("t-value", avro(V2_NO_DEFAULT)) == 2
    client.set_compatibility(level="FORWARD")
    assert client.get_compatibility() == "FORWARD"
    with pytest.raises(SchemaRegistryError) as caught:
        client.set_compatibility("t-value", "SIDEWAYS")
    assert caught.value.error_code == 42203


def test_forward_and_full_check_the_other_direction(client: SchemaRegistryClient) -> None:
    client.set_compatibility("f-value", "FORWARD")
    client.register_schema("f-value", avro(V2_NO_DEFAULT))
    # FORWARD: the old schema must read new data; dropping b is fine only if old b has a default
    assert not client.test_compatibility("f-value", avro(V1))
    client.set_compatibility("full-value", "FULL")
    client.register_schema("full-value", avro(V1))
    assert client.test_compatibility("full-value", avro(V2_DEFAULT))
    assert not client.test_compatibility("full-value", avro(V2_NO_DEFAULT))


def test_delete_subject_returns_its_versions(client: SchemaRegistryClient) -> None:
    client.register_schema("t-value", avro(V1))
    assert client.delete_subject("t-value") == [1]
    assert client.get_subjects() == []


def test_avro_resolution_rules() -> None:
    assert can_read("long", "int") and not can_read("int", "long")
    assert can_read(["null", "string"], "string")
    assert not can_read("string", ["null", "string"])
    enum_old = {"type": "enum", "name": "E", "symbols": ["A"]}
    enum_new = {"type": "enum", "name": "E", "symbols": ["A", "B"]}
    assert can_read(enum_new, enum_old) and not can_read(enum_old, enum_new)
    assert can_read({"type": "array", "items": "double"}, {"type": "array", "items": "float"})
    assert not can_read({"type": "map", "values": "int"}, {"type": "map", "values": "string"})


def test_confluent_kafkas_avro_serde_round_trips_through_it(
    client: SchemaRegistryClient,
) -> None:
    serializer = AvroSerializer(client, json.dumps(V1))
    context = SerializationContext("t", MessageField.VALUE)
    data = serializer({"a": 5}, context)
    assert data is not None and data[:5] == b"\x00\x00\x00\x00\x01"
    assert AvroDeserializer(client)(data, context) == {"a": 5}


def test_the_avro_converter_through_it_refuses_an_incompatible_schema_naming_the_subject(
    registry: SchemaRegistryDouble,
) -> None:
    options = {"schema.registry.url": registry.url}
    writer = make_converter("AvroConverter", options, False)
    v1 = SchemaBuilder.struct().name("n.R").field("a", ConnectSchema.INT32).build()
    v2 = SchemaBuilder.struct().name("n.R").field("a", ConnectSchema.STRING).build()
    written = writer.from_connect_data("t", v1, Struct(v1, {"a": 1}))
    reader = make_converter("AvroConverter", options, False)
    assert reader.to_connect_data("t", written).value == Struct(v1, {"a": 1})
    with pytest.raises(RegistryError) as caught:
        writer.from_connect_data("t", v2, Struct(v2, {"a": "x"}))
    message = str(caught.value)
    assert "subject 't-value'" in message
    assert "HTTP 409" in message and "incompatible" in message
    assert registry.url in message
