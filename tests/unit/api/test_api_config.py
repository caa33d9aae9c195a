"""ConfigDef: parsing, collected errors, validators, validate reports and markdown docs."""

from __future__ import annotations

from typing import Any

import pytest

from spark_eos_connect.api.config import (
    HIDDEN,
    NO_DEFAULT,
    ConfigDef,
    ConfigType,
    InvalidConfigError,
    NonEmptyList,
    NonEmptyString,
    Password,
    Range,
    ValidString,
    parse_value,
    props_with_prefix,
    unknown_options,
)
from spark_eos_connect.errors import ConfigError


def sample_def() -> ConfigDef:
    return (
        ConfigDef()
        .define("topic", ConfigType.STRING, validator=NonEmptyString(), importance="high")
        .define("tasks.max", ConfigType.INT, 1, Range.at_least(1), doc="Most tasks.")
        .define("ratio", ConfigType.DOUBLE, 0.5, Range.between(0, 1), importance="low")
        .define("enabled", ConfigType.BOOLEAN, "false")
        .define("hosts", ConfigType.LIST, "a, b")
        .define("size", ConfigType.LONG, 10)
        .define("secret", ConfigType.PASSWORD, None)
        .define("mode", ConfigType.STRING, "poll", ValidString.one_of("poll", "interval"))
        .define("klass", ConfigType.CLASS, None)
    )


def test_parse_converts_strings_to_types() -> None:
    values = sample_def().parse(
        {
            "topic": " events ",
            "tasks.max": "3",
            "ratio": "0.25",
            "enabled": "TRUE",
            "hosts": " x ,y,  z ",
            "size": str(2**40),
            "secret": "s3cr3t",
            "mode": "interval",
            "klass": "pkg.mod.Cls",
        }
    )
    assert values == {
        "topic": "events",
        "tasks.max": 3,
        "ratio": 0.25,
        "enabled": True,
        "hosts": ["x", "y", "z"],
        "size": 2**40,
        "secret": Password("s3cr3t"),
        "mode": "interval",
        "klass": "pkg.mod.Cls",
    }


def test_parse_applies_parsed_defaults() -> None:
    values = sample_def().parse({"topic": "t"})
    assert values["tasks.max"] == 1
    assert values["enabled"] is False
    assert values["hosts"] == ["a", "b"]
    assert values["secret"] is None
    assert values["klass"] is None


def test_parse_accepts_already_typed_values() -> None:
    values = sample_def().parse(
        {"topic": "t", "tasks.max": 2, "ratio": 1, "enabled": True, "hosts": ["q"]}
    )
    assert values["tasks.max"] == 2
    assert values["ratio"] == 1.0
    assert values["enabled"] is True
    assert values["hosts"] == ["q"]


def test_parse_collects_every_problem_naming_option_expectation_and_value() -> None:
    with pytest.raises(InvalidConfigError) as caught:
        sample_def().parse(
            {"tasks.max": "zero", "ratio": "2", "enabled": "yes", "mode": "Poll", "size": "1.5"}
        )
    message = str(caught.value)
    assert "6 problems" in message
    assert set(caught.value.problems) == {"topic", "tasks.max", "ratio", "enabled", "mode", "size"}
    assert 'Missing required configuration "topic"' in message
    assert "non-empty string" in message
    assert "'zero'" in message and "tasks.max" in message and "INT (32-bit integer)" in message
    assert "valid values [1,...]" in message
    assert "ratio" in message and "no more than 1" in message
    assert "'yes'" in message and "BOOLEAN" in message
    assert "'Poll'" in message and "poll, interval" in message
    assert "'1.5'" in message and "LONG" in message


def test_config_error_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        sample_def().parse({})
    with pytest.raises(ConfigError):
        sample_def().parse({})


def test_passwords_are_hidden_in_errors_and_reprs() -> None:
    config_def = ConfigDef().define(
        "secret", ConfigType.PASSWORD, validator=ValidString.one_of("x")
    )
    with pytest.raises(ConfigError) as caught:
        config_def.parse({"secret": "hunter2"})
    assert "hunter2" not in str(caught.value)
    assert HIDDEN in str(caught.value)
    with pytest.raises(ConfigError) as caught_type:
        ConfigDef().define("secret", ConfigType.PASSWORD).parse({"secret": 12345})
    assert "12345" not in str(caught_type.value)
    password = Password("hunter2")
    assert repr(password) == str(password) == HIDDEN
    assert f"{password}" == HIDDEN
    assert password.value == "hunter2"
    assert "hunter2" not in repr({"p": password})


