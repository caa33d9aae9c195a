"""PostgreSQL text values as Debezium 3.6.1's PostgreSQL connector maps them.

Expected values come from Debezium's own tests (`AbstractRecordsProducerTest`,
`PostgresTemporalPrecisionHandlingIT` at v3.6.1.Final) or are computed with the formulas of
its source (`MicroDuration.durationMicros`, `Point.createValue`, `Bits`), never made up.
"""

from __future__ import annotations

import datetime as dt
import decimal
import struct
from typing import Any

import pytest

from spark_eos_connect.api.config import ConfigDef
from spark_eos_connect.api.data import Decimal, Schema, SchemaBuilder, Struct
from spark_eos_connect.connectors.postgres.cdc.schemas import (
    ColumnInfo,
    UncapturedType,
    captured,
    column_schema,
    parse_value,
    text_parser,
)
from spark_eos_connect.connectors.postgres.cdc.types import PgType
from spark_eos_connect.connectors.postgres.cdc.value_options import (
    DEFAULT_SETTINGS,
    ValueSettings,
    define_value_options,
)
from spark_eos_connect.errors import ConfigError, DataError

HSTORE = PgType(16500, "hstore", "b", "U")
MOOD = PgType(16600, "mood", "e", "E", labels=("sad", "ok", "happy"))


def col(oid: int, modifier: int = -1, pg_type: PgType | None = None) -> ColumnInfo:
    return ColumnInfo("c", oid, modifier, True, pg_type)


def read(column: ColumnInfo, text: str, **options: Any) -> Any:
    return parse_value(column, text, ValueSettings(**options))


def numeric(precision: int, scale: int) -> int:
    return (precision << 16 | scale) + 4


def named(builder: SchemaBuilder, name: str) -> Schema:
    return builder.name(name).version(1).optional().build()


# --- numbers (schemasAndValuesForNumericType, ...BigDecimalEncoded..., ...StringEncoded...) ------


@pytest.mark.parametrize(
    ("oid", "text", "expected"),
    [
        (21, "1", 1),
        (23, "123456", 123456),
        (20, "1234567890123", 1234567890123),
        (26, "4000000000", 4000000000),
        (16, "t", True),
        (16, "f", False),
    ],
)
def test_integers_and_booleans(oid: int, text: str, expected: Any) -> None:
    assert read(col(oid), text) == expected


def test_float_special_values_are_kept() -> None:
    assert read(col(701), "Infinity") == float("inf")
    assert read(col(700), "-Infinity") == float("-inf")
    assert read(col(701), "NaN") != read(col(701), "NaN")  # NaN
    assert read(col(700), "3.3") == 3.3
    assert column_schema(col(700)) == Schema.OPTIONAL_FLOAT32


def test_numeric_with_scale_is_a_decimal_with_its_precision() -> None:
    column = col(1700, numeric(6, 4))
    assert read(column, "22.2200") == decimal.Decimal("22.2200")
    assert (
        column_schema(column)
        == Decimal.builder(4).parameter("connect.decimal.precision", "6").optional().build()
    )


def variable(scale: int, unscaled: bytes) -> Struct:
    return Struct(column_schema(col(1700)), {"scale": scale, "value": unscaled})


def test_numeric_without_scale_is_a_variable_scale_decimal() -> None:
    assert read(col(1700), "10.1111") == variable(4, (101111).to_bytes(3, "big"))
    assert read(col(1700), "22") == variable(0, b"\x16")
    assert read(col(1700), "22.2200") == variable(2, (2222).to_bytes(2, "big"))  # stripped
    assert read(col(1700), "100") == variable(0, b"\x64")  # never below scale 0
    assert read(col(1700), "-128") == variable(0, b"\x80")


@pytest.mark.parametrize("text", ["NaN", "Infinity", "-Infinity"])
@pytest.mark.parametrize("modifier", [-1, numeric(6, 4)])
def test_numeric_special_values_fail_in_precise_mode(text: str, modifier: int) -> None:
    with pytest.raises(DataError, match=rf"column c: cannot read '{text}'.*decimal.handling"):
        read(col(1700, modifier), text)


