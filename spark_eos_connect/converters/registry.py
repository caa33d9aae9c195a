"""Converters by name: Connect's class names, their short names, or a Python class path.

`make_converter(name, configs, is_key)` builds the `key.converter`/`value.converter`,
`make_header_converter(name, configs)` the `header.converter`; `configs` are the options without
their `<key|value|header>.converter.` prefix. Unknown names fail with a `ConfigError` naming the
option and listing the known converters; options a converter does not know are ignored.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from spark_eos_connect.converters.avro_converter import AvroConverter
from spark_eos_connect.converters.base import Converter, ConverterType, HeaderConverter
from spark_eos_connect.converters.json_converter import JsonConverter
from spark_eos_connect.converters.json_schema_converter import JsonSchemaConverter
from spark_eos_connect.converters.simple import (
    ByteArrayConverter,
    DoubleConverter,
    FloatConverter,
    IntegerConverter,
    LongConverter,
    ShortConverter,
    SimpleHeaderConverter,
    StringConverter,
)
from spark_eos_connect.errors import ConfigError

__all__ = ["CONVERTERS", "known_converters", "make_converter", "make_header_converter"]

CONVERTERS: dict[str, type[HeaderConverter]] = {
    "org.apache.kafka.connect.json.JsonConverter": JsonConverter,
    "org.apache.kafka.connect.storage.StringConverter": StringConverter,
    "org.apache.kafka.connect.converters.ByteArrayConverter": ByteArrayConverter,
    "org.apache.kafka.connect.converters.ShortConverter": ShortConverter,
    "org.apache.kafka.connect.converters.IntegerConverter": IntegerConverter,
    "org.apache.kafka.connect.converters.LongConverter": LongConverter,
    "org.apache.kafka.connect.converters.FloatConverter": FloatConverter,
    "org.apache.kafka.connect.converters.DoubleConverter": DoubleConverter,
    "org.apache.kafka.connect.storage.SimpleHeaderConverter": SimpleHeaderConverter,
    "io.confluent.connect.avro.AvroConverter": AvroConverter,
    "io.confluent.connect.json.JsonSchemaConverter": JsonSchemaConverter,
}
"""Connect's class name to the Python converter."""

_ALIASES: dict[str, type[HeaderConverter]] = {}
for _java_name, _cls in CONVERTERS.items():
    _ALIASES[_java_name] = _cls
    _ALIASES[_java_name.rpartition(".")[2]] = _cls
    _ALIASES[f"{_cls.__module__}.{_cls.__qualname__}"] = _cls
for _short in ("ByteArrayConverter", "StringConverter", "JsonConverter"):
    # the names the sink runner's own converters answered to before this package
    _ALIASES[f"spark_eos_connect.sink.runner.{_short}"] = _ALIASES[_short]


def known_converters() -> list[str]:
    """The short names, sorted."""
    return sorted(name.rpartition(".")[2] for name in CONVERTERS)


def _resolve(name: str, option: str) -> type[HeaderConverter]:
    wanted = name.strip()
    found = _ALIASES.get(wanted)
    if found is not None:
        return found
    module_name, _, attribute = wanted.rpartition(".")
    if module_name and not wanted.startswith(("org.apache.kafka.", "io.confluent.")):
        try:
            candidate = getattr(importlib.import_module(module_name), attribute)
        except (ImportError, AttributeError, ValueError):
            candidate = None
        if isinstance(candidate, type) and issubclass(candidate, HeaderConverter):
            return candidate
    raise ConfigError(
        f"Unknown converter {name!r} for configuration {option}; known converters: "
        f"{', '.join(known_converters())} (Connect's class names work too, and a Python path "
        "to a Converter subclass)"
    )


def _configured(
    cls: type[HeaderConverter],
    configs: Mapping[str, Any],
    converter_type: ConverterType,
    option: str,
) -> HeaderConverter:
    converter = cls()
    converter.configure(configs, converter_type, f"{option}.")
    return converter


def make_converter(name: str, configs: Mapping[str, Any], is_key: bool) -> Converter:
    """The configured `key.converter` (`is_key`) or `value.converter` called `name`."""
    option = "key.converter" if is_key else "value.converter"
    cls = _resolve(name, option)
    if not issubclass(cls, Converter):
        raise ConfigError(
            f"Invalid value {name!r} for configuration {option}: {cls.__name__} is only a "
            "header converter"
        )
    converter = _configured(
        cls, configs, ConverterType.KEY if is_key else ConverterType.VALUE, option
    )
    assert isinstance(converter, Converter)
    return converter


def make_header_converter(name: str, configs: Mapping[str, Any]) -> HeaderConverter:
    """The configured `header.converter` called `name`."""
    return _configured(
        _resolve(name, "header.converter"), configs, ConverterType.HEADER, "header.converter"
    )
