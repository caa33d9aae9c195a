"""What every converter is: bytes to and from Connect data (`org.apache.kafka.connect.storage`).

A `Converter` turns a record key or value into bytes (`from_connect_data`) and back
(`to_connect_data`); a `HeaderConverter` does the same for one header value. Every `Converter`
here can also serve as a header converter, as Connect's built-in ones do. Options arrive without
their prefix (`schemas.enable`, not `value.converter.schemas.enable`) plus `converter.type`.
"""

from __future__ import annotations

import dataclasses
import enum
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from spark_eos_connect.api.config import ConfigDef, InvalidConfigError
from spark_eos_connect.api.data import Schema, SchemaAndValue
from spark_eos_connect.errors import ConfigError

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = [
    "TYPE_CONFIG",
    "ConnectColumn",
    "Converter",
    "ConverterType",
    "HeaderConverter",
    "parse_options",
]

TYPE_CONFIG = "converter.type"


class ConverterType(enum.Enum):
    """What a converter instance converts; its value is Connect's `converter.type`."""

    KEY = "key"
    VALUE = "value"
    HEADER = "header"


def parse_options(definition: ConfigDef, configs: Mapping[str, Any], prefix: str) -> dict[str, Any]:
    """Parse `configs` with `definition`; problems name the full option (`prefix` + name).

    Options `definition` does not know are ignored, as Connect's converters ignore them.
    """
    prefixed = ConfigDef(
        dataclasses.replace(key, name=prefix + key.name) for key in definition.keys.values()
    )
    try:
        values = prefixed.parse({prefix + str(k): v for k, v in configs.items()})
    except InvalidConfigError as error:
        raise ConfigError(str(error)) from None
    return {name[len(prefix) :]: value for name, value in values.items()}


class HeaderConverter(ABC):
    """Converts one header value to bytes and back (Connect's `HeaderConverter`)."""

    config_def: ClassVar[ConfigDef] = ConfigDef()
    """The options this converter reads (without prefix)."""

    def __init__(self) -> None:
        self._options: dict[str, Any] = {}
        self.converter_type = ConverterType.VALUE
        self.configure({}, ConverterType.VALUE)

    def configure(
        self, configs: Mapping[str, Any], converter_type: ConverterType, prefix: str = ""
    ) -> None:
        """Read the options; `prefix` (e.g. `value.converter.`) only names options in errors."""
        self._options = parse_options(self.config_def, configs, prefix)
        self.converter_type = converter_type

    @abstractmethod
    def from_connect_header(
        self, topic: str, header_key: str, schema: Schema | None, value: Any
    ) -> bytes | None:
        """The header's bytes (None for a null value)."""

    @abstractmethod
    def to_connect_header(self, topic: str, header_key: str, data: bytes | None) -> SchemaAndValue:
        """The header's schema and value."""


ConnectColumn = tuple[list[Schema | None], list[Any]]
"""The schemas and the values of a column of records (what `to_connect_column` returns)."""


class Converter(HeaderConverter):
    """Converts a record key or value to bytes and back (Connect's `Converter`)."""

    @abstractmethod
    def from_connect_data(self, topic: str, schema: Schema | None, value: Any) -> bytes | None:
        """The bytes to write for `value` (None for a tombstone)."""

    @abstractmethod
    def to_connect_data(self, topic: str, data: bytes | None) -> SchemaAndValue:
        """The schema and value the bytes stand for."""

    def to_connect_column(self, topic: str, data: pa.Array) -> ConnectColumn:
        """`to_connect_data` of every value of a binary Arrow array, as two lists (schemas,
        values). Raises if any value fails: the caller then converts them one by one with
        `to_connect_data` to find which. Converters override it to convert the whole column
        at once; this default converts value by value."""
        results = [self.to_connect_data(topic, item) for item in data.to_pylist()]
        return [r.schema for r in results], [r.value for r in results]

    def from_connect_header(
        self, topic: str, header_key: str, schema: Schema | None, value: Any
    ) -> bytes | None:
        """As `from_connect_data`."""
        return self.from_connect_data(topic, schema, value)

    def to_connect_header(self, topic: str, header_key: str, data: bytes | None) -> SchemaAndValue:
        """As `to_connect_data`."""
        return self.to_connect_data(topic, data)
