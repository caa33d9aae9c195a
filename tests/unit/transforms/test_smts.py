"""Each SMT on schemaless and schema'd records (Python only; Connect parity is in test_oracle_*)."""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any

import pytest

from spark_eos_connect.api.data import (
    Date,
    Decimal,
    Schema,
    SchemaBuilder,
    Struct,
    Time,
    Timestamp,
    Type,
)
from spark_eos_connect.errors import DataError
from spark_eos_connect.transforms import ConnectRecord, Float32, Header
from spark_eos_connect.transforms.cast import CastKey, CastValue
from spark_eos_connect.transforms.field_edits import (
    InsertFieldKey,
    InsertFieldValue,
    MaskFieldValue,
    ReplaceFieldKey,
    ReplaceFieldValue,
)
from spark_eos_connect.transforms.flatten import FlattenValue
from spark_eos_connect.transforms.headers import (
    DropHeaders,
    HeaderFromKey,
    HeaderFromValue,
    InsertHeader,
)
from spark_eos_connect.transforms.reshape import (
    ExtractFieldKey,
    ExtractFieldValue,
    HoistFieldKey,
    HoistFieldValue,
    ValueToKey,
)
from spark_eos_connect.transforms.routing import Filter, RegexRouter, TimestampRouter
from spark_eos_connect.transforms.timestamp_converter import (
    TimestampConverterKey,
    TimestampConverterValue,
)

STAMP = 1700000000123
ADDRESS = SchemaBuilder.struct().field("city", Schema.STRING).field("zip", Schema.OPTIONAL_INT32)
PERSON = (
    SchemaBuilder.struct()
    .name("Person")
    .version(3)
    .doc("a person")
    .parameter("p", "1")
    .field("id", Schema.INT64)
    .field("name", Schema.OPTIONAL_STRING)
    .field("age", SchemaBuilder.int32().optional().default_value(18).build())
    .field("address", ADDRESS.optional().build())
    .build()
)


def person(**values: Any) -> Struct:
    address_schema = PERSON.field("address")
    assert address_schema is not None
    base: dict[str, Any] = {
        "id": 1,
        "name": "ann",
        "address": Struct(address_schema.schema, {"city": "Oslo", "zip": 150}),
    }
    base.update(values)
    return Struct(PERSON, base)


def record(value: Any = None, schema: Schema | None = None, **extra: Any) -> ConnectRecord:
    options: dict[str, Any] = {"kafka_partition": 2, "timestamp": STAMP}
    options.update(extra)
    return ConnectRecord("orders", value_schema=schema, value=value, **options)


def make(cls: type[Any], **options: Any) -> Any:
    smt = cls()
    smt.configure({k.replace("_", "."): v for k, v in options.items()})
    return smt


def apply(smt: Any, rec: ConnectRecord) -> ConnectRecord:
    result = smt.apply(rec)
    assert result is not None
    return result


# --- InsertField -------------------------------------------------------------------------------


def test_insert_field_schemaless_adds_metadata_in_hashmap_order() -> None:
    smt = make(InsertFieldValue, topic_field="t", partition_field="p", timestamp_field="ts")
    out = apply(smt, record({"b": 1, "a": 2}))
    assert out.value == {"p": 2, "a": 2, "b": 1, "t": "orders", "ts": STAMP}
    assert list(out.value) == ["p", "a", "b", "t", "ts"]
    assert out.value_schema is None


def test_insert_field_schema_appends_fields_with_their_optionality() -> None:
    smt = make(
        InsertFieldValue,
        topic_field="t!",
        partition_field="p",
        timestamp_field="ts?",
        static_field="s",
        static_value="v",
    )
    out = apply(smt, record(person(), PERSON))
    schema = out.value_schema
    assert schema is not None
    assert [f.name for f in schema.fields] == ["id", "name", "age", "address", "t", "p", "ts", "s"]
    assert schema.name == "Person" and schema.version == 3 and schema.doc == "a person"
    assert schema.parameters == {"p": "1"}
    assert schema.field("t").schema == Schema.STRING  # type: ignore[union-attr]
    assert schema.field("p").schema == Schema.OPTIONAL_INT32  # type: ignore[union-attr]
    ts = schema.field("ts").schema  # type: ignore[union-attr]
    assert ts.name == Timestamp.LOGICAL_NAME and ts.optional
    assert out.value.get("ts") == Timestamp.to_logical(Timestamp.SCHEMA, STAMP)
    assert out.value.get("age") == 18  # the default, replace.null.with.default=true
    # The derived schema is cached per input schema.
    assert apply(smt, record(person(), PERSON)).value_schema is schema


