"""`org.apache.kafka.connect.json.JsonConverter`: Connect data as JSON, with or without schemas.

Options: `schemas.enable` (default true: every key/value is an envelope
`{"schema":...,"payload":...}`), `decimal.format` (`BASE64` default, or `NUMERIC`),
`replace.null.with.default` (default true: a null with a default is written/read as the
default), `schemas.cache.size` (default 1000: schemas remembered in each direction).
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any, ClassVar, Generic, TypeVar

import pyarrow as pa

from spark_eos_connect.api.config import ConfigDef, ConfigType, Range, ValidString
from spark_eos_connect.api.data import Schema, SchemaAndValue
from spark_eos_connect.converters.base import ConnectColumn, Converter, ConverterType
from spark_eos_connect.converters.json_read import JsonReader, parse_json
from spark_eos_connect.converters.json_write import JsonWriter
from spark_eos_connect.errors import DataError

__all__ = ["JsonConverter"]

SCHEMAS_ENABLE = "schemas.enable"
SCHEMAS_CACHE_SIZE = "schemas.cache.size"
DECIMAL_FORMAT = "decimal.format"
REPLACE_NULL_WITH_DEFAULT = "replace.null.with.default"

K = TypeVar("K")
V = TypeVar("V")


class _LruCache(Generic[K, V]):
    """A small least-recently-used cache."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._items: OrderedDict[K, V] = OrderedDict()

    def get(self, key: K) -> V | None:
        found = self._items.get(key)
        if found is not None:
            self._items.move_to_end(key)
        return found

    def put(self, key: K, value: V) -> None:
        if self._size <= 0:
            return
        self._items[key] = value
        self._items.move_to_end(key)
        while len(self._items) > self._size:
            self._items.popitem(last=False)

    def __len__(self) -> int:
        return len(self._items)


_ENVELOPE_ERROR = (
    'JsonConverter with schemas.enable requires "schema" and "payload" fields and may not '
    "contain additional fields. If you are trying to deserialize plain JSON data, set "
    "schemas.enable=false in your converter configuration."
)


class JsonConverter(Converter):
    """Connect's JsonConverter: writes Jackson's exact bytes, reads envelopes or plain JSON."""

    config_def: ClassVar[ConfigDef] = (
        ConfigDef()
        .define(
            SCHEMAS_ENABLE,
            ConfigType.BOOLEAN,
            True,
            None,
            "high",
            "Include schemas within each of the serialized values and keys.",
        )
        .define(
            SCHEMAS_CACHE_SIZE,
            ConfigType.INT,
            1000,
            Range.at_least(0),
            "high",
            "The maximum number of schemas that can be cached in this converter instance.",
        )
        .define(
            DECIMAL_FORMAT,
            ConfigType.STRING,
            "BASE64",
            ValidString.one_of("BASE64", "NUMERIC", case_insensitive=True),
            "low",
            "How decimals are written: BASE64 (their unscaled bytes) or NUMERIC (a JSON number).",
        )
        .define(
            REPLACE_NULL_WITH_DEFAULT,
            ConfigType.BOOLEAN,
            True,
            None,
            "low",
            "Replace a null that has a default value with the default (else keep null).",
        )
    )

    def configure(
        self, configs: Mapping[str, Any], converter_type: ConverterType, prefix: str = ""
    ) -> None:
        """Read the options and reset the schema caches."""
        super().configure(configs, converter_type, prefix)
        options = self._options
        self.schemas_enable: bool = options[SCHEMAS_ENABLE]
        replace_null = bool(options[REPLACE_NULL_WITH_DEFAULT])
        numeric = str(options[DECIMAL_FORMAT]).upper() == "NUMERIC"
        self._writer = JsonWriter(numeric, replace_null)
        self._reader = JsonReader(replace_null)
        size = int(options[SCHEMAS_CACHE_SIZE])
        self._schema_json: _LruCache[Schema, str] = _LruCache(size)
        self._schemas: _LruCache[str, Schema] = _LruCache(size)

    def schema_json(self, schema: Schema) -> str:
        """The schema as the JSON text of an envelope's `schema` (cached)."""
        cached = self._schema_json.get(schema)
        if cached is None:
            cached = self._writer.schema(schema)
            self._schema_json.put(schema, cached)
        return cached

    def from_connect_data(self, topic: str, schema: Schema | None, value: Any) -> bytes | None:
        """JSON bytes, an envelope when `schemas.enable`; None when schema and value are None."""
        if schema is None and value is None:
            return None
        payload = self._writer.write(schema, value)
        if not self.schemas_enable:
            return payload.encode("utf-8")
        schema_text = "null" if schema is None else self.schema_json(schema)
        return f'{{"schema":{schema_text},"payload":{payload}}}'.encode()

    def _schema_of(self, node: Any) -> Schema | None:
        if node is None:
            return None
        key = _cache_key(node)
        cached = self._schemas.get(key)
        if cached is None:
            cached = self._reader.schema(node)
            if cached is not None:
                self._schemas.put(key, cached)
        return cached

    def to_connect_data(self, topic: str, data: bytes | None) -> SchemaAndValue:
        """Parse the bytes; with `schemas.enable` they must be an envelope."""
        if data is None:
            return SchemaAndValue.NULL
        parsed = parse_json(data)
        if not self.schemas_enable:
            return SchemaAndValue(None, self._reader.value(None, parsed))
        if not (
            isinstance(parsed, dict)
            and len(parsed) == 2
            and "schema" in parsed
            and "payload" in parsed
        ):
            raise DataError(_ENVELOPE_ERROR)
        schema = self._schema_of(parsed["schema"])
        return SchemaAndValue(schema, self._reader.value(schema, parsed["payload"]))

    def to_connect_column(self, topic: str, data: pa.Array) -> ConnectColumn:
        """Without `schemas.enable`: every value parsed, no `SchemaAndValue` per record."""
        if self.schemas_enable:
            return super().to_connect_column(topic, data)
        value = self._reader.value
        values = [None if d is None else value(None, parse_json(d)) for d in data.to_pylist()]
        return [None] * len(values), values


def _cache_key(node: Any) -> str:
    """A canonical text of a parsed schema object (key order does not matter, as in Jackson)."""
    return json.dumps(node, sort_keys=True, default=str, separators=(",", ":"))
