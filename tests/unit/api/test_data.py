"""Connect's data model: schemas, builder, structs, logical types, validation messages."""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import inspect
import pickle
from typing import Any

import pytest

from spark_eos_connect.api import data
from spark_eos_connect.api.data import (
    Date,
    Decimal,
    Field,
    Schema,
    SchemaAndValue,
    SchemaBuilder,
    Struct,
    Time,
    Timestamp,
    Type,
    is_logical,
    validate_value,
)
from spark_eos_connect.errors import DataError, EosConnectError

ADDRESS = SchemaBuilder.struct().name("Address").field("zip", Schema.INT32).optional().build()
ORDER = (
    SchemaBuilder.struct()
    .name("Order")
    .version(2)
    .field("id", Schema.INT64)
    .field("note", Schema.OPTIONAL_STRING)
    .field("qty", SchemaBuilder.int16().default_value(1))
    .field("address", ADDRESS)
    .field("tags", SchemaBuilder.array(Schema.STRING).optional())
    .field("price", Decimal.schema(2))
    .build()
)


def test_public_names_are_documented() -> None:
    assert data.__doc__
    for name in data.__all__:
        obj = getattr(data, name)
        assert inspect.getdoc(obj), name
        if inspect.isclass(obj):
            for attr, member in vars(obj).items():
                function = getattr(member, "__func__", member)
                if not attr.startswith("_") and inspect.isfunction(function):
                    assert inspect.getdoc(function), f"{name}.{attr}"
        assert name in data.__doc__, f"{name} is not listed in the module docstring"


def test_predefined_schemas() -> None:
    assert Schema(Type.STRING) == Schema.STRING
    assert Schema.OPTIONAL_STRING.optional and not Schema.STRING.optional
    for kind in Type:
        if kind.is_primitive:
            assert getattr(Schema, kind.name).type is kind
            assert getattr(Schema, f"OPTIONAL_{kind.name}").optional
    assert Type.BOOLEAN.value == "boolean" and not Type.STRUCT.is_primitive


def test_builder_makes_the_schema() -> None:
    assert ORDER.type is Type.STRUCT
    assert ORDER.name == "Order" and ORDER.version == 2
    assert [f.name for f in ORDER.fields] == ["id", "note", "qty", "address", "tags", "price"]
    assert ORDER.field("qty") == Field("qty", 2, Schema(Type.INT16, default_value=1))
    assert ORDER.field("missing") is None
    assert ORDER.field("price") is not None
    assert Decimal.schema(2).parameters == {"scale": "2"}
    m = SchemaBuilder.map(Schema.STRING, SchemaBuilder.int32().optional()).build()
    assert m.key_schema == Schema.STRING and m.value_schema == Schema.OPTIONAL_INT32
    assert SchemaBuilder.of(Type.BYTES).doc("raw").build() == Schema(Type.BYTES, doc="raw")


def test_builder_refuses_bad_calls() -> None:
    with pytest.raises(DataError, match="already been set"):
        SchemaBuilder.int8().name("a").name("b")
    with pytest.raises(DataError, match="Cannot create fields on type INT8"):
        SchemaBuilder.int8().field("x", Schema.INT8)
    with pytest.raises(DataError, match="duplication x"):
        SchemaBuilder.struct().field("x", Schema.INT8).field("x", Schema.INT8)
    with pytest.raises(DataError, match=r"Invalid default value.*INT8"):
        SchemaBuilder.int8().default_value(1000)
    SchemaBuilder.int8().optional().optional()  # the same value twice is fine


def test_schema_constructor_checks_its_shape() -> None:
    with pytest.raises(DataError, match="ARRAY schema needs a value schema"):
        Schema(Type.ARRAY)
    with pytest.raises(DataError, match="MAP schema needs"):
        Schema(Type.MAP, value_schema=Schema.STRING)
    with pytest.raises(DataError, match="only STRUCT"):
        Schema(Type.INT8, fields=(Field("a", 0, Schema.INT8),))
    with pytest.raises(DataError, match="index 1, expected 0"):
        Schema(Type.STRUCT, fields=(Field("a", 1, Schema.INT8),))
    with pytest.raises(DataError, match="only MAP"):
        Schema(Type.ARRAY, key_schema=Schema.INT8, value_schema=Schema.INT8)


