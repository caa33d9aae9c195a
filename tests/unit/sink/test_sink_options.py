"""`sink.options`: the sink writer's options are checked when parsed, naming what is wrong."""

from __future__ import annotations

import pytest

from spark_eos_connect.errors import ConfigError
from spark_eos_connect.sink.options import (
    SINK_FRAMEWORK_CONFIG,
    check_sink_options,
    parse_sink_options,
    sink_config_problems,
)


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("value.converter", "ProtobufConverter", "Unknown converter 'ProtobufConverter'"),
        ("header.converter", "Nope", "configuration header.converter"),
        ("key.converter.schemas.enable", "maybe", r"key\.converter\.schemas\.enable"),
    ],
)
def test_converter_options_are_checked_when_parsed(option: str, value: str, message: str) -> None:
    options = {"name": "n", "connector.class": "c", "kafka.bootstrap.servers": "b"}
    if option.endswith("schemas.enable"):
        options["key.converter"] = "JsonConverter"
    with pytest.raises(ConfigError, match=message):
        parse_sink_options({**options, option: value})


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"name": "n", "connector.class": "c"}, "kafka.bootstrap.servers"),
        ({"connector.class": "c", "kafka.bootstrap.servers": "b"}, "name"),
        ({"name": "n", "connector.class": "c", "kafka.bootstrap.servers": "b",
          "value.converter": "Nope"}, "Unknown converter"),
        ({"name": "n", "connector.class": "c", "kafka.bootstrap.servers": "b",
          "errors.tolerance": "some"}, "errors.tolerance"),
    ],
)  # fmt: skip
def test_bad_sink_options_say_what_is_wrong(options: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_sink_options(options)


class CountingProvider:
    """A config provider answering every key with `all`, counting its `get` calls."""

    calls = 0

    def get(self, path: str, keys: set[str]) -> dict[str, str]:
        CountingProvider.calls += 1
        return {key: "all" for key in keys}


def test_the_options_are_parsed_once_the_check_on_the_way() -> None:
    CountingProvider.calls = 0
    options = {
        "name": "n",
        "connector.class": "c",
        "kafka.bootstrap.servers": "b",
        "config.providers": "count",
        "config.providers.count.class": f"{__name__}.CountingProvider",
        "errors.tolerance": "${count:tolerance}",
    }

    parsed, problems = check_sink_options(options)

    assert problems == {}
    assert parsed is not None
    assert parsed.errors.tolerate_all  # from the resolved value, not the raw reference
    assert CountingProvider.calls == 1
    assert parse_sink_options(options) == parsed


def test_a_check_with_problems_returns_no_options() -> None:
    parsed, problems = check_sink_options({"name": "n", "connector.class": "c", "tasks.max": "0"})

    assert parsed is None
    assert set(problems) == {"kafka.bootstrap.servers", "tasks.max"}
    assert sink_config_problems({"name": "n", "connector.class": "c", "tasks.max": "0"}) == problems


def test_takeover_has_one_definition_for_sources_and_sinks() -> None:
    from spark_eos_connect.runtime.config.framework_config import FRAMEWORK_CONFIG, TAKEOVER

    assert SINK_FRAMEWORK_CONFIG.keys[TAKEOVER] is FRAMEWORK_CONFIG.keys[TAKEOVER]
    parsed = parse_sink_options(
        {"name": "n", "connector.class": "c", "kafka.bootstrap.servers": "b", "takeover": "TRUE"}
    )
    assert parsed.values[TAKEOVER] is True
    with pytest.raises(ConfigError, match="takeover"):
        parse_sink_options(
            {"name": "n", "connector.class": "c", "kafka.bootstrap.servers": "b", "takeover": "y"}
        )