def test_int_range_is_32_bit_and_long_is_64_bit() -> None:
    with pytest.raises(ConfigError, match="out of range"):
        parse_value("n", str(2**31), ConfigType.INT)
    assert parse_value("n", str(2**31), ConfigType.LONG) == 2**31
    with pytest.raises(ConfigError, match="out of range"):
        parse_value("n", 2**63, ConfigType.LONG)


@pytest.mark.parametrize(
    ("config_type", "raw"),
    [
        (ConfigType.INT, True),
        (ConfigType.INT, "1e3"),
        (ConfigType.DOUBLE, "abc"),
        (ConfigType.DOUBLE, False),
        (ConfigType.BOOLEAN, "1"),
        (ConfigType.STRING, 5),
        (ConfigType.LIST, 5),
        (ConfigType.CLASS, "  "),
    ],
)
def test_parse_value_rejects_wrong_types(config_type: ConfigType, raw: Any) -> None:
    with pytest.raises(ConfigError, match=config_type.name):
        parse_value("opt", raw, config_type)


def test_lists_split_on_commas_and_empty_string_is_empty_list() -> None:
    assert parse_value("l", "", ConfigType.LIST) == []
    assert parse_value("l", "a", ConfigType.LIST) == ["a"]
    assert parse_value("l", ("a", 1), ConfigType.LIST) == ["a", "1"]


def test_none_stays_none() -> None:
    assert parse_value("x", None, ConfigType.INT) is None


def test_unknown_options_are_ignored_by_default_and_reported_when_asked() -> None:
    config_def = ConfigDef().define("a", ConfigType.STRING, "x")
    props = {"a": "1", "kafka.bootstrap.servers": "b:9092", "typo.option": "v", "name": "c"}
    assert config_def.parse(props) == {"a": "1"}
    with pytest.raises(InvalidConfigError) as caught:
        config_def.parse(props, allow_unknown_prefixes=("kafka.", "name"))
    assert caught.value.problems == {"typo.option": ["Unknown configuration typo.option"]}
    assert config_def.unknown_options(props, ("kafka.",)) == ["name", "typo.option"]
    assert unknown_options(props, ["a", "name"], ["kafka."]) == ["typo.option"]


def test_props_with_prefix() -> None:
    props = {"kafka.acks": "all", "kafka.linger.ms": "5", "topic": "t"}
    assert props_with_prefix(props, "kafka.") == {"acks": "all", "linger.ms": "5"}
    assert props_with_prefix(props, "kafka.", strip=False) == {
        "kafka.acks": "all",
        "kafka.linger.ms": "5",
    }


def test_define_rejects_duplicates_bad_importance_and_invalid_defaults() -> None:
    config_def = ConfigDef().define("a", ConfigType.INT, 1)
    with pytest.raises(ConfigError, match="defined twice"):
        config_def.define("a", ConfigType.INT, 2)
    with pytest.raises(ConfigError, match="importance"):
        ConfigDef().define("b", ConfigType.INT, 1, importance="urgent")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="at least 5"):
        ConfigDef().define("c", ConfigType.INT, 1, Range.at_least(5))
    with pytest.raises(ConfigError, match="INT"):
        ConfigDef().define("d", ConfigType.INT, "many")


def test_keys_are_ordered_read_only_and_know_required() -> None:
    config_def = sample_def()
    assert list(config_def.keys)[:2] == ["topic", "tasks.max"]
    assert config_def.keys["topic"].required
    assert config_def.keys["topic"].default is NO_DEFAULT
    assert not config_def.keys["tasks.max"].required
    assert "topic" in config_def and len(config_def) == 9
    with pytest.raises(TypeError):
        config_def.keys["x"] = config_def.keys["topic"]  # type: ignore[index]


def test_merge_combines_and_rejects_conflicting_definitions() -> None:
    first = ConfigDef().define("a", ConfigType.INT, 1)
    second = ConfigDef().define("a", ConfigType.INT, 1).define("b", ConfigType.STRING, "x")
    merged = first.merge(second)
    assert merged.names() == ["a", "b"]
    assert first.names() == ["a"]
    with pytest.raises(ConfigError, match="defined differently"):
        first.merge(ConfigDef().define("a", ConfigType.INT, 2))