def test_schemas_are_immutable_hashable_and_picklable() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        ORDER.name = "x"  # type: ignore[misc]
    assert len({ORDER, ORDER, Schema.STRING}) == 2
    with_list_default = SchemaBuilder.array(Schema.INT8).default_value([1]).build()
    hash(with_list_default)
    assert pickle.loads(pickle.dumps(ORDER)) == ORDER
    assert pickle.loads(pickle.dumps(ORDER)).field("id") == ORDER.field("id")
    assert "Order" in repr(ORDER)


def order(**values: Any) -> Struct:
    return Struct(ORDER, {"id": 7, "price": decimal.Decimal("9.99"), **values})


def test_struct_put_get_defaults_and_equality() -> None:
    s = order(note="hi")
    assert s.get("id") == 7 and s.get("note") == "hi"
    assert s.get("qty") == 1 and s.get_without_default("qty") is None
    assert s.put("qty", 3) is s and s.get("qty") == 3
    s.validate()
    assert s == order(note="hi", qty=3)
    assert s != order(note="other", qty=3)
    assert repr(order()) == "Struct{id=7,price=Decimal('9.99')}"
    assert dict(order()) == {
        "id": 7,
        "note": None,
        "qty": None,
        "address": None,
        "tags": None,
        "price": decimal.Decimal("9.99"),
    }
    nested = order(address=Struct(ADDRESS, {"zip": 1000}), tags=["a"])
    assert nested.to_dict()["address"] == {"zip": 1000}
    assert nested.to_dict()["qty"] == 1
    assert pickle.loads(pickle.dumps(nested)) == nested
    with pytest.raises(TypeError):
        hash(nested)


def test_struct_refuses_unknown_fields_and_non_struct_schemas() -> None:
    with pytest.raises(DataError, match="nope is not a valid field name"):
        order().put("nope", 1)
    with pytest.raises(DataError, match="nope is not a valid field name"):
        order().get("nope")
    with pytest.raises(DataError, match="Not a struct schema"):
        Struct(Schema.STRING)


def test_validate_names_the_missing_required_field() -> None:
    s = Struct(ORDER, {"price": decimal.Decimal("1.00")})
    with pytest.raises(DataError, match='field "id": null for a required schema of type INT64'):
        s.validate()


def test_a_nested_struct_checked_once_is_checked_again_only_after_a_put() -> None:
    outer = SchemaBuilder.struct().field("order", ORDER).build()
    shared = Struct(ORDER)
    with pytest.raises(DataError, match=r'field "order\.id": null for a required'):
        Struct(outer, {"order": shared})  # an unchecked struct is checked whole
    shared.put("id", 1).put("price", decimal.Decimal("1.00"))
    Struct(outer, {"order": shared})
    assert shared._checked  # checked: a second record sharing it is not checked again
    shared.put("note", "changed")
    assert not shared._checked
    Struct(outer, {"order": shared})
    assert shared._checked


