"""`sink.options`: the sink writer's options are checked when parsed, naming what is wrong."""

from __future__ import annotations

import pytest

from spark_eos_connect.errors import ConfigError
from spark_eos_connect.sink.options import parse_sink_options


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
