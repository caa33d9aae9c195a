"""The Java behaviours the SMTs reproduce: regexes, SimpleDateFormat, Values, HashMap, numbers."""

from __future__ import annotations

import decimal
import math

import pytest

from spark_eos_connect.api.config import ConfigType
from spark_eos_connect.api.data import Schema
from spark_eos_connect.converters.values import parse_string
from spark_eos_connect.errors import DataError
from spark_eos_connect.protocol.java_hashmap import hashmap_order
from spark_eos_connect.transforms import builtin_plugins
from spark_eos_connect.transforms._dateformat import (
    DateFormatError,
    JavaDateFormat,
    UnparseableDateError,
)
from spark_eos_connect.transforms._hashmap import JavaHashMap, java_hashmap, java_hashset_order
from spark_eos_connect.transforms._jnumbers import (
    big_decimal,
    narrow_int,
    parse_java_double,
    parse_java_int,
    to_float32,
    truncate_double,
)
from spark_eos_connect.transforms._jregex import (
    JavaPatternError,
    compile_java_regex,
    expand,
    java_replacement,
)
from spark_eos_connect.transforms._values import format_java_date
from spark_eos_connect.transforms.headers import literal
from spark_eos_connect.transforms.registry import BUILTIN_PREDICATES, BUILTIN_TRANSFORMS


@pytest.mark.parametrize(
    ("pattern", "text", "matches"),
    [
        ("(?<name>a+)b", "aab", True),
        ("(?<=a)b", "b", False),
        ("\\QA.B\\E", "A.B", True),
        ("\\p{Alpha}+\\P{Digit}", "abc-", True),
        ("[\\p{Digit}x]+", "1x2", True),
        ("\\d+", "١٢", False),  # Java's \\d is ASCII only
        ("a\\z", "a", True),
        ("[]a]+", "]a", True),
        ("\\h", " ", True),
    ],
)
def test_java_patterns(pattern: str, text: str, matches: bool) -> None:
    assert (compile_java_regex(pattern).fullmatch(text) is not None) is matches


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        ("[a-z&&[^e]]", "intersections"),
        ("[a[b]]", "nested character classes"),
        ("[a&&b]", "intersections"),
        ("\\p{InGreek}", "not supported"),
        ("(", "missing"),
    ],
)
def test_untranslatable_patterns_are_refused(pattern: str, message: str) -> None:
    with pytest.raises(JavaPatternError, match=message):
        compile_java_regex(pattern)


def test_java_replacements() -> None:
    pattern = compile_java_regex("(a)(b)(?<c>c)")
    match = pattern.fullmatch("abc")
    assert match is not None
    assert expand(java_replacement("$2$1 ${c} \\$1 $10 $3x", pattern), match) == "ba c $1 a0 cx"
    for bad, message in [
        ("x\\", "character to be escaped is missing"),
        ("$", "group index is missing"),
        ("$x", "Illegal group reference"),
        ("$4", "No group 4"),
        ("${d}", "No group with name"),
        ("${c", "missing trailing"),
    ]:
        with pytest.raises(JavaPatternError, match=message):
            java_replacement(bad, pattern)


def test_date_format_round_trips_and_leniency() -> None:
    fmt = JavaDateFormat("yyyy-MM-dd'T'HH:mm:ss.SSSZ")
    assert fmt.format(1700000000123) == "2023-11-14T22:13:20.123+0000"
    assert fmt.parse("2023-11-14T22:13:20.123+0000") == 1700000000123
    assert fmt.parse("2023-11-15T00:13:20.123+0200") == 1700000000123
    lenient = JavaDateFormat("yyyy-MM-dd")
    assert lenient.parse("2023-02-30") == JavaDateFormat("yyyy-MM-dd").parse("2023-03-02")
    assert lenient.parse("2023-13-01trailing") == lenient.parse("2024-01-01")
    assert JavaDateFormat("yyyyMMdd").parse("20231114") == lenient.parse("2023-11-14")
    assert JavaDateFormat("hh:mm a").parse("12:30 AM") == 30 * 60_000
    assert JavaDateFormat("hh:mm a").parse("12:30 pm") == 12 * 3_600_000 + 30 * 60_000
    assert JavaDateFormat("d MMMM yyyy").parse("3 march 2020") == lenient.parse("2020-03-03")
    assert JavaDateFormat("G yyyy-MM-dd").format(-62135769600001) == "BC 0001-12-31"
    assert JavaDateFormat("yyyy-MM-dd").format(-12219292800001) == "1582-10-04"  # Julian
    assert JavaDateFormat("yyyy").format(253402300800000) == "10000"
    with pytest.raises(UnparseableDateError):
        lenient.parse("x2023")
    with pytest.raises(UnparseableDateError, match="week-based"):
        JavaDateFormat("YYYY").parse("2023")
    for bad in ("yyyy-bb", "'open"):
        with pytest.raises(DateFormatError):
            JavaDateFormat(bad)