def test_numeric_in_string_and_double_modes() -> None:
    assert read(col(1700, numeric(6, 4)), "22.2200", decimal_mode="string") == "22.2200"
    assert read(col(1700), "NaN", decimal_mode="string") == "NAN"
    assert read(col(1700), "Infinity", decimal_mode="string") == "POSITIVE_INFINITY"
    assert read(col(1700), "-Infinity", decimal_mode="string") == "NEGATIVE_INFINITY"
    assert read(col(1700), "22.2222", decimal_mode="double") == 22.2222
    assert read(col(1700), "-Infinity", decimal_mode="double") == float("-inf")
    assert column_schema(col(1700), ValueSettings(decimal_mode="double")) == (
        Schema.OPTIONAL_FLOAT64
    )


def test_money_follows_the_decimal_mode_and_fraction_digits() -> None:
    assert read(col(790), "$1,234.11") == decimal.Decimal("1234.11")
    assert read(col(790), "-$1,234.11") == decimal.Decimal("-1234.11")
    assert read(col(790), "$1,234.11", money_fraction_digits=1) == decimal.Decimal("1234.1")
    assert read(col(790), "$0.05", money_fraction_digits=1) == decimal.Decimal("0.1")  # HALF_UP
    assert read(col(790), "-$1,234.11", decimal_mode="string") == "-1234.11"
    assert read(col(790), "$1,234.11", decimal_mode="double") == 1234.11
    assert column_schema(col(790)) == Decimal.builder(2).optional().build()


# --- dates and times (schemaAndValuesForDateTimeTypes) -------------------------------------------


def test_timestamps_in_micros_and_millis() -> None:
    assert read(col(1114), "2016-11-04 13:51:30.123456") == 1478267490123456
    assert read(col(1114, 3), "2016-11-04 13:51:30.123") == 1478267490123
    negative = dt.datetime(1936, 10, 25, 22, 10, 12, 608000) - dt.datetime(1970, 1, 1)
    assert read(col(1114), "1936-10-25 22:10:12.608") == negative // dt.timedelta(microseconds=1)
    assert read(col(1114), "294247-01-01 23:59:59.999999") == 9223371331200000000 - 1
    assert read(col(1114), "4713-12-31 23:59:59.999999 BC") == -210831897600000001
    # 21016-11-04 is 50 Gregorian cycles of 146097 days after 1016-11-04
    since = dt.datetime(1016, 11, 4, 13, 51, 30) - dt.datetime(1970, 1, 1)
    seconds = (since.days + 50 * 146097) * 86_400 + since.seconds
    assert read(col(1114), "21016-11-04 13:51:30.123457") == seconds * 1_000_000 + 123457
    assert read(col(1114, 3), "21016-11-04 13:51:30.124") == seconds * 1000 + 124
    assert column_schema(col(1114)) == named(
        SchemaBuilder.int64(), "io.debezium.time.MicroTimestamp"
    )
    assert column_schema(col(1114, 3)) == named(SchemaBuilder.int64(), "io.debezium.time.Timestamp")


def test_timestamp_infinities_are_pgjdbcs_constants() -> None:
    assert read(col(1114), "infinity") == 9223372036825200000  # DATE_POSITIVE_INFINITY
    assert read(col(1114), "-infinity") == -9223372036832400000  # DATE_NEGATIVE_INFINITY
    assert read(col(1114, 3), "infinity") == 9223372036825200


def test_zoned_timestamps() -> None:
    assert read(col(1184), "2016-11-04 11:51:30.123456+00") == "2016-11-04T11:51:30.123456Z"
    assert read(col(1184), "21016-11-04 06:51:30+00") == "+21016-11-04T06:51:30.000000Z"
    assert read(col(1184), "294247-01-01 23:59:59.999999+00") == "+294247-01-01T23:59:59.999999Z"
    assert read(col(1184), "4714-12-31 23:59:59.999999+00 BC") == "-4713-12-31T23:59:59.999999Z"
    assert read(col(1184), "infinity") == "infinity"
    assert read(col(1184), "-infinity") == "-infinity"
    assert read(col(1184, 0), "2016-11-04 11:51:30+00") == "2016-11-04T11:51:30Z"
    assert read(col(1184, 2), "2016-11-04 11:51:30.12+00") == "2016-11-04T11:51:30.12Z"


