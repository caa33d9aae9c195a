"""JsonConverter on its own: round trips, options, and the errors a user sees."""

from __future__ import annotations

import datetime as dt
import decimal
import math

import pytest

from spark_eos_connect.api.data import (
    Date,
    Decimal,
    Schema,
    SchemaAndValue,
    SchemaBuilder,
    Struct,
    Time,
    Timestamp,
)
from spark_eos_connect.converters import JsonConverter, make_converter
from spark_eos_connect.errors import ConfigError, DataError

ITEM = SchemaBuilder.struct().name("Item").field("sku", Schema.STRING).build()
ORDER = (
    SchemaBuilder.struct()
    .name("Order")
    .field("id", Schema.INT64)
    .field("items", SchemaBuilder.array(ITEM))
    .field("price", Decimal.schema(2))
    .field("day", Date.SCHEMA)
    .field("at", Time.SCHEMA)
    .field("placed", Timestamp.SCHEMA)
    .field("attrs", SchemaBuilder.map(Schema.STRING, Schema.OPTIONAL_FLOAT64))
    .field("codes", SchemaBuilder.map(Schema.INT16, Schema.BOOLEAN))
    .field("blob", Schema.OPTIONAL_BYTES)
    .build()
)


def json(**configs: str) -> JsonConverter:
    converter = make_converter("JsonConverter", configs, is_key=False)
    assert isinstance(converter, JsonConverter)
    return converter


def an_order() -> Struct:
    return Struct(
        ORDER,
        {
            "id": 1,
            "items": [Struct(ITEM, {"sku": "a"}), Struct(ITEM, {"sku": "b"})],
            "price": decimal.Decimal("-0.05"),
            "day": dt.date(2000, 2, 29),
            "at": dt.time(8, 0, 0, 1000),
            "placed": dt.datetime(2000, 2, 29, 8, 0, 0, 1000, tzinfo=dt.UTC),
            "attrs": {"w": 1.5, "h": None},
            "codes": {7: True},
            "blob": b"\x00",
        },
    )


@pytest.mark.parametrize("decimal_format", ["BASE64", "numeric"])
def test_structs_round_trip(decimal_format: str) -> None:
    converter = json(**{"decimal.format": decimal_format})
    data = converter.from_connect_data("t", ORDER, an_order())
    assert data is not None
    assert converter.to_connect_data("t", data) == SchemaAndValue(ORDER, an_order())


def test_envelope_layout() -> None:
    data = json().from_connect_data("t", Schema.OPTIONAL_STRING, "x")
    assert data == b'{"schema":{"type":"string","optional":true},"payload":"x"}'
    assert json().from_connect_data("t", None, None) is None
    assert json().from_connect_data("t", Schema.OPTIONAL_STRING, None) == (
        b'{"schema":{"type":"string","optional":true},"payload":null}'
    )
    assert json(**{"schemas.enable": "false"}).from_connect_data(
        "t", Schema.OPTIONAL_STRING, None
    ) == (b"null")


def test_schemaless_json_reads_as_plain_python() -> None:
    converter = json(**{"schemas.enable": "false"})
    data = b'{"n":1,"f":2.5,"l":[true,null,"s"],"m":{"k":{}},"big":123456789012345678901}'
    result = converter.to_connect_data("t", data)
    assert result.schema is None
    assert result.value == {
        "n": 1,
        "f": 2.5,
        "l": [True, None, "s"],
        "m": {"k": {}},
        "big": 123456789012345678901,  # exact, where Connect would wrap it to 64 bits
    }
    assert converter.to_connect_data("t", None) == SchemaAndValue.NULL
    assert converter.to_connect_data("t", b"") == SchemaAndValue(None, None)


def test_schemaless_writing_infers_the_type() -> None:
    converter = json(**{"schemas.enable": "false"})
    assert converter.from_connect_data("t", None, {1: [b"\x01", 0.5]}) == b'[[1,["AQ==",0.5]]]'
    with pytest.raises(DataError, match="a Struct needs its schema"):
        converter.from_connect_data("t", None, Struct(ITEM, {"sku": "a"}))
    with pytest.raises(DataError, match=r"Decimal .* has no corresponding schema type"):
        converter.from_connect_data("t", None, decimal.Decimal("1"))