def test_of_values_checks_the_struct_whole_at_once() -> None:
    address = Struct(ADDRESS, {"zip": 1})
    values = [7, None, None, address, None, decimal.Decimal("1.00")]
    values += [None] * (len(ORDER.fields) - len(values))
    made = Struct.of_values(ORDER, values)
    assert made._checked and made.values() is values
    assert made == Struct(ORDER, {"id": 7, "address": address, "price": decimal.Decimal("1.00")})
    assert made.get("qty") == 1  # unset: the default
    with pytest.raises(DataError, match='field "id": expected schema of type INT64'):
        Struct.of_values(ORDER, ["7", *values[1:]])
    with pytest.raises(DataError, match='field "id": null for a required'):
        Struct.of_values(ORDER, [None, *values[1:]])
    with pytest.raises(DataError, match=r'field "address\.zip": null for a required'):
        Struct.of_values(ORDER, [7, None, None, Struct(ADDRESS), *values[4:]])
    with pytest.raises(DataError, match="1 values for the"):
        Struct.of_values(ORDER, [7])
    with pytest.raises(DataError, match="Not a struct schema"):
        Struct.of_values(Schema.INT32, [])


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("id", "7", r'field "id": expected schema of type INT64 \(int in .*\), got str \'7\''),
        ("id", True, 'field "id": expected schema of type INT64'),
        ("id", 2**63, 'field "id": expected schema of type INT64'),
        ("note", b"x", 'field "note": expected schema of type STRING'),
        ("tags", ["a", 3], r'field "tags\[1\]": expected schema of type STRING'),
        ("tags", "abc", 'field "tags": expected schema of type ARRAY'),
        ("price", 9.99, r'field "price": expected schema "org.apache.kafka.connect.data.Decimal"'),
        ("price", decimal.Decimal("NaN"), 'field "price": NaN is not a finite decimal'),
        ("address", Struct(ADDRESS), 'field "address.zip": null for a required'),
        ("address", order(), 'field "address": the Struct\'s schema'),
    ],
)
def test_put_names_the_field_path_and_what_was_expected(
    field: str, value: Any, message: str
) -> None:
    with pytest.raises(DataError, match=message):
        order().put(field, value)


def test_errors_are_project_errors() -> None:
    assert issubclass(DataError, EosConnectError) and issubclass(DataError, ValueError)


def test_validate_value_primitives_and_containers() -> None:
    validate_value(Schema.INT8, -128)
    validate_value(Schema.FLOAT32, 1)  # ints are accepted for floats
    validate_value(Schema.BYTES, bytearray(b"x"))
    validate_value(Schema.OPTIONAL_BOOLEAN, None)
    validate_value(SchemaBuilder.map(Schema.INT32, Schema.STRING).build(), {1: "a"})
    for schema, bad in [
        (Schema.INT8, 128),
        (Schema.INT16, -(2**15) - 1),
        (Schema.INT32, 1.0),
        (Schema.FLOAT64, "1"),
        (Schema.BOOLEAN, 1),
        (Schema.BOOLEAN, None),
    ]:
        with pytest.raises(DataError, match="Invalid value for value"):
            validate_value(schema, bad)
    with pytest.raises(DataError, match=r"value\[key 'a'\].*INT32"):
        validate_value(SchemaBuilder.map(Schema.INT32, Schema.STRING).build(), {"a": "a"})
    with pytest.raises(DataError, match=r"value\[1\].*STRING"):
        validate_value(SchemaBuilder.map(Schema.INT32, Schema.STRING).build(), {1: 1})
    with pytest.raises(DataError, match=r"value\[0\]\[1\]"):
        validate_value(SchemaBuilder.array(SchemaBuilder.array(Schema.INT8)).build(), [[1, "x"]])


@pytest.mark.parametrize(
    ("text", "scale", "raw"),
    [
        ("0.00", 2, "00"),
        ("1.28", 2, "0080"),
        ("-1.28", 2, "80"),
        ("-1.29", 2, "ff7f"),
        ("127", 0, "7f"),
        ("12345678901234567890.123456789", 9, "27e41b3246bec9b16e398115"),
        ("-0.5", 1, "fb"),
    ],
)
def test_decimal_bytes_are_javas_big_integer_bytes(text: str, scale: int, raw: str) -> None:
    schema = Decimal.schema(scale)
    assert Decimal.from_logical(schema, decimal.Decimal(text)).hex() == raw
    back = Decimal.to_logical(schema, bytes.fromhex(raw))
    assert back == decimal.Decimal(text) and back.as_tuple().exponent == -scale


def test_decimal_of_another_scale_is_accepted_until_it_becomes_bytes() -> None:
    # As in Connect: Struct.put only checks the class; Decimal.fromLogical checks the scale.
    assert order(price=decimal.Decimal("9.9")).get("price") == decimal.Decimal("9.9")