def test_insert_field_can_keep_nulls_and_needs_sink_offsets() -> None:
    smt = make(InsertFieldValue, offset_field="o", replace_null_with_default="false")
    out = apply(smt, record(person(), PERSON, kafka_offset=77))
    assert out.value.get_without_default("age") is None and out.value.get("o") == 77
    with pytest.raises(DataError, match="Only SinkRecord supported"):
        smt.apply(record(person(), PERSON))


def test_insert_field_key_and_tombstones() -> None:
    smt = make(InsertFieldKey, topic_field="t")
    out = apply(smt, ConnectRecord("x", key={"k": 1}, value="v"))
    assert out.key == {"k": 1, "t": "x"} and out.value == "v"
    tombstone = record(None)
    assert smt.apply(tombstone) is tombstone
    with pytest.raises(DataError, match=r"Only Struct objects supported for \[field insertion\]"):
        make(InsertFieldValue, topic_field="t").apply(record({"a": 1}, PERSON))


# --- ReplaceField ------------------------------------------------------------------------------


def test_replace_field_schemaless() -> None:
    smt = make(ReplaceFieldValue, exclude="b", include="a,b,c", renames="a:x")
    out = apply(smt, record({"a": 1, "b": 2, "c": 3, "d": 4}))
    assert out.value == {"x": 1, "c": 3}


def test_replace_field_schema_filters_renames_and_keeps_order() -> None:
    smt = make(ReplaceFieldValue, exclude="address", renames="name:full_name,id:key")
    out = apply(smt, record(person(name=None), PERSON))
    assert [f.name for f in out.value_schema.fields] == ["key", "full_name", "age"]  # type: ignore[union-attr]
    assert out.value.get("key") == 1 and out.value.get("full_name") is None
    assert out.value_schema.name == "Person"  # type: ignore[union-attr]
    keyed = make(ReplaceFieldKey, include="id")
    assert apply(keyed, ConnectRecord("t", key={"id": 1, "x": 2})).key == {"id": 1}


# --- MaskField ---------------------------------------------------------------------------------


def test_mask_field_schemaless_nulls_by_type() -> None:
    smt = make(MaskFieldValue, fields="i,f,s,b,l,m,n,d,absent")
    value = {
        "i": 5,
        "f": 2.5,
        "s": "x",
        "b": True,
        "l": [1],
        "m": {"a": 1},
        "n": None,
        "d": decimal.Decimal("1.50"),
    }
    out = apply(smt, record(value))
    assert out.value == {
        "i": 0,
        "f": 0.0,
        "s": "",
        "b": False,
        "l": [],
        "m": {},
        "n": None,
        "d": decimal.Decimal(0),
        "absent": None,
    }
    with pytest.raises(DataError, match="Cannot mask value of type: bytes"):
        make(MaskFieldValue, fields="x").apply(record({"x": b"1"}))
    with pytest.raises(DataError, match="Only Map objects"):
        smt.apply(record(None))


def test_mask_field_replacement_takes_the_fields_type() -> None:
    schema = (
        SchemaBuilder.struct()
        .field("b", Schema.INT8)
        .field("f", Schema.FLOAT32)
        .field("s", Schema.STRING)
        .field("keep", Schema.INT64)
        .build()
    )
    smt = make(MaskFieldValue, fields="b,f,s", replacement="300.7")
    out = apply(smt, record(Struct(schema, {"b": 1, "f": 1.0, "s": "x", "keep": 9}), schema))
    assert out.value.get("b") == 44  # (byte) 300
    assert out.value.get("f") == pytest.approx(300.7, rel=1e-6)
    assert out.value.get("s") == "300.7" and out.value.get("keep") == 9
    with pytest.raises(DataError, match="with custom replacement"):
        make(MaskFieldValue, fields="x", replacement="1").apply(record({"x": True}))
    with pytest.raises(DataError, match="Unable to convert abc"):
        make(MaskFieldValue, fields="x", replacement="abc").apply(record({"x": 1}))


# --- ValueToKey, ExtractField, HoistField ------------------------------------------------------


def test_value_to_key() -> None:
    smt = make(ValueToKey, fields="id,name")
    out = apply(smt, record(person(), PERSON))
    assert out.key_schema is not None and [f.name for f in out.key_schema.fields] == ["id", "name"]
    assert out.key_schema.name is None and out.key.get("id") == 1
    assert out.value_schema is PERSON
    assert apply(smt, record({"id": 1, "x": 2})).key == {"name": None, "id": 1}
    with pytest.raises(DataError, match="Field does not exist: nope"):
        make(ValueToKey, fields="nope").apply(record(person(), PERSON))


