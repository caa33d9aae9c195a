"""String, byte array, numeric and header converters, the factory, and Java's number texts."""

from __future__ import annotations

import datetime as dt
import decimal
import math

import pytest

from spark_eos_connect.api.data import Decimal, Schema, SchemaAndValue, SchemaBuilder, Struct
from spark_eos_connect.converters import (
    ByteArrayConverter,
    Converter,
    DoubleConverter,
    FloatConverter,
    IntegerConverter,
    JsonConverter,
    LongConverter,
    ShortConverter,
    SimpleHeaderConverter,
    StringConverter,
    _java,
    known_converters,
    make_converter,
    make_header_converter,
)
from spark_eos_connect.converters.values import parse_string, to_string
from spark_eos_connect.errors import ConfigError, DataError


def test_string_converter_writes_javas_to_string() -> None:
    converter = StringConverter()
    point = SchemaBuilder.struct().field("x", Schema.INT8).field("y", Schema.OPTIONAL_INT8).build()
    assert converter.from_connect_data("t", None, "é") == "é".encode()
    assert converter.from_connect_data("t", None, 1.0) == b"1.0"
    assert converter.from_connect_data("t", Schema.FLOAT32, 0.1) == b"0.1"
    assert converter.from_connect_data("t", None, [1, "a", None]) == b"[1, a, null]"
    assert converter.from_connect_data("t", None, {"k": False}) == b"{k=false}"
    assert converter.from_connect_data("t", point, Struct(point, {"x": 1})) == b"Struct{x=1}"
    assert converter.from_connect_data("t", None, dt.date(1970, 1, 1)) == (
        b"Thu Jan 01 00:00:00 UTC 1970"
    )
    assert converter.from_connect_data("t", None, None) is None
    with pytest.raises(DataError, match="use ByteArrayConverter"):
        converter.from_connect_data("t", None, b"raw")


def test_string_converter_encodings() -> None:
    latin = make_converter("StringConverter", {"converter.encoding": "ISO-8859-1"}, False)
    assert latin.from_connect_data("t", None, "é€") == b"\xe9?"
    assert latin.to_connect_data("t", b"\xe9") == SchemaAndValue(Schema.OPTIONAL_STRING, "é")
    utf16 = make_converter("StringConverter", {"converter.encoding": "UTF-16"}, False)
    assert utf16.from_connect_data("t", None, "a") == b"\xfe\xff\x00a"
    assert utf16.to_connect_data("t", b"\x00a").value == "a"
    with pytest.raises(ConfigError, match=r"value\.converter\.converter\.encoding"):
        make_converter("StringConverter", {"converter.encoding": "no-such"}, False)


def test_string_converter_reads_strictly() -> None:
    with pytest.raises(DataError, match="Failed to deserialize string as UTF-8"):
        StringConverter().to_connect_data("t", b"\xff")
    assert StringConverter().to_connect_data("t", None) == SchemaAndValue(
        Schema.OPTIONAL_STRING, None
    )


def test_byte_array_converter() -> None:
    converter = ByteArrayConverter()
    assert converter.from_connect_data("t", Schema.BYTES, bytearray(b"ab")) == b"ab"
    assert converter.to_connect_data("t", b"x") == SchemaAndValue(Schema.OPTIONAL_BYTES, b"x")
    with pytest.raises(DataError, match="Invalid schema type for ByteArrayConverter: STRING"):
        converter.from_connect_data("t", Schema.STRING, b"x")
    with pytest.raises(DataError, match="not compatible with objects of type str"):
        converter.from_connect_data("t", None, "x")


@pytest.mark.parametrize(
    ("converter", "value", "data"),
    [
        (ShortConverter(), -2, b"\xff\xfe"),
        (IntegerConverter(), 1, b"\x00\x00\x00\x01"),
        (LongConverter(), -(2**63), b"\x80" + b"\x00" * 7),
        (FloatConverter(), 1.5, b"\x3f\xc0\x00\x00"),
        (DoubleConverter(), 1.0, b"\x3f\xf0" + b"\x00" * 6),
    ],
)
def test_number_converters_are_big_endian(converter: Converter, value: float, data: bytes) -> None:
    assert converter.from_connect_data("t", None, value) == data
    assert converter.to_connect_data("t", data).value == value
    assert converter.from_connect_data("t", None, None) is None
    assert converter.to_connect_data("t", None).value is None


def test_number_converter_errors() -> None:
    with pytest.raises(DataError, match="Failed to serialize 40000 to short"):
        ShortConverter().from_connect_data("t", None, 40000)
    with pytest.raises(DataError, match=r"Failed to serialize to integer \(was float\)"):
        IntegerConverter().from_connect_data("t", None, 1.5)
    with pytest.raises(DataError, match="size of data received is 3, not 4"):
        IntegerConverter().to_connect_data("t", b"abc")
    assert math.isnan(FloatConverter().to_connect_data("t", b"\x7f\xc0\x00\x00").value)