def test_decimal_errors() -> None:
    with pytest.raises(DataError, match="scale parameter not found"):
        Decimal.scale(Schema.BYTES)
    with pytest.raises(DataError, match="mismatching scale"):
        Decimal.from_logical(Decimal.schema(3), decimal.Decimal("1.5"))
    with pytest.raises(DataError, match="not finite"):
        Decimal.from_logical(Decimal.schema(0), decimal.Decimal("NaN"))
    with pytest.raises(DataError, match="empty"):
        Decimal.to_logical(Decimal.schema(0), b"")
    assert is_logical(Decimal.schema(1)) and not is_logical(Schema.BYTES) and not is_logical(None)


def test_date_time_timestamp() -> None:
    assert SchemaBuilder.int32().name(Date.LOGICAL_NAME).version(1).build() == Date.SCHEMA
    assert Date.from_logical(Date.SCHEMA, dt.date(1970, 1, 2)) == 1
    assert Date.from_logical(Date.SCHEMA, dt.date(1969, 12, 31)) == -1
    assert Date.to_logical(Date.SCHEMA, 19_000) == dt.date(2022, 1, 8)
    assert Time.from_logical(Time.SCHEMA, dt.time(1, 2, 3, 456_789)) == 3_723_456
    assert Time.to_logical(Time.SCHEMA, 3_723_456) == dt.time(1, 2, 3, 456_000)
    assert Time.from_logical(Time.SCHEMA, dt.time(0, 0, tzinfo=dt.UTC)) == 0
    stamp = dt.datetime(2024, 5, 6, 7, 8, 9, 123_000, tzinfo=dt.UTC)
    assert Timestamp.from_logical(Timestamp.SCHEMA, stamp) == 1_714_979_289_123
    assert Timestamp.from_logical(Timestamp.SCHEMA, stamp.replace(tzinfo=None)) == 1_714_979_289_123
    assert Timestamp.to_logical(Timestamp.SCHEMA, 1_714_979_289_123) == stamp
    assert Timestamp.from_logical(Timestamp.SCHEMA, dt.datetime(1969, 12, 31, 23, 59, 59)) == -1000
    plus_two = dt.timezone(dt.timedelta(hours=2))
    assert Timestamp.from_logical(Timestamp.SCHEMA, stamp.astimezone(plus_two)) == 1_714_979_289_123


def test_logical_type_errors() -> None:
    with pytest.raises(DataError, match=r"not org\.apache\.kafka\.connect\.data\.Date"):
        Date.from_logical(Schema.INT32, dt.date(2000, 1, 1))
    with pytest.raises(DataError, match=r"datetime\.date, not a datetime\.datetime"):
        Date.from_logical(Date.SCHEMA, dt.datetime(2000, 1, 1))
    with pytest.raises(DataError, match="must be in UTC"):
        Time.from_logical(Time.SCHEMA, dt.time(1, tzinfo=dt.timezone(dt.timedelta(hours=1))))
    with pytest.raises(DataError, match=r"milliseconds in \[0, 86400000\)"):
        Time.to_logical(Time.SCHEMA, 86_400_000)
    with pytest.raises(DataError, match="out of Python's datetime range"):
        Timestamp.to_logical(Timestamp.SCHEMA, 2**62)
    with pytest.raises(DataError, match=r"expected schema .*Date.* \(datetime.date\)"):
        validate_value(Date.SCHEMA, dt.datetime(2000, 1, 1))
    with pytest.raises(DataError, match=r"\(datetime.time\)"):
        validate_value(Time.SCHEMA, 5)
    with pytest.raises(DataError, match=r"\(datetime.datetime\)"):
        validate_value(Timestamp.SCHEMA, dt.date(2000, 1, 1))


def test_schema_and_value() -> None:
    assert SchemaAndValue(None, None) == SchemaAndValue.NULL
    pair = SchemaAndValue(Schema.STRING, "x")
    assert (pair.schema, pair.value) == (Schema.STRING, "x")