def test_dates() -> None:
    assert read(col(1082), "2016-11-04") == 17109
    assert read(col(1082), "0044-03-15 BC") == -735160
    # the epoch days of -5877611-06-21 and -06-22, Debezium's stand-ins for the infinities
    assert read(col(1082), "infinity") == -2147472692
    assert read(col(1082), "-infinity") == -2147472691
    assert read(col(1082), "2016-11-04", time_precision_mode="connect") == dt.date(2016, 11, 4)
    with pytest.raises(DataError, match="column c: cannot read 'infinity'"):
        read(col(1082), "infinity", time_precision_mode="connect")


def test_times() -> None:
    assert read(col(1083), "13:51:30") == 49890000000
    assert read(col(1083, 3), "13:51:30.123") == 49890123
    assert read(col(1083), "24:00:00") == 86_400_000_000
    assert read(col(1083, 3), "13:51:30.123", time_precision_mode="adaptive_time_microseconds") == (
        49890123000
    )
    assert read(col(1083), "13:51:30.123", time_precision_mode="connect") == dt.time(
        13, 51, 30, 123000
    )
    assert read(col(1266), "13:51:30.123789+02") == "11:51:30.123789Z"
    assert read(col(1266), "13:51:30.123+02") == "11:51:30.123Z"
    assert read(col(1266), "01:00:00+02") == "23:00:00Z"


def test_intervals() -> None:
    days = (1 * 12 + 2) * (365.25 / 12.0) + 3
    expected = int(((((days * 24 + 4) * 60) + 5) * 60 + 6.78) * 1e6)  # durationMicros
    assert read(col(1186), "P1Y2M3DT4H5M6.78S") == expected
    assert read(col(1186), "P1Y2M3DT4H5M6.78S", interval_mode="string") == "P1Y2M3DT4H5M6.78S"
    assert read(col(1186), "PT0S", interval_mode="string") == "P0Y0M0DT0H0M0S"
    assert read(col(1186), "P-1DT-0.5S") == -86_400_500_000
    assert column_schema(col(1186)) == named(
        SchemaBuilder.int64(), "io.debezium.time.MicroDuration"
    )


# --- binary, bits, point (schemaAndValuesForBinTypes, ...ForByteaX, ...ForGeomTypes) -------------


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("bytes", b"\x01\x02\x03"),
        ("hex", "010203"),
        ("base64", "AQID"),
        ("base64-url-safe", "AQID"),
    ],
)
def test_bytea_binary_modes(mode: str, expected: Any) -> None:
    assert read(col(17), "\\x010203", binary_mode=mode) == expected


def test_bytea_arrays() -> None:
    assert read(col(1001), '{"\\\\x000102","\\\\x030405"}', binary_mode="base64") == [
        "AAEC",
        "AwQF",
    ]


@pytest.mark.parametrize(
    ("oid", "modifier", "text", "expected", "length"),
    [
        (1560, 1, "0", False, None),
        (1562, 1, "1", True, None),
        (1560, 2, "11", b"\x03", "2"),
        (1560, 7, "1000000", b"\x40", "7"),
        (1562, 2, "00", b"", "2"),
        (1562, 24, "000000110000001000000001", b"\x01\x02\x03", "24"),
        (1562, 64, "1" + "0" * 63, b"\0" * 7 + b"\x80", "64"),
        (1562, -1, "101", b"\x05", "2147483647"),
        (1562, -1, "111011010001000110000001000000001", bytes([1, 2, 35, 218, 1]), "2147483647"),
    ],
)
def test_bits(oid: int, modifier: int, text: str, expected: Any, length: str | None) -> None:
    column = col(oid, modifier)
    assert read(column, text) == expected
    if length is not None:
        assert column_schema(column).parameters == {"length": length}
        assert column_schema(column).name == "io.debezium.data.Bits"


