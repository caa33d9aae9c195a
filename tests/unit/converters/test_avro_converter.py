"""AvroConverter against confluent-kafka's in-process `mock://` registry: fixed byte vectors,
interop with confluent-kafka's Avro serde and fastavro, exact round trips, the options, and the
errors a user sees."""

from __future__ import annotations

import datetime as dt
import decimal
import io
import itertools
import json
from typing import Any

import fastavro
import pytest
from confluent_kafka.schema_registry import Schema as RegistrySchema
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from spark_eos_connect.api.data import (
    Date,
    Decimal,
    Schema,
    SchemaBuilder,
    Struct,
    Time,
    Timestamp,
)
from spark_eos_connect.converters import AvroConverter, Converter, make_converter
from spark_eos_connect.converters.schema_registry import (
    RegistryError,
    RegistryUnreachableError,
    mock_client,
)
from spark_eos_connect.errors import ConfigError, DataError

_scopes = itertools.count()
ENUM = "io.confluent.connect.avro.Enum"

USER_AVRO = {
    "type": "record",
    "name": "User",
    "namespace": "com.example",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "name", "type": "string"},
        {"name": "email", "type": ["null", "string"], "default": None},
        {"name": "created", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {
            "name": "balance",
            "type": {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2},
        },
        {"name": "tags", "type": {"type": "array", "items": "string"}},
        {"name": "status", "type": {"type": "enum", "name": "Status", "symbols": ["A", "C"]}},
    ],
}
# magic 0, schema id 1, then id=42, name="ann", email="a@x", created=2023-11-14T22:13:20Z,
# balance=-12.50, tags=["x","y"], status=C
USER_BYTES = bytes.fromhex("00000000015406616e6e020661407880a0abfef96204fb1e04027802790002")

ITEM = SchemaBuilder.struct().name("com.example.Item").field("sku", Schema.STRING).build()
ORDER = (
    SchemaBuilder.struct()
    .name("com.example.Order")
    .version(3)
    .doc("an order")
    .parameter("owner", "sales")
    .field("id", Schema.INT64)
    .field("small", Schema.INT8)
    .field("short", Schema.INT16)
    .field("ratio", Schema.FLOAT32)
    .field("ok", Schema.BOOLEAN)
    .field("items", SchemaBuilder.array(ITEM))
    .field("price", Decimal.schema(2))
    .field("day", Date.SCHEMA)
    .field("at", Time.SCHEMA)
    .field("placed", Timestamp.SCHEMA)
    .field("attrs", SchemaBuilder.map(Schema.STRING, Schema.OPTIONAL_FLOAT64))
    .field("codes", SchemaBuilder.map(Schema.INT16, Schema.BOOLEAN))
    .field("blob", Schema.OPTIONAL_BYTES)
    .field("qty", SchemaBuilder.int32().optional().default_value(7))
    .field(
        "color",
        SchemaBuilder.string()
        .parameter(ENUM, "com.example.Color")
        .parameter(f"{ENUM}.RED", "RED")
        .parameter(f"{ENUM}.BLUE", "BLUE"),
    )
    .build()
)


def order(**changes: Any) -> Struct:
    values = {
        "id": 1,
        "small": -3,
        "short": 300,
        "ratio": 0.5,
        "ok": True,
        "items": [Struct(ITEM, {"sku": "a"}), Struct(ITEM, {"sku": "b"})],
        "price": decimal.Decimal("12.34"),
        "day": dt.date(2024, 2, 29),
        "at": dt.time(12, 30, 1, 5000),
        "placed": dt.datetime(2024, 1, 1, 8, 0, 0, 123000, tzinfo=dt.UTC),
        "attrs": {"x": 1.5, "y": None},
        "codes": {1: True, -2: False},
        "blob": b"\x00\xff",
        "qty": 7,
        "color": "BLUE",
        **changes,
    }
    return Struct(ORDER, values)


def scope() -> str:
    return f"mock://avro-test-{next(_scopes)}"


def converter(url: str, is_key: bool = False, **options: str) -> Converter:
    return make_converter(
        "io.confluent.connect.avro.AvroConverter", {"schema.registry.url": url, **options}, is_key
    )


def registry(url: str) -> Any:
    return mock_client(url)


def test_known_names_build_the_avro_converter() -> None:
    url = scope()
    for name in ("io.confluent.connect.avro.AvroConverter", "AvroConverter"):
        assert isinstance(make_converter(name, {"schema.registry.url": url}, False), AvroConverter)