def test_extract_field_flat_and_nested() -> None:
    out = apply(make(ExtractFieldValue, field="address"), record(person(), PERSON))
    assert out.value_schema is not None and out.value_schema.field("city") is not None
    nested = make(ExtractFieldValue, field="address.city", field_syntax_version="V2")
    assert apply(nested, record(person(), PERSON)).value == "Oslo"
    assert apply(nested, record(person(address=None), PERSON)).value is None
    assert apply(nested, record({"address": {"city": "Rome"}})).value == "Rome"
    assert apply(make(ExtractFieldKey, field="k"), ConnectRecord("t", key={"k": 3})).key == 3
    with pytest.raises(DataError, match=r"Unknown field: address\.nope"):
        nested_bad = make(ExtractFieldValue, field="address.nope", field_syntax_version="v2")
        nested_bad.apply(record(person(), PERSON))


def test_hoist_field() -> None:
    out = apply(make(HoistFieldValue, field="w"), record(person(), PERSON))
    assert out.value_schema is not None and out.value_schema.fields[0].schema is PERSON
    assert out.value.get("w") == person()
    assert apply(make(HoistFieldKey, field="w"), ConnectRecord("t", key=5)).key == {"w": 5}


# --- Cast --------------------------------------------------------------------------------------


def test_cast_schema_fields_and_defaults() -> None:
    schema = (
        SchemaBuilder.struct()
        .field("a", SchemaBuilder.int64().optional().default_value(300).build())
        .field("b", Schema.FLOAT64)
        .field("c", Schema.STRING)
        .build()
    )
    smt = make(CastValue, spec="a:int8,b:string,c:boolean")
    out = apply(smt, record(Struct(schema, {"b": 1e7, "c": "TRUE"}), schema))
    a = out.value_schema.field("a").schema  # type: ignore[union-attr]
    assert a.type is Type.INT8 and a.optional and a.default_value == 44
    assert out.value.get("b") == "1.0E7" and out.value.get("c") is True


def test_cast_whole_values() -> None:
    assert apply(make(CastKey, spec="int16"), ConnectRecord("t", key="12")).key == 12
    stamp = Timestamp.to_logical(Timestamp.SCHEMA, STAMP)
    out = apply(make(CastValue, spec="string"), record(stamp, Timestamp.SCHEMA))
    assert out.value == "2023-11-14T22:13:20.123Z" and out.value_schema.type is Type.STRING  # type: ignore[union-attr]
    day = apply(make(CastValue, spec="int32"), record(dt.date(1970, 1, 3), Date.SCHEMA))
    assert day.value == 2
    single = apply(make(CastValue, spec="float32"), record("0.1"))
    assert isinstance(single.value, Float32) and repr(single.value) == "Float32(0.1)"
    with pytest.raises(DataError, match="was out of range"):
        make(CastValue, spec="int8").apply(record("128"))
    with pytest.raises(DataError, match="does not support casting from ARRAY"):
        make(CastValue, spec="string").apply(record([1]))


# --- TimestampConverter ------------------------------------------------------------------------


def test_timestamp_converter_between_types() -> None:
    to_string = make(TimestampConverterValue, target_type="string", format="yyyy-MM-dd HH:mm")
    assert apply(to_string, record(STAMP)).value == "2023-11-14 22:13"
    to_unix = make(TimestampConverterValue, target_type="unix", format="yyyy-MM-dd HH:mm")
    assert apply(to_unix, record("2023-11-14 22:13")).value == 1699999980000
    to_date = make(TimestampConverterValue, target_type="Date")
    out = apply(to_date, record(STAMP, Schema.INT64))
    assert out.value == dt.date(2023, 11, 14) and out.value_schema == Date.SCHEMA
    to_time = make(TimestampConverterKey, target_type="Time")
    key = apply(to_time, ConnectRecord("t", key=dt.datetime(2023, 11, 14, 22, 13, 20, 123000)))
    assert key.key == dt.time(22, 13, 20, 123000)
    micros = make(TimestampConverterValue, target_type="unix", unix_precision="microseconds")
    assert (
        apply(micros, record(Timestamp.to_logical(Timestamp.SCHEMA, -1), Timestamp.SCHEMA)).value
        == -1000
    )
    seconds = make(TimestampConverterValue, target_type="Timestamp", unix_precision="seconds")
    assert apply(seconds, record(-1)).value == Timestamp.to_logical(Timestamp.SCHEMA, -1000)
    with pytest.raises(DataError, match="does not match pattern"):
        to_unix.apply(record("14/11/2023"))


