"""`DeltaSink`'s options, parsed (no Spark: the registry, the REST API and the writer share it)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from spark_eos_connect.api.config import ConfigDef, ConfigType, NonEmptyString, ValidString
from spark_eos_connect.errors import ConfigError

PATH_CONFIG: Final = "path"
TABLE_CONFIG: Final = "table"
TOPICS_CONFIG: Final = "topics"
MODE_CONFIG: Final = "delta.mode"
VALUE_SCHEMA_CONFIG: Final = "value.schema"
VALUE_CONVERTER_CONFIG: Final = "value.converter"

FOREACH_BATCH_MESSAGE: Final = (
    "DeltaSink cannot run inside writeStream.format('eosconnect'): Delta commits are made from "
    "the driver, where Python DataSource writers do not run. Use "
    "stream.writeStream.foreachBatch(spark_eos_connect.delta.delta_sink(options)).start() "
    "with the same options (name, path or table, topics, kafka.bootstrap.servers, ...)"
)

CONFIG_DEF: Final = (
    ConfigDef()
    .define(
        PATH_CONFIG,
        ConfigType.STRING,
        None,
        NonEmptyString(),
        "high",
        "Location of the Delta table (set this or `table`).",
    )
    .define(
        TABLE_CONFIG,
        ConfigType.STRING,
        None,
        NonEmptyString(),
        "high",
        "Catalog name of the Delta table (set this or `path`).",
    )
    .define(
        TOPICS_CONFIG,
        ConfigType.LIST,
        None,
        None,
        "high",
        "The topics to read (the `eosconnect` reader's `topics` option).",
    )
    .define(
        MODE_CONFIG,
        ConfigType.STRING,
        "append",
        ValidString.one_of("append", "upsert", case_insensitive=True),
        "medium",
        "`append` every record, or `upsert`: keep the latest record per (topic, key) and "
        "delete on tombstones (for compacted topics).",
    )
    .define(
        VALUE_SCHEMA_CONFIG,
        ConfigType.STRING,
        None,
        NonEmptyString(),
        "medium",
        "DDL schema of JSON values, e.g. `id INT, name STRING`: one column per field; a value "
        "that does not parse is a failed record. Unset: raw `value` and `headers` columns.",
    )
)


@dataclass(frozen=True)
class DeltaSinkConfig:
    """Parsed `DeltaSink` options."""

    name: str
    path: str | None
    table: str | None
    topics: tuple[str, ...]
    mode: str
    value_schema: str | None
    value_converter: str | None = None
    """A Schema Registry converter (AvroConverter, JsonSchemaConverter) whose schemas give the
    table its columns (its options: `value.converter.*`)."""

    @property
    def location(self) -> str:
        """`path` or `table`, for messages."""
        return self.path or f"table {self.table}"


def parse_delta_config(props: Mapping[str, Any]) -> DeltaSinkConfig:
    """Parse and check the options; exactly one of `path` and `table`."""
    values = CONFIG_DEF.parse(props)
    name = str(props.get("name") or "")
    if not name:
        raise ConfigError("Missing option name: the connector name is the Delta txnAppId")
    if (values[PATH_CONFIG] is None) == (values[TABLE_CONFIG] is None):
        raise ConfigError("DeltaSink needs exactly one of the options path and table")
    converter = str(props.get(VALUE_CONVERTER_CONFIG) or "").strip() or None
    if converter is not None and values[VALUE_SCHEMA_CONFIG] is not None:
        raise ConfigError(
            "DeltaSink takes value.schema (JSON values) or value.converter (a Schema Registry "
            "converter), not both"
        )
    return DeltaSinkConfig(
        name=name,
        path=values[PATH_CONFIG],
        table=values[TABLE_CONFIG],
        topics=tuple(values[TOPICS_CONFIG] or ()),
        mode=values[MODE_CONFIG].lower(),
        value_schema=values[VALUE_SCHEMA_CONFIG],
        value_converter=converter,
    )
