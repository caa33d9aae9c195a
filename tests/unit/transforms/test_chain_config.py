"""The chain's configuration: parsing, every validation problem, warnings, user classes."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from spark_eos_connect.api.config import InvalidConfigError
from spark_eos_connect.errors import ConfigError, DataError
from spark_eos_connect.transforms import (
    CHAIN_CONFIG,
    ConnectRecord,
    Header,
    TransformationError,
    parse_transform_chain,
    transform_config_problems,
    transform_config_warnings,
    validate_transform_config,
)
from spark_eos_connect.transforms.field_edits import InsertFieldValue
from spark_eos_connect.transforms.predicates import TopicNameMatches
from spark_eos_connect.transforms.routing import Filter, RegexRouter

T = "org.apache.kafka.connect.transforms."


def test_no_transforms_is_an_empty_chain() -> None:
    for props in ({}, {"transforms": ""}, {"transforms": "  "}, {"connector.class": "X"}):
        chain = parse_transform_chain(props)
        assert not chain and len(chain) == 0
        record = ConnectRecord("t", value=1)
        assert chain.apply(record) is record
    assert validate_transform_config({}) == []


def test_aliases_keep_their_order_and_build_their_classes() -> None:
    chain = parse_transform_chain(
        {
            "transforms": " route , ins,drop ",
            "transforms.route.type": "RegexRouter",
            "transforms.route.regex": "a",
            "transforms.route.replacement": "b",
            "transforms.ins.type": T + "InsertField$Value",
            "transforms.ins.static.field": "s",
            "transforms.ins.static.value": "v",
            "transforms.drop.type": T + "Filter",
            "transforms.drop.predicate": "isB",
            "transforms.drop.negate": "true",
            "predicates": "isB",
            "predicates.isB.type": T + "predicates.TopicNameMatches",
            "predicates.isB.pattern": "b",
        }
    )
    assert chain.aliases == ["route", "ins", "drop"]
    route, ins, drop = chain.stages
    assert isinstance(route.transformation, RegexRouter) and route.predicate is None
    assert isinstance(ins.transformation, InsertFieldValue)
    assert isinstance(drop.transformation, Filter)
    assert isinstance(drop.predicate, TopicNameMatches)
    assert drop.predicate_alias == "isB" and drop.negate is True
    routed = chain.apply(ConnectRecord("a", value={}))
    assert routed is not None and routed.topic == "b" and routed.value == {"s": "v"}
    assert chain.apply(ConnectRecord("c", value={})) is None  # not b, negated: dropped
    assert chain.apply_all([ConnectRecord("a", value={}), ConnectRecord("c", value={})]) == [routed]
    chain.close()


def test_python_values_are_accepted_like_strings() -> None:
    chain = parse_transform_chain(
        {
            "transforms": ["drop"],
            "transforms.drop.type": Filter,
            "transforms.drop.predicate": "p",
            "transforms.drop.negate": False,
            "predicates": ["p"],
            "predicates.p.type": "RecordIsTombstone",
        }
    )
    assert chain.apply(ConnectRecord("t", value=None)) is None
    assert chain.apply(ConnectRecord("t", value=1)) is not None


def _problems(props: dict[str, Any]) -> dict[str, list[str]]:
    problems = transform_config_problems(props)
    messages = validate_transform_config(props)
    assert messages == [m for ms in problems.values() for m in ms]
    with pytest.raises(InvalidConfigError) as raised:
        parse_transform_chain(props)
    assert raised.value.problems == problems
    return problems


@pytest.mark.parametrize(
    ("props", "key", "expected"),
    [
        ({"transforms": "a,a", "transforms.a.type": "Filter"}, "transforms", "Duplicate alias"),
        ({"transforms": "a,,b"}, "transforms", "an alias is empty"),
        (
            {"predicates": "p,p", "predicates.p.type": "RecordIsTombstone"},
            "predicates",
            "Duplicate",
        ),
        ({"transforms": "a"}, "transforms.a.type", "Missing required configuration"),
        ({"transforms": "a", "transforms.a.type": " "}, "transforms.a.type", "Missing required"),
        ({"transforms": "a", "transforms.a.type": "Nope"}, "transforms.a.type", "class not found"),
        (
            {"transforms": "a", "transforms.a.type": T + "Nope"},
            "transforms.a.type",
            "not a Kafka Connect transformation class",
        ),
        (
            {"transforms": "a", "transforms.a.type": T + "SetSchemaMetadata$Value"},
            "transforms.a.type",
            "not implemented here",
        ),
        (
            {"transforms": "a", "transforms.a.type": "TopicNameMatches"},
            "transforms.a.type",
            "class not found",
        ),
        (
            {"transforms": "a", "transforms.a.type": "json.JSONDecoder"},
            "transforms.a.type",
            "is not a transformation",
        ),
        (
            {"predicates": "p", "predicates.p.type": "RegexRouter"},
            "predicates.p.type",
            "class not found",
        ),
        (
            {"transforms": "r", "transforms.r.type": "RegexRouter", "transforms.r.regex": "x"},
            "transforms.r.replacement",
            'Missing required configuration "transforms.r.replacement"',
        ),
        (
            {
                "transforms": "r",
                "transforms.r.type": "RegexRouter",
                "transforms.r.regex": "(",
                "transforms.r.replacement": "x",
            },
            "transforms.r.regex",
            "Invalid regex",
        ),
        (
            {
                "transforms": "r",
                "transforms.r.type": "RegexRouter",
                "transforms.r.regex": "(a)",
                "transforms.r.replacement": "$2",
            },
            "transforms.r.replacement",
            "No group 2",
        ),
        (
            {"transforms": "f", "transforms.f.type": "Filter", "transforms.f.predicate": "p"},
            "transforms.f.predicate",
            "no predicate 'p' is declared in predicates",
        ),
        (
            {"transforms": "f", "transforms.f.type": "Filter", "transforms.f.negate": "true"},
            "transforms.f.negate",
            "there is no config 'transforms.f.predicate'",
        ),
        (
            {
                "transforms": "f",
                "transforms.f.type": "Filter",
                "transforms.f.predicate": "p",
                "transforms.f.negate": "yes",
                "predicates": "p",
                "predicates.p.type": "RecordIsTombstone",
            },
            "transforms.f.negate",
            "expected BOOLEAN",
        ),
        (
            {"predicates": "p", "predicates.p.type": "TopicNameMatches"},
            "predicates.p.pattern",
            'Missing required configuration "predicates.p.pattern"',
        ),
        (
            {
                "predicates": "p",
                "predicates.p.type": "TopicNameMatches",
                "predicates.p.pattern": "[",
            },
            "predicates.p.pattern",
            "Invalid regex",
        ),
        (
            {"predicates": "p", "predicates.p.type": "HasHeaderKey", "predicates.p.name": ""},
            "predicates.p.name",
            "non-empty",
        ),
        (
            {"transforms": "i", "transforms.i.type": T + "InsertField$Key"},
            "transforms.i.topic.field",
            "No field insertion configured",
        ),
        (
            {
                "transforms": "i",
                "transforms.i.type": T + "InsertField$Key",
                "transforms.i.static.field": "s",
            },
            "transforms.i.static.value",
            "no value specified for static field 's'",
        ),
        (
            {"transforms": "c", "transforms.c.type": T + "Cast$Value", "transforms.c.spec": "a:b"},
            "transforms.c.spec",
            "invalid type found in casting spec: b",
        ),
        (
            {
                "transforms": "c",
                "transforms.c.type": T + "Cast$Value",
                "transforms.c.spec": "a:map",
            },
            "transforms.c.spec",
            "does not support casting to MAP",
        ),
        (
            {
                "transforms": "c",
                "transforms.c.type": T + "Cast$Value",
                "transforms.c.spec": "int8,a:int16",
            },
            "transforms.c.spec",
            "may only specify a single cast",
        ),
        (
            {"transforms": "c", "transforms.c.type": T + "Cast$Value", "transforms.c.spec": ""},
            "transforms.c.spec",
            "at least one field to cast",
        ),
        (
            {
                "transforms": "r",
                "transforms.r.type": T + "ReplaceField$Value",
                "transforms.r.renames": "a:b,c",
            },
            "transforms.r.renames",
            "Invalid rename mapping: c",
        ),
        (
            {
                "transforms": "m",
                "transforms.m.type": T + "MaskField$Value",
                "transforms.m.fields": "",
            },
            "transforms.m.fields",
            "must not be empty",
        ),
        (
            {
                "transforms": "m",
                "transforms.m.type": T + "MaskField$Value",
                "transforms.m.fields": "a",
                "transforms.m.replacement": "",
            },
            "transforms.m.replacement",
            "non-empty",
        ),
        (
            {
                "transforms": "h",
                "transforms.h.type": T + "HeaderFrom$Value",
                "transforms.h.fields": "a,b",
                "transforms.h.headers": "x",
                "transforms.h.operation": "copy",
            },
            "transforms.h.headers",
            "same number of elements",
        ),
        (
            {
                "transforms": "h",
                "transforms.h.type": T + "HeaderFrom$Value",
                "transforms.h.fields": "a",
                "transforms.h.headers": "x",
                "transforms.h.operation": "swap",
            },
            "transforms.h.operation",
            "move, copy",
        ),
        (
            {
                "transforms": "ts",
                "transforms.ts.type": T + "TimestampConverter$Value",
                "transforms.ts.target.type": "string",
            },
            "transforms.ts.format",
            "requires format option",
        ),
        (
            {
                "transforms": "ts",
                "transforms.ts.type": T + "TimestampConverter$Value",
                "transforms.ts.target.type": "unix",
                "transforms.ts.format": "yyyy-bb",
            },
            "transforms.ts.format",
            "Illegal pattern character 'b'",
        ),
        (
            {
                "transforms": "ts",
                "transforms.ts.type": T + "TimestampConverter$Value",
                "transforms.ts.target.type": "timestamp",
            },
            "transforms.ts.target.type",
            "string, unix, Date, Time, Timestamp",
        ),
        (
            {
                "transforms": "ts",
                "transforms.ts.type": T + "TimestampConverter$Value",
                "transforms.ts.target.type": "unix",
                "transforms.ts.unix.precision": "minutes",
            },
            "transforms.ts.unix.precision",
            "nanoseconds, microseconds, milliseconds, seconds",
        ),
        (
            {
                "transforms": "tr",
                "transforms.tr.type": "TimestampRouter",
                "transforms.tr.timestamp.format": "'open",
            },
            "transforms.tr.timestamp.format",
            "Unterminated quote",
        ),
        (
            {
                "transforms": "e",
                "transforms.e.type": T + "ExtractField$Key",
                "transforms.e.field": "`a.b",
                "transforms.e.field.syntax.version": "V2",
            },
            "transforms.e.field",
            "Incomplete backtick pair",
        ),
        (
            {
                "transforms": "e",
                "transforms.e.type": T + "ExtractField$Key",
                "transforms.e.field": "a",
                "transforms.e.field.syntax.version": "V3",
            },
            "transforms.e.field.syntax.version",
            "V1, V2",
        ),
        (
            {
                "transforms": "ih",
                "transforms.ih.type": "InsertHeader",
                "transforms.ih.header": "h",
                "transforms.ih.value.literal": "[]",
            },
            "transforms.ih.value.literal",
            "no common element type",
        ),
        (
            {"transforms": "dh", "transforms.dh.type": "DropHeaders"},
            "transforms.dh.headers",
            'Missing required configuration "transforms.dh.headers"',
        ),
        (
            {"transforms": "v", "transforms.v.type": T + "ValueToKey", "transforms.v.fields": ","},
            "transforms.v.fields",
            "must not be empty",
        ),
        (
            {"transforms": "ho", "transforms.ho.type": T + "HoistField$Value"},
            "transforms.ho.field",
            'Missing required configuration "transforms.ho.field"',
        ),
    ],
)
def test_each_problem_names_its_key(props: dict[str, Any], key: str, expected: str) -> None:
    problems = _problems(props)
    assert key in problems, problems
    assert any(expected in message for message in problems[key]), problems[key]
    assert all(key in message for message in problems[key]) or key in (
        "transforms",
        "predicates",
    ), problems[key]


def test_every_problem_is_reported_at_once() -> None:
    problems = _problems(
        {
            "transforms": "a,b,c",
            "transforms.a.type": "Nope",
            "transforms.b.type": "RegexRouter",
            "transforms.b.negate": "true",
            "transforms.c.type": "Filter",
            "transforms.c.predicate": "missing",
            "predicates": "p",
            "predicates.p.type": "TopicNameMatches",
        }
    )
    assert set(problems) == {
        "transforms.a.type",
        "transforms.b.regex",
        "transforms.b.replacement",
        "transforms.b.negate",
        "transforms.c.predicate",
        "predicates.p.pattern",
    }


def test_warnings_name_options_nothing_reads() -> None:
    warnings = transform_config_warnings(
        {
            "transforms": "r,d",
            "transforms.r.type": T + "ReplaceField$Value",
            "transforms.r.whitelist": "a",
            "transforms.r.include": "a,b,a",
            "transforms.r.typo": "1",
            "transforms.d.type": "DropHeaders",
            "transforms.d.headers": "x",
            "transforms.gone.type": "Filter",
            "predicates.nobody.type": "RecordIsTombstone",
        }
    )
    assert any("transforms.r.whitelist" in w and "use 'include'" in w for w in warnings)
    assert any("transforms.r.include repeats names" in w for w in warnings)
    assert any("transforms.r.typo is not an option of ReplaceFieldValue" in w for w in warnings)
    assert any("transforms.gone.type is ignored" in w for w in warnings)
    assert any("predicates.nobody.type is ignored" in w for w in warnings)
    assert not any("transforms.d." in w for w in warnings)
    assert len(warnings) == 5


USER_MODULE = """
from spark_eos_connect.api.config import ConfigDef, ConfigType
from spark_eos_connect.transforms import Transformation, Predicate


