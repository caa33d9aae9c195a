"""The schema text AvroConverter registers, byte for byte, against what Confluent's AvroData
(with its default options unless a case says otherwise) and Avro's `Schema.toString()` write;
the AvroData options; general unions both ways; a subject Confluent's converter registered first.

Each expected text below was worked out from Confluent's AvroData rules (property order doc,
version, parameters, default, name, type; logical types after them; record docs from
parameters) and Avro's writer (namespaces relative to the enclosing one, a named type in full
once then by name, Java's float text)."""

from __future__ import annotations

import io
import itertools
import json

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
from spark_eos_connect.converters import AvroConverter, make_converter
from spark_eos_connect.converters.avro_data import schema_text_of, wire_schema
from spark_eos_connect.converters.avro_json import java_double, java_float
from spark_eos_connect.converters.avro_options import AvroDataOptions
from spark_eos_connect.converters.schema_registry import frame, mock_client
from spark_eos_connect.errors import ConfigError, DataError

ENUM = "io.confluent.connect.avro.Enum"
UNION = "io.confluent.connect.avro.Union"
_scopes = itertools.count()

SUIT = (
    SchemaBuilder.string()
    .name("cards.Suit")
    .parameter(ENUM, "cards.Suit")
    .parameter(f"{ENUM}.CLUBS", "CLUBS")
    .parameter(f"{ENUM}.HEARTS", "HEARTS")
    .build()
)
POINT = SchemaBuilder.struct().name("geo.Point").field("x", Schema.INT32).optional().build()
PAIR = (
    SchemaBuilder.struct()
    .name(UNION)
    .field("int", Schema.OPTIONAL_INT32)
    .field("string", Schema.OPTIONAL_STRING)
    .field("Point", POINT)
    .build()
)
ANON = SchemaBuilder.struct().field("n", Schema.INT64).optional().build()