def test_point_is_debeziums_struct_with_wkb() -> None:
    value = read(col(600), "(1,1)")
    assert value.schema.name == "io.debezium.data.geometry.Point"
    assert value.to_dict() == {
        "x": 1.0,
        "y": 1.0,
        "wkb": bytes.fromhex("0101000000000000000000f03f000000000000f03f"),
        "srid": None,
    }
    assert read(col(600), "(-2.5,1e+300)").get("wkb") == struct.pack("<BIdd", 1, 1, -2.5, 1e300)


# --- strings and extension types (schemasAndValuesForTextTypes, ...HStore..., ...Custom...) -----


@pytest.mark.parametrize(
    ("oid", "name"),
    [
        (2950, "io.debezium.data.Uuid"),
        (114, "io.debezium.data.Json"),
        (3802, "io.debezium.data.Json"),
        (142, "io.debezium.data.Xml"),
        (3614, "io.debezium.data.Tsvector"),
    ],
)
def test_named_strings(oid: int, name: str) -> None:
    assert column_schema(col(oid)) == named(SchemaBuilder.string(), name)
    assert text_parser(col(oid)) is None


@pytest.mark.parametrize("oid", [1042, 869, 650, 829, 774, 3904, 3906, 3908, 3910, 3912, 3926])
def test_text_types_are_plain_strings(oid: int) -> None:
    assert column_schema(col(oid)) == Schema.OPTIONAL_STRING


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('"key"=>"val"', '{"key":"val"}'),
        (
            '"key1"=>"val1", "key2"=>"val2", "key3"=>"val3"',
            '{"key1":"val1","key2":"val2","key3":"val3"}',
        ),
        ('"key4"=>"val4", "key5"=>NULL', '{"key5":null,"key4":"val4"}'),
        ('"key1"=>"val1", "key2"=>NULL', '{"key1":"val1","key2":null}'),
        ('"key 2"=>" ##123 78", "key_#1"=>"val 1"', '{"key_#1":"val 1","key 2":" ##123 78"}'),
        ("", "{}"),
    ],
)
def test_hstore_as_json_in_debeziums_order(text: str, expected: str) -> None:
    column = col(HSTORE.oid, pg_type=HSTORE)
    assert read(column, text) == expected
    assert column_schema(column) == named(SchemaBuilder.string(), "io.debezium.data.Json")


def test_hstore_escapes_as_jackson_does() -> None:
    assert read(col(1, pg_type=HSTORE), '"a\\"b"=>"c\\\\d\x01\n"') == '{"a\\"b":"c\\\\d\\u0001\\n"}'


def test_hstore_as_a_map() -> None:
    column = col(HSTORE.oid, pg_type=HSTORE)
    assert read(column, '"key4"=>"val4", "key5"=>NULL', hstore_mode="map") == {
        "key4": "val4",
        "key5": None,
    }
    schema = column_schema(column, ValueSettings(hstore_mode="map"))
    assert schema == SchemaBuilder.map(Schema.STRING, Schema.OPTIONAL_STRING).optional().build()


def test_hstore_arrays() -> None:
    array = PgType(16501, "_hstore", "b", "A", element=HSTORE)
    text = '{"\\"key4\\"=>\\"val4\\", \\"key5\\"=>NULL","\\"key6\\"=>\\"val6\\""}'
    assert read(col(array.oid, pg_type=array), text) == [
        '{"key5":null,"key4":"val4"}',
        '{"key6":"val6"}',
    ]


def test_enums_carry_their_labels() -> None:
    column = col(MOOD.oid, pg_type=MOOD)
    assert column_schema(column).parameters == {"allowed": "sad,ok,happy"}
    assert column_schema(column).name == "io.debezium.data.Enum"
    assert parse_value(column, "ok") == "ok"