class Upper(Transformation):
    CONFIG_DEF = ConfigDef().define("suffix", ConfigType.STRING, "")
    closed = []

    def setup(self, values):
        self.suffix = values["suffix"]

    def apply(self, record):
        return record.new_record(value=record.value.upper() + self.suffix)

    def close(self):
        Upper.closed.append(self.suffix)


class Plain:
    \"\"\"Duck-typed: no base class, no close().\"\"\"

    def configure(self, configs):
        self.configs = dict(configs)

    def apply(self, record):
        return record.new_record(topic=record.topic + "-" + self.configs["tag"])


class IsShort:
    def configure(self, configs):
        self.limit = int(configs.get("limit", 3))

    def test(self, record):
        return len(record.value) <= self.limit


class Broken(Transformation):
    def apply(self, record):
        raise ValueError("boom")


class Described:
    \"\"\"Duck-typed with a config_def(): its options are validated like a built-in's.\"\"\"

    @classmethod
    def config_def(cls):
        return ConfigDef().define("level", ConfigType.INT)

    def configure(self, configs):
        self.level = int(configs["level"])

    def apply(self, record):
        return record


class BadConfigure:
    def configure(self, configs):
        raise RuntimeError("cannot start")

    def apply(self, record):
        return record
"""


@pytest.fixture
def user_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    (tmp_path / "my_smts.py").write_text(textwrap.dedent(USER_MODULE))
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "my_smts"
    sys.modules.pop("my_smts", None)


def test_a_users_python_classes_run_in_the_chain(user_module: str) -> None:
    chain = parse_transform_chain(
        {
            "transforms": "up,plain",
            "transforms.up.type": f"{user_module}.Upper",
            "transforms.up.suffix": "!",
            "transforms.up.predicate": "short",
            "transforms.plain.type": f"{user_module}.Plain",
            "transforms.plain.tag": "x",
            "predicates": "short",
            "predicates.short.type": f"{user_module}.IsShort",
            "predicates.short.limit": "3",
        }
    )
    assert chain.apply(ConnectRecord("t", value="abc")) == ConnectRecord("t-x", value="ABC!")
    assert chain.apply(ConnectRecord("t", value="abcd")) == ConnectRecord("t-x", value="abcd")
    chain.close()
    assert sys.modules[user_module].Upper.closed == ["!"]


def test_a_users_class_is_validated_with_its_config_def(user_module: str) -> None:
    problems = _problems({"transforms": "u", "transforms.u.type": f"{user_module}.Nothing"})
    assert "class not found" in problems["transforms.u.type"][0]
    problems = _problems({"transforms": "u", "transforms.u.type": f"{user_module}.IsShort"})
    assert "is not a transformation" in problems["transforms.u.type"][0]
    problems = _problems({"transforms": "d", "transforms.d.type": f"{user_module}.Described"})
    missing = 'Missing required configuration "transforms.d.level"'
    assert missing in problems["transforms.d.level"][0]
    problems = _problems(
        {
            "transforms": "d",
            "transforms.d.type": f"{user_module}.Described",
            "transforms.d.level": "x",
        }
    )
    assert "expected INT" in problems["transforms.d.level"][0]
    assert transform_config_warnings(
        {"transforms": "d", "transforms.d.type": f"{user_module}.Described", "transforms.d.x": "1"}
    ) == ["transforms.d.x is not an option of Described and is ignored (its options: level)"]
    with pytest.raises(ConfigError, match=r"Configuring transformation 'b'.*cannot start"):
        parse_transform_chain(
            {"transforms": "b", "transforms.b.type": f"{user_module}.BadConfigure"}
        )


def test_a_failing_stage_names_alias_class_and_cause(user_module: str) -> None:
    chain = parse_transform_chain({"transforms": "b", "transforms.b.type": f"{user_module}.Broken"})
    with pytest.raises(TransformationError) as raised:
        chain.apply(ConnectRecord("t", value=1))
    error = raised.value
    assert error.alias == "b" and error.class_name.endswith("Broken") and not error.in_predicate
    assert isinstance(error.__cause__, ValueError) and "boom" in str(error)
    chain = parse_transform_chain(
        {
            "transforms": "i",
            "transforms.i.type": T + "InsertField$Value",
            "transforms.i.topic.field": "t",
        }
    )
    with pytest.raises(TransformationError, match=r"'i' \(.*InsertField\$Value\)") as raised:
        chain.apply(ConnectRecord("t", value=5))
    assert isinstance(raised.value.cause, DataError)
    assert "Only Map objects supported in absence of schema for [field insertion]" in str(
        raised.value
    )


def test_a_failing_predicate_is_reported_as_such(user_module: str) -> None:
    chain = parse_transform_chain(
        {
            "transforms": "f",
            "transforms.f.type": "Filter",
            "transforms.f.predicate": "short",
            "predicates": "short",
            "predicates.short.type": f"{user_module}.IsShort",
        }
    )
    with pytest.raises(TransformationError) as raised:
        chain.apply(ConnectRecord("t", value=None))
    assert raised.value.in_predicate and "predicate of transformation 'f'" in str(raised.value)


def test_headers_survive_a_chain() -> None:
    chain = parse_transform_chain(
        {
            "transforms": "r",
            "transforms.r.type": "RegexRouter",
            "transforms.r.regex": ".*",
            "transforms.r.replacement": "x",
        }
    )
    record = ConnectRecord("t", value=1, headers=(Header("h", 1),))
    result = chain.apply(record)
    assert result is not None and result.headers == record.headers


def test_chain_options_are_documented() -> None:
    assert CHAIN_CONFIG.names() == ["transforms", "predicates"]
    assert "transforms.<alias>.negate" in CHAIN_CONFIG.to_markdown()
