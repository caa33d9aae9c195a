"""The base of the Schema Registry converters: options, subject, schema ids and caches.

A subclass says how a Connect schema becomes a registry schema text (`schema_type`,
`registry_schema`) and how values are serialised; this base finds the subject (by the key or
value subject name strategy), registers or looks up the schema id (`auto.register.schemas`,
`use.latest.version`) and frames the bytes (magic byte 0, 4-byte schema id).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from spark_eos_connect.api.config import ConfigDef
from spark_eos_connect.api.data import Schema
from spark_eos_connect.converters.base import Converter, ConverterType, parse_options
from spark_eos_connect.converters.schema_registry import (
    AUTO_REGISTER,
    CACHE_SIZE,
    KEY_STRATEGY,
    REGISTRY_CONFIG_DEF,
    USE_LATEST,
    VALUE_STRATEGY,
    RegisteredSchema,
    RegistryClient,
)
from spark_eos_connect.converters.subject_names import SubjectNameStrategy, subject_name_strategy
from spark_eos_connect.errors import ConfigError

__all__ = ["BoundedCache", "SchemaRegistryConverter"]


class BoundedCache(dict[Any, Any]):
    """A dict that forgets everything once it holds more than `size` entries (schemas rarely
    change; a full cache means a stream of distinct schemas, which re-deriving handles)."""

    def __init__(self, size: int) -> None:
        super().__init__()
        self.size = size

    def put(self, key: Any, value: Any) -> Any:
        """Remember `value` under `key` and return it."""
        if len(self) >= self.size:
            self.clear()
        self[key] = value
        return value


class SchemaRegistryConverter(Converter):
    """A converter on the Confluent wire format with a Schema Registry (options as Confluent's)."""

    config_def: ClassVar[ConfigDef] = REGISTRY_CONFIG_DEF
    schema_type: ClassVar[str] = "AVRO"
    """The registry's schema type (`AVRO`, `JSON`)."""

    def __init__(self) -> None:
        # no configure({}) here: schema.registry.url is required
        self._options: dict[str, Any] = {}
        self.converter_type = ConverterType.VALUE
        self._client: RegistryClient | None = None

    def configure(
        self, configs: Mapping[str, Any], converter_type: ConverterType, prefix: str = ""
    ) -> None:
        """Read the options (`schema.registry.url` required) and make the registry client."""
        self._options = parse_options(self.config_def, configs, prefix)
        self.converter_type = converter_type
        options = self._options
        self.is_key = converter_type is ConverterType.KEY
        option = KEY_STRATEGY if self.is_key else VALUE_STRATEGY
        self._strategy: SubjectNameStrategy = subject_name_strategy(
            str(options[option]), prefix + option
        )
        self.auto_register: bool = options[AUTO_REGISTER]
        self.use_latest: bool = options[USE_LATEST]
        if self.use_latest and self.auto_register:
            raise ConfigError(
                f"{prefix}{USE_LATEST}=true needs {prefix}{AUTO_REGISTER}=false (the latest "
                "version is written only when no schema is registered from the records)"
            )
        self.cache_size = int(options[CACHE_SIZE])
        self._client = RegistryClient(options)

    @property
    def client(self) -> RegistryClient:
        """The registry client (after `configure`)."""
        if self._client is None:
            raise ConfigError("the converter is not configured (schema.registry.url)")
        return self._client

    def connect_schema(self, schema_id: int) -> Schema:
        """The Connect schema of the registry's schema `schema_id` (what values framed with that
        id read as)."""
        raise NotImplementedError

    def subject(self, topic: str, record_name: str) -> str:
        """The subject of a key or value of `topic` whose schema is named `record_name`."""
        return self._strategy(topic, self.is_key, record_name)

    def writer_schema_id(self, topic: str, record_name: str, schema_str: str) -> int:
        """The id to frame a value with: its own schema's (registered or looked up)."""
        subject = self.subject(topic, record_name)
        return self.client.schema_id(subject, schema_str, self.schema_type, self.auto_register)

    def latest(self, topic: str, record_name: str) -> RegisteredSchema:
        """The subject's latest schema (`use.latest.version`)."""
        return self.client.latest(self.subject(topic, record_name))