SUIT_PARAMS = (
    '{"io.confluent.connect.avro.Enum":"cards.Suit",'
    '"io.confluent.connect.avro.Enum.CLUBS":"CLUBS",'
    '"io.confluent.connect.avro.Enum.HEARTS":"HEARTS"}'
)
CASES: list[tuple[str, Schema, AvroDataOptions, str]] = [
    (
        "enum-marked string, default options",
        SUIT,
        AvroDataOptions(),
        '{"type":"string","connect.parameters":' + SUIT_PARAMS + ',"connect.name":"cards.Suit"}',
    ),
    (
        "enum-marked string, enhanced.avro.schema.support",
        SUIT,
        AvroDataOptions(enhanced=True),
        '{"type":"enum","name":"Suit","namespace":"cards","symbols":["CLUBS","HEARTS"],'
        '"connect.parameters":' + SUIT_PARAMS + ',"connect.name":"cards.Suit"}',
    ),
    (
        "optional enum-marked field with a default, in a record",
        SchemaBuilder.struct()
        .name("cards.Card")
        .field(
            "suit",
            SchemaBuilder.string()
            .parameter(ENUM, "cards.Suit")
            .parameter(f"{ENUM}.CLUBS", "CLUBS")
            .optional()
            .default_value("CLUBS"),
        )
        .build(),
        AvroDataOptions(),
        '{"type":"record","name":"Card","namespace":"cards","fields":[{"name":"suit","type":'
        '[{"type":"string","connect.parameters":{"io.confluent.connect.avro.Enum":"cards.Suit",'
        '"io.confluent.connect.avro.Enum.CLUBS":"CLUBS"},"connect.default":"CLUBS"},"null"],'
        '"default":"CLUBS"}],"connect.name":"cards.Card"}',
    ),
    (
        "union struct: an Avro union of its fields",
        PAIR,
        AvroDataOptions(),
        '["int","string",{"type":"record","name":"Point","namespace":"geo","fields":'
        '[{"name":"x","type":"int"}],"connect.name":"geo.Point"}]',
    ),
    (
        "optional union struct: null first",
        SchemaBuilder.struct()
        .name(UNION)
        .field("long", Schema.OPTIONAL_INT64)
        .field("boolean", Schema.OPTIONAL_BOOLEAN)
        .optional()
        .build(),
        AvroDataOptions(),
        '["null","long","boolean"]',
    ),
    (
        "nested optionals: unnamed structs numbered, reused by reference",
        SchemaBuilder.struct()
        .field("first", ANON)
        .field("many", SchemaBuilder.array(ANON))
        .field("note", SchemaBuilder.string().optional().doc("free text"))
        .build(),
        AvroDataOptions(),
        '{"type":"record","name":"ConnectDefault","namespace":"io.confluent.connect.avro",'
        '"fields":[{"name":"first","type":["null",{"type":"record","name":"ConnectDefault2",'
        '"fields":[{"name":"n","type":"long"}]}],"default":null},{"name":"many","type":'
        '{"type":"array","items":["null","ConnectDefault2"]}},{"name":"note","type":["null",'
        '{"type":"string","connect.doc":"free text"}],"default":null}]}',
    ),
    (
        "record doc and version: connect.doc, not the Avro doc; field docs from parameters",
        SchemaBuilder.struct()
        .name("shop.Order")
        .version(3)
        .doc("an order")
        .parameter("io.confluent.connect.avro.record.doc", "avro doc")
        .parameter("io.confluent.connect.avro.field.doc.id", "the id")
        .field("id", Schema.INT64)
        .build(),
        AvroDataOptions(),
        '{"type":"record","name":"Order","namespace":"shop","doc":"avro doc","fields":'
        '[{"name":"id","type":"long","doc":"the id"}],"connect.doc":"an order",'
        '"connect.version":3,"connect.parameters":{"io.confluent.connect.avro.record.doc":'
        '"avro doc","io.confluent.connect.avro.field.doc.id":"the id"},'
        '"connect.name":"shop.Order"}',
    ),
    (
        "logical types",
        SchemaBuilder.struct()
        .name("t.Logical")
        .field("price", Decimal.schema(2))
        .field("day", Date.SCHEMA)
        .field("at", Time.SCHEMA)
        .field("ts", SchemaBuilder.int64().name(Timestamp.LOGICAL_NAME).version(1).optional())
        .build(),
        AvroDataOptions(),
        '{"type":"record","name":"Logical","namespace":"t","fields":[{"name":"price","type":'
        '{"type":"bytes","scale":2,"precision":64,"connect.version":1,"connect.parameters":'
        '{"scale":"2"},"connect.name":"org.apache.kafka.connect.data.Decimal","logicalType":'
        '"decimal"}},{"name":"day","type":{"type":"int","connect.version":1,"connect.name":'
        '"org.apache.kafka.connect.data.Date","logicalType":"date"}},{"name":"at","type":'
        '{"type":"int","connect.version":1,"connect.name":"org.apache.kafka.connect.data.Time",'
        '"logicalType":"time-millis"}},{"name":"ts","type":["null",{"type":"long",'
        '"connect.version":1,"connect.name":"org.apache.kafka.connect.data.Timestamp",'
        '"logicalType":"timestamp-millis"}],"default":null}],"connect.name":"t.Logical"}',
    ),
    (
        "decimal with a precision and a scale above it: the legacy form",
        Decimal.builder(5).parameter("connect.decimal.precision", "3").build(),
        AvroDataOptions(),
        '{"type":"bytes","scale":5,"precision":3,"connect.version":1,"connect.parameters":'
        '{"scale":"5","connect.decimal.precision":"3"},"connect.name":'
        '"org.apache.kafka.connect.data.Decimal","logicalType":"decimal"}',
    ),
    (
        "map with non-string keys: MapEntry records; int8 keys with connect.type",
        SchemaBuilder.map(Schema.INT8, Schema.OPTIONAL_STRING).build(),
        AvroDataOptions(),
        '{"type":"array","items":{"type":"record","name":"MapEntry","namespace":'
        '"io.confluent.connect.avro","fields":[{"name":"key","type":{"type":"int",'
        '"connect.type":"int8"}},{"name":"value","type":["null","string"],"default":null}]}}',
    ),
    (
        "named map with non-string keys: a record of that name, marked MapEntry",
        SchemaBuilder.map(Schema.INT64, Schema.INT64).name("m.Counts").build(),
        AvroDataOptions(),
        '{"type":"array","items":{"type":"record","name":"Counts","namespace":"m","fields":'
        '[{"name":"key","type":"long"},{"name":"value","type":"long"}],'
        '"connect.internal.type":"MapEntry"},"connect.name":"m.Counts"}',
    ),
    (
        "map with optional string keys, allow.optional.map.keys",
        SchemaBuilder.map(Schema.OPTIONAL_STRING, Schema.INT32).build(),
        AvroDataOptions(allow_optional_map_keys=True),
        '{"type":"map","values":"int"}',
    ),
    (
        "defaults: Java float text, bytes as ISO-8859-1, connect.default on the type",
        SchemaBuilder.struct()
        .field("f", SchemaBuilder.float32().default_value(0.1))
        .field("d", SchemaBuilder.float64().default_value(1e-5))
        .field("b", SchemaBuilder.bytes().default_value(b"\x01\xe9"))
        .build(),
        AvroDataOptions(),
        '{"type":"record","name":"ConnectDefault","namespace":"io.confluent.connect.avro",'
        '"fields":[{"name":"f","type":{"type":"float","connect.default":0.1},"default":0.1},'
        '{"name":"d","type":{"type":"double","connect.default":1.0E-5},"default":1.0E-5},'
        '{"name":"b","type":{"type":"bytes","connect.default":"\\u0001é"},"default":'
        '"\\u0001é"}]}',
    ),
    (
        "connect.meta.data=false: no connect.* properties",
        SchemaBuilder.struct()
        .name("x.Y")
        .version(2)
        .field("small", Schema.INT16)
        .field("day", Date.SCHEMA)
        .build(),
        AvroDataOptions(connect_meta_data=False),
        '{"type":"record","name":"Y","namespace":"x","fields":[{"name":"small","type":"int"},'
        '{"name":"day","type":{"type":"int","logicalType":"date"}}]}',
    ),
    (
        "scrub.invalid.names: names URL-encoded, then invalid characters replaced",
        SchemaBuilder.struct().name("my-ns.1Rec").field("a b", Schema.INT32).build(),
        AvroDataOptions(scrub_invalid_names=True),
        '{"type":"record","name":"x1Rec","namespace":"my_ns","fields":[{"name":"a_b","type":'
        '"int"}],"connect.name":"my-ns.1Rec"}',
    ),
]