def test_enum_arrays_have_required_elements() -> None:
    array = PgType(16601, "_mood", "b", "A", element=MOOD)
    schema = column_schema(col(array.oid, pg_type=array))
    assert schema.value_schema is not None and not schema.value_schema.optional
    assert read(col(array.oid, pg_type=array), "{sad,happy}") == ["sad", "happy"]


def test_domains_map_as_their_base_with_the_domains_modifier() -> None:
    base = PgType(1700, "numeric", "b", "N")
    domain = PgType(16700, "price", "d", "N", base=base, base_modifier=numeric(10, 2))
    column = col(domain.oid, pg_type=domain)
    assert column_schema(column).parameters == {"scale": "2", "connect.decimal.precision": "10"}
    assert read(column, "1.50") == decimal.Decimal("1.50")


def test_ltree_and_citext() -> None:
    ltree = PgType(16800, "ltree", "b", "U")
    citext = PgType(16900, "citext", "b", "S")
    assert column_schema(col(1, pg_type=ltree)).name == "io.debezium.data.Ltree"
    assert column_schema(col(1, pg_type=citext)) == Schema.OPTIONAL_STRING
    lt_array = PgType(16801, "_ltree", "b", "A", element=ltree)
    assert read(col(1, pg_type=lt_array), "{Ship.Frigate,Ship.Destroyer}") == [
        "Ship.Frigate",
        "Ship.Destroyer",
    ]


# --- arrays (schemasAndValuesForArrayTypes) ------------------------------------------------------


def test_arrays_of_mapped_types() -> None:
    assert read(col(1007), "{1,2,3}") == [1, 2, 3]
    assert read(col(1016), "{1550166368505037572}") == [1550166368505037572]
    assert read(col(1014, 14), '{"cone      ","ctwo      "}') == ["cone      ", "ctwo      "]
    assert read(col(1182), "{2016-11-04,2016-11-05}") == [17109, 17110]
    assert read(col(1231, numeric(10, 2)), "{1.20,3.40}") == [
        decimal.Decimal("1.20"),
        decimal.Decimal("3.40"),
    ]
    assert read(col(1231), "{1.1,2.22}") == [variable(1, b"\x0b"), variable(2, b"\x00\xde")]
    assert read(col(3909), '{"[\\"2019-03-31 15:30:00\\",infinity)"}') == [
        '["2019-03-31 15:30:00",infinity)'
    ]
    assert read(col(199), '{"{\\"bar\\": \\"baz\\"}"}') == ['{"bar": "baz"}']
    assert read(col(1028), "{3,4000000000}") == [3, 4_000_000_000]
    assert read(col(1009), '{one,NULL,"NULL",""}') == ["one", None, "NULL", ""]
    assert read(col(1007), "[0:1]={5,6}") == [5, 6]
    assert read(col(1007), "{}") == []
    schema = column_schema(col(1231, numeric(10, 2)))
    assert (
        schema.value_schema
        == Decimal.builder(2).parameter("connect.decimal.precision", "10").optional().build()
    )


def test_range_arrays_from_the_catalog_are_captured() -> None:
    int4range = PgType(3904, "int4range", "r", "R")
    ranges = PgType(3905, "_int4range", "b", "A", element=int4range)
    assert captured(col(3905, pg_type=ranges))
    assert column_schema(col(3905, pg_type=ranges)) == (
        SchemaBuilder.array(Schema.OPTIONAL_STRING).optional().build()
    )
    assert read(col(3905, pg_type=ranges), '{"[1,2)",NULL}') == ["[1,2)", None]


def test_an_ltree_array_with_a_null_element_is_null() -> None:
    ltree = PgType(16800, "ltree", "b", "U")
    lt_array = PgType(16801, "_ltree", "b", "A", element=ltree)
    # Debezium's converter fails on the null element: a null value (converting failure: warn)
    assert read(col(1, pg_type=lt_array), "{Ship.Frigate,NULL}") is None


