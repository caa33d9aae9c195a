"""`io.confluent.connect.avro.AvroConverter`: Connect data as Avro on the Confluent wire format.

Writing: the value's Connect schema becomes an Avro schema (`avro_data`, as Confluent's AvroData
maps it), registered or looked up under its subject (`auto.register.schemas`,
`use.latest.version`, `key/value.subject.name.strategy`), and the value is written as Avro
binary (fastavro) after the magic byte and the schema id. The registered text is byte for
byte what Confluent's AvroConverter registers with the same AvroData options. Reading: the
schema id in the bytes names the writer's schema in the registry, whose Connect schema and value
are returned, so a field added with a default later reads as each record was written. Both
directions cache schemas (`schemas.cache.config`). Options: `schema_registry.REGISTRY_CONFIG_DEF`
and `avro_options.AVRO_DATA_CONFIG_DEF`.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from typing import Any, ClassVar

from spark_eos_connect.api.config import ConfigDef
from spark_eos_connect.api.data import Schema, SchemaAndValue
from spark_eos_connect.converters import avro_data, avro_values
from spark_eos_connect.converters.avro_options import (
    AVRO_DATA_CONFIG_DEF,
    DEFAULT_OPTIONS,
    AvroDataOptions,
    avro_data_options,
)
from spark_eos_connect.converters.base import ConverterType
from spark_eos_connect.converters.registry_converter import BoundedCache, SchemaRegistryConverter
from spark_eos_connect.converters.schema_registry import REGISTRY_CONFIG_DEF, frame, unframe
from spark_eos_connect.errors import DataError

__all__ = ["AvroConverter"]


@dataclass(frozen=True)
class _Writer:
    """What writing values of one Connect schema needs."""

    schema_str: str
    record_name: str
    parsed: Any


@dataclass(frozen=True)
class _Reader:
    """What reading values written with one schema id needs."""

    connect: Schema
    parsed: Any


def _parse(avro: Any, tag_unions: bool = False) -> Any:
    import fastavro

    return fastavro.parse_schema(avro_data.wire_schema(avro, tag_unions))


class AvroConverter(SchemaRegistryConverter):
    """Confluent's AvroConverter: Avro binary framed with a Schema Registry schema id."""

    schema_type = "AVRO"
    config_def: ClassVar[ConfigDef] = REGISTRY_CONFIG_DEF.merge(AVRO_DATA_CONFIG_DEF)
    avro_options: AvroDataOptions = DEFAULT_OPTIONS

    def configure(self, configs: Any, converter_type: ConverterType, prefix: str = "") -> None:
        """Read the options (AvroData's refused by name where not supported); reset the
        schema caches."""
        super().configure(configs, converter_type, prefix)
        self.avro_options = avro_data_options(self._options, prefix)
        size = self.avro_options.cache_size
        self._writers: BoundedCache = BoundedCache(size)
        self._latest_writers: BoundedCache = BoundedCache(size)
        self._readers: BoundedCache = BoundedCache(size)

    def avro_schema(self, schema: Schema) -> Any:
        """The Avro schema (parsed JSON) a value of `schema` is written with."""
        return avro_data.from_connect_schema(schema, self.avro_options)

    def schema_text(self, schema: Schema) -> str:
        """The schema text registered for values of `schema` (as Confluent's converter)."""
        return self._writer(schema).schema_str

    def _writer(self, schema: Schema) -> _Writer:
        found = self._writers.get(schema)
        if found is None:
            text = avro_data.schema_text_of(schema, self.avro_options)
            avro = json.loads(text)
            found = self._writers.put(
                schema, _Writer(text, avro_data.record_name(avro), _parse(avro))
            )
        return found

    def from_connect_data(self, topic: str, schema: Schema | None, value: Any) -> bytes | None:
        """The framed Avro bytes of `value` (None for a null value)."""
        if value is None and (schema is None or schema.default_value is None):
            return None
        if schema is None:
            raise DataError(
                f"AvroConverter needs a schema to write a value for topic {topic}; got a "
                f"schemaless {type(value).__name__}"
            )
        import fastavro

        writer = self._writer(schema)
        if self.use_latest:
            latest = self.latest(topic, writer.record_name)
            schema_id = latest.schema_id
            parsed = self._latest_writers.get(latest.schema_str)
            if parsed is None:
                parsed = self._latest_writers.put(
                    latest.schema_str, _parse(json.loads(latest.schema_str))
                )
        else:
            schema_id = self.writer_schema_id(topic, writer.record_name, writer.schema_str)
            parsed = writer.parsed
        datum = avro_values.from_connect_value(schema, value, self.avro_options)
        out = io.BytesIO()
        try:
            fastavro.schemaless_writer(out, parsed, datum)
        except (ValueError, TypeError, KeyError) as error:
            raise DataError(
                f"Failed to write a value for topic {topic} as Avro with schema id {schema_id}: "
                f"{error}"
            ) from None
        return frame(schema_id, out.getvalue())

    def _reader(self, schema_id: int, topic: str) -> _Reader:
        found = self._readers.get(schema_id)
        if found is None:
            registered = self.client.by_id(schema_id)
            if registered.schema_type.upper() != "AVRO":
                raise DataError(
                    f"Schema id {schema_id} of a record of topic {topic} is a "
                    f"{registered.schema_type} schema, not Avro"
                )
            avro = json.loads(registered.schema_str)
            connect = avro_data.to_connect_schema(avro, self.avro_options)
            found = self._readers.put(schema_id, _Reader(connect, _parse(avro, tag_unions=True)))
        return found

    def connect_schema(self, schema_id: int) -> Schema:
        """The Connect schema values framed with `schema_id` read as."""
        return self._reader(schema_id, "").connect

    def to_connect_data(self, topic: str, data: bytes | None) -> SchemaAndValue:
        """The Connect schema and value of framed Avro bytes (the writer's schema by its id)."""
        if data is None:
            return SchemaAndValue.NULL
        import fastavro

        schema_id, payload = unframe(data, topic)
        reader = self._reader(schema_id, topic)
        try:
            datum = fastavro.schemaless_reader(
                io.BytesIO(payload),
                reader.parsed,
                None,
                return_record_name=True,
                return_record_name_override=True,
            )
        except (ValueError, TypeError, EOFError, IndexError, StopIteration) as error:
            raise DataError(
                f"Failed to read Avro data of topic {topic} with schema id {schema_id}: "
                f"{type(error).__name__}: {error}"
            ) from None
        value = avro_values.to_connect_value(
            reader.connect, datum, self.avro_options.scrub_invalid_names
        )
        return SchemaAndValue(reader.connect, value)