@pytest.mark.parametrize(
    ("schema", "options", "text"),
    [pytest.param(s, o, t, id=name) for name, s, o, t in CASES],
)
def test_the_registered_text_is_what_confluents_avro_data_writes(
    schema: Schema, options: AvroDataOptions, text: str
) -> None:
    assert schema_text_of(schema, options) == text
    fastavro.parse_schema(wire_schema(json.loads(text)))  # what the converter writes with


def test_java_number_text() -> None:
    assert [java_double(v) for v in (1.0, 100.0, 1e7, 1e-3, 9.99e-4, -0.0, 12.5e20)] == [
        "1.0",
        "100.0",
        "1.0E7",
        "0.001",
        "9.99E-4",
        "-0.0",
        "1.25E21",
    ]
    assert [java_float(v) for v in (0.1, 1.1, 3.4e38, 16777216.0)] == [
        "0.1",
        "1.1",
        "3.4E38",
        "1.6777216E7",
    ]


def test_an_invalid_avro_name_is_refused_naming_it_and_the_scrub_option() -> None:
    schema = SchemaBuilder.struct().name("shop.Line-Item").field("a", Schema.INT32).build()
    with pytest.raises(DataError, match=r"'Line-Item'.*scrub\.invalid\.names"):
        schema_text_of(schema)


def test_two_different_types_under_one_name_are_refused() -> None:
    one = SchemaBuilder.struct().name("a.T").field("x", Schema.INT32).build()
    other = SchemaBuilder.struct().name("a.T").field("y", Schema.INT32).build()
    schema = SchemaBuilder.struct().name("a.Both").field("p", one).field("q", other).build()
    with pytest.raises(DataError, match=r"Can't redefine: a\.T"):
        schema_text_of(schema)


# --- the converter --------------------------------------------------------------------------


def scope() -> str:
    return f"mock://avro-defaults-{next(_scopes)}"


def converter(url: str, **options: str) -> AvroConverter:
    made = make_converter("AvroConverter", {"schema.registry.url": url, **options}, False)
    assert isinstance(made, AvroConverter)
    return made


@pytest.mark.parametrize("option", ["generalized.sum.type.support", "discard.type.doc.default"])
def test_options_not_implemented_are_refused_by_name(option: str) -> None:
    with pytest.raises(ConfigError, match=rf"value\.converter\.{option}=true"):
        converter(scope(), **{option: "true"})