@pytest.mark.parametrize("mode", ["precise", "double", "string"])
def test_a_numeric_array_with_a_special_element_is_null(mode: str) -> None:
    # pgjdbc cannot read NaN or infinities as BigDecimals: Debezium has a null value
    for text in ("{1,NaN}", "{Infinity}", "{-Infinity,NULL}"):
        assert read(col(1231), text, decimal_mode=mode) is None
        assert read(col(1231, numeric(10, 2)), text, decimal_mode=mode) is None
    assert read(col(1231), "{1.5,NULL}", decimal_mode="string") == ["1.5", None]


def test_date_and_time_arrays_are_read_as_pgjdbcs_java_sql_values() -> None:
    """Values Debezium 3.6.1 gave on a real server (test_debezium_types_parity): an array's
    elements are java.sql.Date/Timestamp values of Java's hybrid Julian/Gregorian calendar."""
    assert read(col(1182), "{infinity,-infinity,NULL}") == [-622191234, -625821272, None]
    assert read(col(1182), '{"0044-03-15 BC",1582-10-10,1000-01-01}') == [
        -703383,  # the era dropped: 0044-03-15
        -141422,  # the calendar change's gap: 1582-10-20
        -354285,
    ]
    assert read(col(1115), '{"1582-10-10 12:00:00","0044-03-15 12:00:00.5 BC"}') == [
        -12218817600000000,
        -63517953599500000,  # a Julian date: 0044-03-13 BC in the proleptic calendar
    ]
    assert read(col(1115), '{"1000-01-01 00:00:00",infinity,-infinity}') == [
        -30609792000000000,
        9223372036825200000,
        -9223372036832400000,
    ]
    assert read(col(1115, 3), '{"1000-01-01 00:00:00"}') == [-30609792000000]
    assert read(col(1185), '{"1582-10-10 12:00:00+00","0044-03-15 12:00:00+00 BC"}') == [
        "1582-10-20T12:00:00.000000Z",
        "0044-03-15T12:00:00.000000Z",
    ]
    # scalars are read as Debezium's stream reads their text (its snapshot differs: see there)
    assert read(col(1082), "0044-03-15 BC") == -735160
    assert read(col(1082), "1582-10-10") == -141432


def test_multi_dimensional_arrays_are_refused() -> None:
    with pytest.raises(DataError, match=r"column c: cannot read '\{\{1,2\},\{3,4\}\}'.*multi"):
        read(col(1007), "{{1,2},{3,4}}")


@pytest.mark.parametrize("oid", [791, 1003, 1187, 1563, 143, 1017, 718, 603, 3615, 3220])
def test_types_debezium_leaves_out(oid: int) -> None:
    assert not captured(col(oid))
    with pytest.raises(UncapturedType, match=r"column c: type .* no Debezium mapping"):
        column_schema(col(oid))


def test_a_bad_value_names_the_column_and_the_value() -> None:
    with pytest.raises(DataError, match=r"column c: cannot read 'twelve'"):
        read(col(23), "twelve")
    with pytest.raises(DataError, match=r"column c: cannot read 'P9999999999Y'.*32-bit"):
        read(col(1186), "P9999999999Y")


# --- options -------------------------------------------------------------------------------------


def test_options_default_to_debeziums_and_refuse_what_is_not_implemented() -> None:
    config_def = define_value_options(ConfigDef())
    parsed = config_def.parse({})
    assert ValueSettings.from_config(parsed) == DEFAULT_SETTINGS
    chosen = config_def.parse({"decimal.handling.mode": "STRING", "money.fraction.digits": "3"})
    settings = ValueSettings.from_config(chosen)
    assert (settings.decimal_mode, settings.money_fraction_digits) == ("string", 3)
    with pytest.raises(ConfigError, match=r"time\.precision\.mode='isostring' is not supported"):
        config_def.parse({"time.precision.mode": "isostring"})
    with pytest.raises(ConfigError, match=r"binary\.handling\.mode"):
        config_def.parse({"binary.handling.mode": "octal"})