def test_envelope_is_required_with_schemas_enabled() -> None:
    with pytest.raises(DataError, match=r"schemas\.enable=false"):
        json().to_connect_data("t", b'{"a":1}')
    with pytest.raises(DataError, match="serialization error"):
        json().to_connect_data("t", b"{not json")


def test_write_errors_name_the_field() -> None:
    bad = an_order()
    bad.put("price", decimal.Decimal("1.5"))
    with pytest.raises(DataError, match=r'field "price": .*Schema has scale 2'):
        json().from_connect_data("t", ORDER, bad)
    items = [Struct(ITEM, {"sku": "a"}), Struct(ITEM)]
    with pytest.raises(DataError, match=r'field "items\[1\].sku": null for a required'):
        an_order().put("items", items)  # Struct.put checks nested structs at once
    with pytest.raises(DataError, match=r"value\[1\].sku, which is required"):
        json().from_connect_data("t", SchemaBuilder.array(ITEM).build(), items)
    with pytest.raises(DataError, match=r"Mismatching schema for value"):
        json().from_connect_data("t", ITEM, an_order())
    with pytest.raises(DataError, match=r"value: .*INT8"):
        json().from_connect_data("t", Schema.INT8, 128)
    with pytest.raises(DataError, match="too large for FLOAT32"):
        json().from_connect_data("t", Schema.FLOAT32, 1e39)


def test_read_errors_name_the_field() -> None:
    envelope = (
        b'{"schema":{"type":"struct","fields":[{"type":"struct","field":"a","fields":'
        b'[{"type":"int32","field":"b"}]}]},"payload":{"a":{"b":"7"}}}'
    )
    with pytest.raises(DataError, match=r'field "a.b": expected INT32, found STRING'):
        json().to_connect_data("t", envelope)
    missing = b'{"schema":{"type":"struct","fields":[{"type":"int32","field":"b"}]},"payload":{}}'
    with pytest.raises(DataError, match=r'required INT32 field "b"'):
        json().to_connect_data("t", missing)
    with pytest.raises(DataError, match="Unknown schema type: nope"):
        json().to_connect_data("t", b'{"schema":{"type":"nope"},"payload":1}')


def test_replace_null_with_default() -> None:
    schema = SchemaBuilder.int32().optional().default_value(5).build()
    assert json().from_connect_data("t", schema, None) == (
        b'{"schema":{"type":"int32","optional":true,"default":5},"payload":5}'
    )
    keep = json(**{"replace.null.with.default": "false"})
    data = keep.from_connect_data("t", schema, None)
    assert data is not None and data.endswith(b'"payload":null}')
    assert keep.to_connect_data("t", data).value is None
    assert json().to_connect_data("t", data).value == 5


def test_non_finite_floats_round_trip() -> None:
    data = json().from_connect_data("t", Schema.FLOAT64, math.inf)
    assert data == b'{"schema":{"type":"double","optional":false},"payload":"Infinity"}'
    assert json().to_connect_data("t", data).value == math.inf


def test_options_are_checked_and_named_in_full() -> None:
    with pytest.raises(ConfigError, match=r"value\.converter\.schemas\.enable"):
        make_converter("JsonConverter", {"schemas.enable": "maybe"}, is_key=False)
    with pytest.raises(ConfigError, match=r"key\.converter\.decimal\.format"):
        make_converter("JsonConverter", {"decimal.format": "HEX"}, is_key=True)
    converter = make_converter("JsonConverter", {"unknown.option": "x"}, is_key=True)
    assert isinstance(converter, JsonConverter) and converter.schemas_enable