def test_options_at_confluents_defaults_and_honoured_ones_are_accepted() -> None:
    made = converter(
        scope(),
        **{
            "enhanced.avro.schema.support": "true",
            "scrub.invalid.names": "true",
            "avro.remove.java.properties": "true",
            "schemas.cache.config": "0",
            "generalized.sum.type.support": "false",
        },
    )
    assert made.avro_options.enhanced and made.avro_options.scrub_invalid_names
    assert made.avro_options.cache_size == 1  # clamped as Confluent's is
    assert made.schema_text(SUIT).startswith('{"type":"enum"')


def test_a_subject_confluents_converter_registered_first_takes_the_projects_records() -> None:
    """The subject holds Confluent's default form (an enum-marked STRING as a string); the
    project's records use that very schema: no new version, same id."""
    url = scope()
    card = (
        SchemaBuilder.struct()
        .name("cards.Card")
        .field("suit", SUIT)
        .field("rank", Schema.INT8)
        .field("note", Schema.OPTIONAL_STRING)
        .build()
    )
    confluent_text = (
        '{"type":"record","name":"Card","namespace":"cards","fields":[{"name":"suit","type":'
        '{"type":"string","connect.parameters":' + SUIT_PARAMS + ',"connect.name":"cards.Suit"}},'
        '{"name":"rank","type":{"type":"int","connect.type":"int8"}},{"name":"note","type":'
        '["null","string"],"default":null}],"connect.name":"cards.Card"}'
    )
    client = mock_client(url)
    first_id = client.register_schema("cards-value", RegistrySchema(confluent_text, "AVRO"))
    made = converter(url)
    value = Struct(card, {"suit": "HEARTS", "rank": 7, "note": None})
    written = made.from_connect_data("cards", card, value)
    assert written is not None
    assert int.from_bytes(written[1:5], "big") == first_id
    assert client.get_versions("cards-value") == [1]
    assert made.to_connect_data("cards", written).value == value


def test_union_values_round_trip_and_keep_their_branch() -> None:
    url = scope()
    made = converter(url)
    for field, member in (("int", 5), ("string", "five"), ("Point", Struct(POINT, {"x": 1}))):
        value = Struct(PAIR).put(field, member)
        written = made.from_connect_data("pairs", PAIR, value)
        assert written is not None
        assert made.to_connect_data("pairs", written).value == value
    decoded = AvroDeserializer(mock_client(url))(
        made.from_connect_data("pairs", PAIR, Struct(PAIR).put("string", "s")),
        SerializationContext("pairs", MessageField.VALUE),
    )
    assert decoded == "s"


def test_a_union_written_elsewhere_reads_with_the_branch_its_bytes_name() -> None:
    """["int", "long", "string"] holding long 5: the bytes say branch 1, so the Union struct's
    `long` field is set, though an int would hold 5 too."""
    url = scope()
    writer = ["int", "long", "string"]
    schema_id = mock_client(url).register_schema("u-value", RegistrySchema(json.dumps(writer)))
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(writer), ("long", 5))
    read = converter(url).to_connect_data("u", frame(schema_id, out.getvalue()))
    assert read.schema is not None and read.schema.name == UNION
    assert [f.name for f in read.schema.fields] == ["int", "long", "string"]
    assert read.value == Struct(read.schema).put("long", 5)


def test_records_with_unions_confluent_kafka_writes_read_back() -> None:
    url = scope()
    avro = {
        "type": "record",
        "name": "Shape",
        "namespace": "geo",
        "fields": [
            {"name": "id", "type": "long"},
            {
                "name": "size",
                "type": [
                    "null",
                    "double",
                    {"type": "record", "name": "Box", "fields": [{"name": "w", "type": "int"}]},
                    {"type": "enum", "name": "Named", "symbols": ["SMALL", "BIG"]},
                ],
                "default": None,
            },
        ],
    }
    serializer = AvroSerializer(mock_client(url), json.dumps(avro))
    context = SerializationContext("shapes", MessageField.VALUE)
    made = converter(url)
    seen = []
    for size in (None, 2.5, {"w": 3}, "BIG"):
        read = made.to_connect_data("shapes", serializer({"id": 1, "size": size}, context))
        assert read.value is not None
        seen.append(read.value.get("size"))
    union = seen[1].schema
    assert [f.name for f in union.fields] == ["double", "Box", "Named"]
    assert seen[0] is None
    assert seen[1] == Struct(union).put("double", 2.5)
    assert seen[2].get("Box").get("w") == 3
    assert seen[3] == Struct(union).put("Named", "BIG")