def test_a_fixed_vector_with_a_known_schema_id_decodes_to_the_expected_connect_value() -> None:
    url = scope()
    assert registry(url).register_schema("users-value", RegistrySchema(json.dumps(USER_AVRO))) == 1
    result = converter(url).to_connect_data("users", USER_BYTES)
    assert result.schema is not None
    assert result.schema.name == "com.example.User"
    assert [f.name for f in result.schema.fields] == [
        "id",
        "name",
        "email",
        "created",
        "balance",
        "tags",
        "status",
    ]
    assert result.value.to_dict() == {
        "id": 42,
        "name": "ann",
        "email": "a@x",
        "created": dt.datetime(2023, 11, 14, 22, 13, 20, tzinfo=dt.UTC),
        "balance": decimal.Decimal("-12.50"),
        "tags": ["x", "y"],
        "status": "C",
    }
    status = result.schema.field("status")
    assert status is not None
    assert status.schema.parameters == {
        ENUM: "com.example.Status",
        f"{ENUM}.A": "A",
        f"{ENUM}.C": "C",
    }


def test_a_value_this_project_writes_has_the_confluent_header_and_known_avro_bytes() -> None:
    url = scope()
    schema = SchemaBuilder.struct().name("com.example.Point").field("x", Schema.INT32).build()
    written = converter(url).from_connect_data("points", schema, Struct(schema, {"x": -2}))
    assert written == bytes.fromhex("000000000103")
    registered = registry(url).get_latest_version("points-value")
    assert json.loads(registered.schema.schema_str) == {
        "type": "record",
        "name": "Point",
        "namespace": "com.example",
        "fields": [{"name": "x", "type": "int"}],
        "connect.name": "com.example.Point",
    }


def _logical_plain(value: Any) -> Any:
    """A Connect value as confluent-kafka's AvroDeserializer returns it (maps with non-string
    keys as MapEntry lists)."""
    if isinstance(value, Struct):
        return {name: _logical_plain(item) for name, item in value}
    if isinstance(value, list):
        return [_logical_plain(v) for v in value]
    if isinstance(value, dict) and any(not isinstance(k, str) for k in value):
        return [{"key": k, "value": _logical_plain(v)} for k, v in value.items()]
    if isinstance(value, dict):
        return {k: _logical_plain(v) for k, v in value.items()}
    return value


def test_values_this_project_writes_decode_with_confluent_kafka_and_fastavro_alike() -> None:
    url = scope()
    value = order()
    written = converter(url).from_connect_data("orders", ORDER, value)
    assert written is not None
    context = SerializationContext("orders", MessageField.VALUE)
    confluent = AvroDeserializer(registry(url))(written, context)
    expected = _logical_plain(value)
    assert confluent == expected
    schema_id = int.from_bytes(written[1:5], "big")
    writer = fastavro.parse_schema(json.loads(registry(url).get_schema(schema_id).schema_str))
    assert fastavro.schemaless_reader(io.BytesIO(written[5:]), writer, None) == expected


def test_values_confluent_kafka_writes_read_back_as_connect_values() -> None:
    url = scope()
    serializer = AvroSerializer(registry(url), json.dumps(USER_AVRO))
    data = {
        "id": 7,
        "name": "bo",
        "email": None,
        "created": dt.datetime(2024, 5, 1, tzinfo=dt.UTC),
        "balance": decimal.Decimal("3.10"),
        "tags": [],
        "status": "A",
    }
    written = serializer(data, SerializationContext("users", MessageField.VALUE))
    assert written is not None
    assert converter(url).to_connect_data("users", written).value.to_dict() == data


@pytest.mark.parametrize(
    ("schema", "value"),
    [
        (ORDER, order()),
        (ORDER, order(blob=None, attrs={}, codes={}, items=[])),
        (Schema.OPTIONAL_STRING, "text"),
        (Schema.INT8, -128),
        (Schema.FLOAT64, 2.5),
        (Schema.BYTES, b"\x01\x02"),
        (SchemaBuilder.array(Schema.OPTIONAL_INT64).build(), [1, None, 3]),
        (SchemaBuilder.map(Schema.INT64, Schema.STRING).build(), {1: "a", 2: "b"}),
        (SchemaBuilder.map(Schema.STRING, ITEM).build(), {"k": Struct(ITEM, {"sku": "z"})}),
        (Decimal.schema(4), decimal.Decimal("-0.0001")),
        (Timestamp.SCHEMA, dt.datetime(1969, 12, 31, 23, 59, 59, 999000, tzinfo=dt.UTC)),
        (Date.SCHEMA, dt.date(1900, 1, 1)),
        (Time.SCHEMA, dt.time(23, 59, 59, 999000)),
    ],
)
def test_round_trips_are_exact(schema: Schema, value: Any) -> None:
    url = scope()
    writer, reader = converter(url), converter(url)
    result = reader.to_connect_data("t", writer.from_connect_data("t", schema, value))
    assert result.schema == schema
    assert result.value == value


def test_null_is_a_tombstone_both_ways() -> None:
    avro = converter(scope())
    assert avro.from_connect_data("t", ORDER, None) is None
    assert avro.to_connect_data("t", None).value is None