def test_timestamp_converter_field_in_struct() -> None:
    schema = SchemaBuilder.struct().optional().field("at", Schema.OPTIONAL_INT64).build()
    smt = make(TimestampConverterValue, field="at", target_type="Timestamp")
    out = apply(smt, record(Struct(schema, {"at": STAMP}), schema))
    at = out.value_schema.field("at").schema  # type: ignore[union-attr]
    assert at.name == Timestamp.LOGICAL_NAME and at.optional and out.value_schema.optional  # type: ignore[union-attr]
    assert apply(smt, record(None, schema)).value is None
    time_value = make(TimestampConverterValue, field="t", target_type="unix")
    assert apply(time_value, record({"t": dt.time(0, 0, 1)})).value == {"t": 1000}
    assert Time.LOGICAL_NAME  # the Time type is exercised above through the key


# --- Flatten -----------------------------------------------------------------------------------


def test_flatten_schema_inherits_optionality_and_defaults() -> None:
    inner = SchemaBuilder.struct().field("x", Schema.INT32).build()
    default = Struct(inner, {"x": 7})
    schema = (
        SchemaBuilder.struct()
        .field("a", SchemaBuilder.struct().optional().field("in", inner).build())
        .field("d", SchemaBuilder.struct().field("x", Schema.INT32).optional().build())
        .build()
    )
    del default
    smt = make(FlattenValue, delimiter="_")
    value = Struct(schema, {"a": None, "d": None})
    out = apply(smt, record(value, schema))
    names = [(f.name, f.schema.optional) for f in out.value_schema.fields]  # type: ignore[union-attr]
    assert names == [("a_in_x", True), ("d_x", True)]
    assert apply(smt, record({"a": {"b": {"c": 1}}, "e": None})).value == {"a_b_c": 1, "e": None}
    with pytest.raises(DataError, match="Flatten transformation does not support"):
        smt.apply(record({"a": Struct(inner, {"x": 1})}))


# --- Routers, Filter ---------------------------------------------------------------------------


def test_routers_and_filter() -> None:
    router = make(RegexRouter, regex="(?<base>.*)-raw", replacement="${base}")
    assert apply(router, record()).topic == "orders"
    assert apply(router, ConnectRecord("a-raw")).topic == "a"
    stamp = make(TimestampRouter, topic_format="${topic}@${timestamp}", timestamp_format="yyyy")
    assert apply(stamp, record()).topic == "orders@2023"
    with pytest.raises(DataError, match="Timestamp missing"):
        stamp.apply(ConnectRecord("t"))
    assert make(Filter).apply(record()) is None


# --- Headers -----------------------------------------------------------------------------------


def test_header_from_move_and_copy() -> None:
    move = make(HeaderFromValue, fields="id,name", headers="h_id,h_name", operation="move")
    out = apply(move, record(person(), PERSON, headers=(Header("old", 1),)))
    assert [f.name for f in out.value_schema.fields] == ["age", "address"]  # type: ignore[union-attr]
    assert out.headers == (
        Header("old", 1),
        Header("h_id", 1, Schema.INT64),
        Header("h_name", "ann", Schema.OPTIONAL_STRING),
    )
    copy = make(HeaderFromKey, fields="a", headers="h", operation="copy")
    key_out = apply(copy, ConnectRecord("t", key={"a": 1, "b": 2}))
    assert key_out.key == {"a": 1, "b": 2} and key_out.headers == (Header("h", 1),)
    moved = make(HeaderFromKey, fields="a", headers="h", operation="move")
    assert apply(moved, ConnectRecord("t", key={"a": 1, "b": 2})).key == {"b": 2}


def test_insert_and_drop_headers() -> None:
    insert = make(InsertHeader, header="n", value_literal="42")
    out = apply(insert, record(headers=(Header("a", 1),)))
    assert out.headers == (Header("a", 1), Header("n", 42, Schema.INT8))
    dated = apply(make(InsertHeader, header="d", value_literal="2024-01-02"), record())
    assert dated.headers == (Header("d", dt.date(2024, 1, 2), Date.SCHEMA),)
    big = apply(make(InsertHeader, header="x", value_literal="12345678901234567890123"), record())
    assert big.headers[0].schema == Decimal.schema(0)
    assert big.headers[0].value == decimal.Decimal("12345678901234567890123")
    single = apply(make(InsertHeader, header="x", value_literal="1e30"), record())
    assert single.headers[0].schema == Schema.FLOAT32
    drop = make(DropHeaders, headers="a,b")
    kept = apply(drop, record(headers=(Header("a", 1), Header("c", 2), Header("b", 3))))
    assert kept.headers == (Header("c", 2),)