def test_validators_describe_valid_values() -> None:
    assert str(Range.at_least(1)) == "[1,...]"
    assert str(Range.between(0, 10)) == "[0,...,10]"
    assert str(ValidString.one_of("a", "b")) == "[a, b]"
    assert str(ValidString.one_of("a", case_insensitive=True)) == "[a] (case-insensitive)"
    assert str(NonEmptyString()) == "non-empty string"
    assert str(NonEmptyList()) == "non-empty list"
    with pytest.raises(ValueError):
        Range.between(2, 1)


def test_valid_string_is_case_sensitive_unless_asked() -> None:
    ValidString.one_of("poll")("m", "poll")
    with pytest.raises(ConfigError, match="must be one of: poll"):
        ValidString.one_of("poll")("m", "POLL")
    ValidString.one_of("poll", case_insensitive=True)("m", "POLL")
    with pytest.raises(ConfigError):
        ValidString.one_of("poll")("m", None)


def test_range_and_non_empty_validators() -> None:
    Range.between(1, 3)("n", 3)
    with pytest.raises(ConfigError, match="at least 1"):
        Range.between(1, 3)("n", 0)
    with pytest.raises(ConfigError, match="number"):
        Range.at_least(0)("n", None)
    NonEmptyString()("s", None)
    with pytest.raises(ConfigError, match="non-empty"):
        NonEmptyString()("s", "")
    NonEmptyList()("l", ["a"])
    with pytest.raises(ConfigError, match="at least one"):
        NonEmptyList()("l", [])


def test_custom_callable_validator() -> None:
    def even(name: str, value: Any) -> None:
        if value % 2:
            raise ConfigError(f"{name} must be even, not {value}")

    config_def = ConfigDef().define("n", ConfigType.INT, 2, even)
    assert config_def.parse({"n": "4"}) == {"n": 4}
    with pytest.raises(ConfigError, match="n must be even, not 3"):
        config_def.parse({"n": "3"})


def test_validate_reports_each_option_without_raising() -> None:
    reports = {r.name: r for r in sample_def().validate({"tasks.max": "0", "secret": "pw"})}
    assert reports["topic"].errors and "Missing required" in reports["topic"].errors[0]
    assert reports["tasks.max"].value == 0
    assert "at least 1" in reports["tasks.max"].errors[0]
    assert reports["ratio"].errors == []
    assert reports["mode"].recommended_values == ["poll", "interval"]
    assert reports["enabled"].recommended_values == [True, False]
    assert reports["secret"].to_dict() == {
        "name": "secret",
        "value": HIDDEN,
        "recommended_values": [],
        "errors": [],
        "visible": True,
    }
    assert reports["hosts"].to_dict()["value"] == "a,b"
    assert reports["enabled"].to_dict()["recommended_values"] == ["true", "false"]
    assert reports["topic"].to_dict()["value"] is None


def test_validate_keeps_unparseable_value_as_given() -> None:
    (report,) = ConfigDef().define("n", ConfigType.INT, 1).validate({"n": "abc"})
    assert report.value == "abc"
    assert "INT" in report.errors[0]


def test_to_markdown_is_stable_and_sorted_required_then_importance_then_name() -> None:
    config_def = (
        ConfigDef()
        .define("z.low", ConfigType.INT, 5, Range.at_least(0), importance="low", doc="Low | one.")
        .define("b.high", ConfigType.STRING, "", importance="high", doc="High.")
        .define("a.med", ConfigType.PASSWORD, "pw", doc="Secret.")
        .define("req", ConfigType.LIST, importance="low", doc="Needed.\nReally.")
    )
    text = config_def.to_markdown("Options")
    assert text == config_def.to_markdown("Options")
    assert text.splitlines() == [
        "## Options",
        "",
        "| Name | Type | Default | Valid values | Importance | Description |",
        "| --- | --- | --- | --- | --- | --- |",
        "| `req` | list | (required) |  | low | Needed. Really. |",
        '| `b.high` | string | "" |  | high | High. |',
        "| `a.med` | password | [hidden] |  | medium | Secret. |",
        "| `z.low` | int | `5` | [0,...] | low | Low \\| one. |",
    ]
    assert "pw" not in text
    assert not ConfigDef().to_markdown().startswith("#")
