"""`io.confluent.connect.json.JsonSchemaConverter`: Connect data as JSON with a JSON Schema in
the Schema Registry, on the Confluent wire format (magic byte 0, 4-byte schema id, JSON text).

The schema mapping is `json_schema_data`'s; registry options, subjects and caching are the same
as `AvroConverter`'s (`schema_registry.REGISTRY_CONFIG_DEF`). Values are not validated against
the JSON Schema (Confluent's `json.fail.invalid.schema` default, false).
"""

from __future__ import annotations

import json
from typing import Any

from spark_eos_connect.api.data import Schema, SchemaAndValue
from spark_eos_connect.converters import json_schema_data
from spark_eos_connect.converters.base import ConverterType
from spark_eos_connect.converters.registry_converter import BoundedCache, SchemaRegistryConverter
from spark_eos_connect.converters.schema_registry import frame, unframe
from spark_eos_connect.errors import DataError

__all__ = ["JsonSchemaConverter"]


class JsonSchemaConverter(SchemaRegistryConverter):
    """Confluent's JsonSchemaConverter: JSON framed with a Schema Registry schema id."""

    schema_type = "JSON"

    def configure(self, configs: Any, converter_type: ConverterType, prefix: str = "") -> None:
        """Read the options; reset the schema caches."""
        super().configure(configs, converter_type, prefix)
        self._writers: BoundedCache = BoundedCache(self.cache_size)
        self._readers: BoundedCache = BoundedCache(self.cache_size)

    def from_connect_data(self, topic: str, schema: Schema | None, value: Any) -> bytes | None:
        """The framed JSON bytes of `value` (None for a null value)."""
        if value is None and (schema is None or schema.default_value is None):
            return None
        if schema is None:
            raise DataError(
                f"JsonSchemaConverter needs a schema to write a value for topic {topic}; got a "
                f"schemaless {type(value).__name__}"
            )
        text = self._writers.get(schema)
        if text is None:
            node = json_schema_data.from_connect_schema(schema)
            text = self._writers.put(schema, json.dumps(node, separators=(",", ":")))
        title = schema.name or ("object" if schema.type.value == "struct" else schema.type.value)
        if self.use_latest:
            schema_id = self.latest(topic, title).schema_id
        else:
            schema_id = self.writer_schema_id(topic, title, text)
        return frame(schema_id, json_schema_data.dumps_value(schema, value).encode())

    def connect_schema(self, schema_id: int) -> Schema:
        """The Connect schema values framed with `schema_id` read as."""
        return self._schema(schema_id, "")

    def _schema(self, schema_id: int, topic: str) -> Schema:
        schema: Schema | None = self._readers.get(schema_id)
        if schema is None:
            registered = self.client.by_id(schema_id)
            if registered.schema_type.upper() != "JSON":
                raise DataError(
                    f"Schema id {schema_id} of a record of topic {topic} is a "
                    f"{registered.schema_type} schema, not a JSON Schema"
                )
            parsed = json.loads(registered.schema_str)
            schema = self._readers.put(schema_id, json_schema_data.to_connect_schema(parsed))
        assert schema is not None
        return schema

    def to_connect_data(self, topic: str, data: bytes | None) -> SchemaAndValue:
        """The Connect schema and value of framed JSON bytes (the writer's schema by its id)."""
        if data is None:
            return SchemaAndValue.NULL
        schema_id, payload = unframe(data, topic)
        schema = self._schema(schema_id, topic)
        try:
            value = json_schema_data.loads_value(schema, payload)
        except DataError as error:
            raise DataError(
                f"Failed to read JSON of topic {topic} with schema id {schema_id}: {error}"
            ) from None
        return SchemaAndValue(schema, value)