def test_keys_use_the_key_subject_and_strategies_name_subjects() -> None:
    url = scope()
    converter(url, is_key=True).from_connect_data("t", Schema.STRING, "k")
    converter(url, **{"value.subject.name.strategy": "RecordNameStrategy"}).from_connect_data(
        "t", ORDER, order()
    )
    converter(
        url,
        **{
            "value.subject.name.strategy": (
                "io.confluent.kafka.serializers.subject.TopicRecordNameStrategy"
            )
        },
    ).from_connect_data("t", ORDER, order())
    assert sorted(registry(url).get_subjects()) == [
        "com.example.Order",
        "t-com.example.Order",
        "t-key",
    ]


def test_an_unknown_strategy_is_refused_naming_the_option() -> None:
    with pytest.raises(ConfigError, match=r"value\.converter\.value\.subject\.name\.strategy"):
        converter(scope(), **{"value.subject.name.strategy": "Nope"})


def test_the_registry_url_is_required() -> None:
    with pytest.raises(ConfigError, match=r"schema\.registry\.url"):
        make_converter("AvroConverter", {}, False)


def test_without_auto_register_an_unregistered_schema_fails_naming_the_subject() -> None:
    url = scope()
    avro = converter(url, **{"auto.register.schemas": "false"})
    with pytest.raises(RegistryError, match="subject 'orders-value'"):
        avro.from_connect_data("orders", ORDER, order())
    converter(url).from_connect_data("orders", ORDER, order())
    assert avro.from_connect_data("orders", ORDER, order()) is not None


def test_use_latest_version_writes_with_the_subjects_latest_schema() -> None:
    url = scope()
    v1 = SchemaBuilder.struct().name("com.example.P").field("x", Schema.INT32).build()
    v2 = (
        SchemaBuilder.struct()
        .name("com.example.P")
        .field("x", Schema.INT32)
        .field("y", SchemaBuilder.string().default_value("none"))
        .build()
    )
    converter(url).from_connect_data("p", v2, Struct(v2, {"x": 1, "y": "set"}))
    latest = converter(url, **{"auto.register.schemas": "false", "use.latest.version": "true"})
    written = latest.from_connect_data("p", v1, Struct(v1, {"x": 5}))
    result = converter(url).to_connect_data("p", written)
    assert result.schema == v2
    assert result.value.to_dict() == {"x": 5, "y": "none"}
    with pytest.raises(ConfigError, match=r"use\.latest\.version"):
        converter(url, **{"use.latest.version": "true"})


def test_an_unknown_schema_id_names_the_id_and_the_registrys_answer() -> None:
    with pytest.raises(RegistryError, match=r"schema with id 9.*404"):
        converter(scope()).to_connect_data("t", bytes.fromhex("000000000902"))


def test_bytes_not_in_the_wire_format_are_refused_naming_the_topic() -> None:
    avro = converter(scope())
    with pytest.raises(DataError, match="magic byte 7 in a record of topic t"):
        avro.to_connect_data("t", b"\x07\x00\x00\x00\x01\x00")
    with pytest.raises(DataError, match="shorter than"):
        avro.to_connect_data("t", b"\x00\x01")


def test_truncated_avro_is_a_data_error_naming_topic_and_schema_id() -> None:
    url = scope()
    written = converter(url).from_connect_data("t", ORDER, order())
    assert written is not None
    with pytest.raises(DataError, match="topic t with schema id 1"):
        converter(url).to_connect_data("t", written[:12])


def test_an_unreachable_registry_is_retriable_and_names_url_and_timeout() -> None:
    avro = converter("http://127.0.0.1:9", **{"schema.registry.request.timeout.ms": "2000"})
    with pytest.raises(RegistryUnreachableError, match=r"127.0.0.1:9 unreachable \(timeout 2000"):
        avro.from_connect_data("t", Schema.STRING, "x")


def test_user_info_is_never_in_the_converters_text() -> None:
    avro = converter(
        "http://127.0.0.1:9",
        **{"basic.auth.credentials.source": "USER_INFO", "basic.auth.user.info": "u:s3cret"},
    )
    assert "s3cret" not in repr(vars(avro))
    with pytest.raises(ConfigError, match="user:password"):
        converter(
            "http://127.0.0.1:9",
            **{"basic.auth.credentials.source": "USER_INFO", "basic.auth.user.info": "nocolon"},
        )


def test_a_schemaless_value_is_refused() -> None:
    with pytest.raises(DataError, match="needs a schema"):
        converter(scope()).from_connect_data("t", None, {"a": 1})


def test_schemas_are_cached_each_way() -> None:
    url = scope()
    avro = converter(url)
    first = avro.from_connect_data("t", ORDER, order())
    assert avro.to_connect_data("t", first).value == order()
    registry(url).delete_subject("t-value")  # cached ids and schemas need no registry
    assert avro.from_connect_data("t", ORDER, order()) == first
    assert avro.to_connect_data("t", first).value == order()
    with pytest.raises(RegistryError, match="id 1"):
        converter(url).to_connect_data("t", first)