def test_header_converter_text_forms() -> None:
    header = SimpleHeaderConverter()
    stamp = dt.datetime(2024, 1, 2, 3, 4, 5, 6000, tzinfo=dt.UTC)
    assert header.from_connect_header("t", "h", None, ["a", 'b"', None]) == b'["a","b\\"",null]'
    assert header.from_connect_header("t", "h", None, stamp) == b"2024-01-02T03:04:05.006Z"
    assert header.from_connect_header("t", "h", None, dt.date(2024, 1, 2)) == b"2024-01-02"
    assert header.from_connect_header("t", "h", Decimal.schema(1), decimal.Decimal("1.0")) == b"1.0"
    assert header.from_connect_header("t", "h", None, None) is None
    with pytest.raises(DataError, match="unexpected value type object"):
        header.from_connect_header("t", "h", None, object())


@pytest.mark.parametrize(
    ("text", "schema", "value"),
    [
        ("42", Schema.INT8, 42),
        ("40000", Schema.INT32, 40000),
        ("1.5", Schema.FLOAT32, 1.5),
        ("hello", Schema.STRING, "hello"),
        ("true", Schema.BOOLEAN, True),
        ("[1,300]", SchemaBuilder.array(Schema.INT16).build(), [1, 300]),
        ("[1,2.5]", SchemaBuilder.array(Schema.FLOAT32).build(), [1.0, 2.5]),
        ('{"a":"x"}', SchemaBuilder.map(Schema.STRING, Schema.STRING).build(), {"a": "x"}),
        ("[null,1]", Schema.STRING, "[null,1]"),
        ("[1,", Schema.STRING, "[1,"),
        ("", Schema.STRING, ""),
        ("99999999999999999999", Decimal.schema(0), decimal.Decimal("99999999999999999999")),
    ],
)
def test_header_values_parse_as_connect_infers(text: str, schema: Schema, value: object) -> None:
    assert parse_string(text) == SchemaAndValue(schema, value)


def test_header_text_round_trip_and_unknown_element_types() -> None:
    nested = {"k": [1, 2], "j": [3]}
    text = to_string(None, nested)
    assert text == '{"k":[1,2],"j":[3]}'
    assert parse_string(text).value == nested
    assert parse_string('[1,"a"]') == SchemaAndValue(None, [1, "a"])
    assert SimpleHeaderConverter().to_connect_header("t", "h", None) == SchemaAndValue.NULL


def test_factory_names_and_errors() -> None:
    assert isinstance(make_converter("JsonConverter", {}, True), JsonConverter)
    assert isinstance(
        make_converter("org.apache.kafka.connect.storage.StringConverter", {}, False),
        StringConverter,
    )
    assert isinstance(
        make_converter("spark_eos_connect.sink.runner.ByteArrayConverter", {}, False),
        ByteArrayConverter,
    )
    assert isinstance(
        make_converter("spark_eos_connect.converters.simple.LongConverter", {}, False),
        LongConverter,
    )
    assert isinstance(make_header_converter("SimpleHeaderConverter", {}), SimpleHeaderConverter)
    assert isinstance(make_header_converter("JsonConverter", {}), JsonConverter)
    unknown = r"Unknown converter .ProtobufConverter. for configuration value\.converter; known"
    with pytest.raises(ConfigError, match=unknown):
        make_converter("ProtobufConverter", {}, False)
    with pytest.raises(ConfigError, match=r"configuration key\.converter"):
        make_converter("io.confluent.connect.protobuf.ProtobufConverter", {}, True)
    with pytest.raises(ConfigError, match=r"header\.converter"):
        make_header_converter("org.apache.kafka.connect.nope.X", {})
    with pytest.raises(ConfigError, match="only a header converter"):
        make_converter("SimpleHeaderConverter", {}, False)
    assert "SimpleHeaderConverter" in known_converters()


def test_a_python_converter_class_by_path() -> None:
    converter = make_converter(f"{__name__}.Upper", {}, False)
    assert converter.from_connect_data("t", None, "a") == b"A"


class Upper(Converter):
    """A user's own converter."""

    def from_connect_data(self, topic: str, schema: Schema | None, value: object) -> bytes | None:
        return None if value is None else str(value).upper().encode()

    def to_connect_data(self, topic: str, data: bytes | None) -> SchemaAndValue:
        return SchemaAndValue(None, data)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.1, "0.1"),
        (1e7, "1.0E7"),
        (1234567.0, "1234567.0"),
        (0.001, "0.001"),
        (0.0001, "1.0E-4"),
        (1.401298464324817e-45, "1.4E-45"),
        (3.4028234663852886e38, "3.4028235E38"),
        (-0.0, "-0.0"),
        (math.nan, "NaN"),
        (-math.inf, "-Infinity"),
    ],
)
def test_java_float_to_string(value: float, text: str) -> None:
    assert _java.float_to_string(_java.float32(value)) == text


def test_java_decimal_to_string() -> None:
    assert _java.decimal_to_string(decimal.Decimal("0.0000001")) == "1E-7"
    assert _java.decimal_to_string(decimal.Decimal("-0.00")) == "0.00"
    assert _java.decimal_to_string(decimal.Decimal("1.23E+4")) == "1.23E+4"
    assert _java.double_to_string(math.inf) == "Infinity"