def test_values_parse_string_and_date_text() -> None:
    assert parse_string("").schema == Schema.STRING
    assert parse_string(None).schema is None
    assert parse_string("-129").schema == Schema.INT16
    assert parse_string("0.5").schema == Schema.FLOAT32
    assert parse_string("1e-320").value == 0.0  # float32 underflows to 0 and is kept
    assert parse_string("1e39").schema == Schema.FLOAT64
    assert parse_string('{"a":[1,2],"b":[3]}').value == {"a": [1, 2], "b": [3]}
    assert parse_string("[1,,2]").value == "[1,,2]"
    # Connect gives these an array or map schema without element schema: InsertHeader refuses
    for text in ("[true, 1]", "[null]", "{}"):
        assert parse_string(text).schema is None
        with pytest.raises(DataError, match="no common element type"):
            literal(text)
    import datetime as dt

    assert format_java_date(dt.date(2024, 1, 2)) == "2024-01-02"
    assert format_java_date(dt.time(1, 2, 3, 4000)) == "01:02:03.004Z"
    assert format_java_date(dt.datetime(2024, 1, 2, 3, 4, 5)) == "2024-01-02T03:04:05.000Z"
    assert format_java_date(dt.datetime(1969, 12, 31, 23, 0)) == "23:00:00.000Z"  # < one day


def test_hashmap_order_matches_the_protocol_model() -> None:
    keys = [f"k{i}" for i in range(50)]
    assert list(java_hashmap(dict.fromkeys(keys, 0))) == hashmap_order(keys)
    copied = JavaHashMap.copy_of({"c": 1, "a": 2, "b": 3})
    copied.put("zz", 4)
    copied.remove("a")
    assert "a" not in copied and len(copied) == 3 and copied.get("zz") == 4
    assert list(copied.to_dict()) == [
        k for k in hashmap_order(["c", "a", "b", "zz"], initial_capacity=8) if k != "a"
    ]
    assert java_hashset_order(["b", "a"]) == hashmap_order(["b", "a"])
    assert list(java_hashmap({5: "x", 1: "y"})) == [1, 5]  # Long.hashCode of small longs
    # 2**40 and -1 both hash to bucket 0 (Long.hashCode folds the halves): insertion order
    assert list(java_hashmap({2**40: "x", -1: "y"})) == [2**40, -1]


def test_java_numbers() -> None:
    assert narrow_int(300, 8) == 44 and narrow_int(-129, 8) == 127
    assert narrow_int(1e20, 32) == 2**31 - 1 and narrow_int(1e20, 64) == 2**63 - 1
    assert narrow_int(-3.99, 16) == -3 and narrow_int(float("nan"), 8) == 0
    assert narrow_int(1e10, 8) == narrow_int(2**31 - 1, 8)
    assert truncate_double(float("-inf"), 32) == -(2**31)
    assert math.isinf(to_float32(1e300))
    assert parse_java_int("+5", 8) == 5
    for bad in ("1.0", " 1", "0x1", "128"):
        with pytest.raises(ValueError):
            parse_java_int(bad, 8)
    assert parse_java_double(" 1.5e3d ") == 1500.0 and math.isnan(parse_java_double("NaN"))
    assert parse_java_double("-Infinity") == float("-inf")
    for bad in ("1_0", "inf", "0x1p3", ""):
        with pytest.raises(ValueError):
            parse_java_double(bad)
    assert big_decimal("1E+5") == decimal.Decimal("1E+5")
    with pytest.raises(ValueError):
        big_decimal("NaN")


def test_registry_lists_every_builtin_with_its_options() -> None:
    transforms = builtin_plugins("transformation")
    predicates = builtin_plugins("predicate")
    assert [p.class_name for p in transforms] == sorted(BUILTIN_TRANSFORMS)
    assert len(transforms) == 24 and len(predicates) == 3
    assert {p.class_name.rsplit(".", 1)[1] for p in predicates} == {
        "HasHeaderKey",
        "RecordIsTombstone",
        "TopicNameMatches",
    }
    aliases = {p.alias for p in transforms if p.alias}
    assert aliases == {
        "DropHeaders",
        "Filter",
        "InsertHeader",
        "RegexRouter",
        "TimestampRouter",
        "ValueToKey",
    }
    by_name = {p.class_name: p for p in transforms}
    cast = by_name["org.apache.kafka.connect.transforms.Cast$Value"]
    assert cast.config_def.keys["spec"].type is ConfigType.LIST and cast.overview
    for plugin in [*transforms, *predicates]:
        assert plugin.overview, plugin.class_name
        assert plugin.config_def.to_markdown(plugin.class_name).startswith("## ")
        for key in plugin.config_def.keys.values():
            assert key.doc, (plugin.class_name, key.name)
    assert sorted(BUILTIN_PREDICATES) == [p.class_name for p in predicates]