def test_schema_cache_keeps_at_most_its_size() -> None:
    converter = json(**{"schemas.cache.size": "2"})
    for n in range(5):
        converter.from_connect_data("t", SchemaBuilder.int8().version(n + 1).build(), 1)
    assert len(converter._schema_json) == 2
    uncached = json(**{"schemas.cache.size": "0"})
    assert uncached.from_connect_data("t", Schema.INT8, 1) == (
        b'{"schema":{"type":"int8","optional":false},"payload":1}'
    )


def test_a_struct_written_again_shows_its_new_values_and_a_bad_one_names_its_field() -> None:
    inner = SchemaBuilder.struct().field("n", Schema.INT64).field("s", Schema.STRING).build()
    outer = SchemaBuilder.struct().field("inner", inner).field("op", Schema.STRING).build()
    converter = make_converter("JsonConverter", {"schemas.enable": "false"}, is_key=False)
    shared = Struct(inner, {"n": 1, "s": "a"})
    first = Struct(outer, {"inner": shared, "op": "c"})
    assert converter.from_connect_data("t", outer, first) == b'{"inner":{"n":1,"s":"a"},"op":"c"}'
    assert converter.from_connect_data("t", outer, first) == b'{"inner":{"n":1,"s":"a"},"op":"c"}'
    shared.put("s", "b")  # the same struct, changed: written anew
    assert converter.from_connect_data("t", outer, first) == b'{"inner":{"n":1,"s":"b"},"op":"c"}'
    shared.values()[0] = True  # behind put's back: the full writer's check still applies
    with pytest.raises(DataError, match=r'field "inner\.n"'):
        converter.from_connect_data("t", outer, first)


FLAT = (
    SchemaBuilder.struct()
    .optional()
    .field("i8", Schema.INT8)
    .field("i64", Schema.OPTIONAL_INT64)
    .field("s", Schema.OPTIONAL_STRING)
    .field("b", Schema.OPTIONAL_BOOLEAN)
    .field("d", SchemaBuilder.string().optional().default_value("dflt"))
    .field("f", Schema.OPTIONAL_FLOAT32)
    .build()
)
NESTED = SchemaBuilder.struct().field("one", FLAT).field("two", FLAT).build()


@pytest.mark.parametrize("replace_null", ["true", "false"])
@pytest.mark.parametrize(
    "values",
    [
        {"i8": 1, "i64": -(2**63), "s": 'q"\u00e9\n', "b": True, "d": "x", "f": 1.5},
        {"i8": -128, "b": False},
        {"i8": 127, "s": "\U0001f600", "d": None},
    ],
)
def test_a_struct_writer_made_for_its_schema_writes_what_the_full_writer_writes(
    values: dict[str, object], replace_null: str
) -> None:
    converter = json(**{"schemas.enable": "false", "replace.null.with.default": replace_null})
    value = Struct(NESTED, {"one": Struct(FLAT, values)})
    expected = converter._writer.value(NESTED, value).encode()
    assert converter.from_connect_data("t", NESTED, value) == expected
    assert converter.from_connect_data("t", NESTED, value) == expected  # again, remembered
    defaulted = values.get("d") is None and replace_null == "true"
    assert (b'"d":"dflt"' in expected) is defaulted


def test_a_struct_writer_refuses_what_the_full_writer_refuses() -> None:
    converter = json(**{"schemas.enable": "false"})
    value = Struct(FLAT, {"i8": 1})
    value.values()[0] = 128  # out of INT8's range, behind put's back
    with pytest.raises(DataError, match='field "i8"'):
        converter.from_connect_data("t", FLAT, value)
    value.values()[0] = None  # a required field left null
    with pytest.raises(DataError, match='field "i8"'):
        converter.from_connect_data("t", FLAT, value)
    value.values()[0], value.values()[2] = 1, "\ud800"  # a lone surrogate
    with pytest.raises(DataError, match='field "s"'):
        converter.from_connect_data("t", FLAT, value)
    empty = SchemaBuilder.struct().build()
    assert converter.from_connect_data("t", empty, Struct(empty)) == b"{}"
