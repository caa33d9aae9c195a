"""Converters a Java connector names that neither its plugins nor the JVM task host hold, but
this project has (Confluent's `AvroConverter` and `JsonSchemaConverter`, which are not on
Maven Central): the JVM hands the records' Connect data over, this module converts it.

The rule, for `key.converter` and `value.converter` of a Java connector: the class is looked
for in `plugin.path` (the connector's own plugin first), then on the JVM task host
(`ON_THE_TASK_HOST`); a class found in neither but in `STAND_INS` is converted here, by this
project's converter of that class configured from the same `<key|value>.converter.*` options
(`schema.registry.url`, the subject name strategies, ...); any other class fails the task at
its start (and `load()` on the driver), naming the option, the class and the folders.
`header.converter` has no stand-ins (Confluent's converters are not header converters).

The hand-over (spec: `TaskHostMain`): a handed-over column's bytes are an i32 little-endian
schema number (-1: none) and the value as Connect's JsonConverter writes it under that schema;
each schema's JsonConverter schema JSON arrives once, with the batch that first numbers it
(`ConvertedRecords.schemas`). Executor side; the driver checks a Java connector's converter
classes with `resolution.java_converter_problems`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from spark_eos_connect.api.config import props_with_prefix
from spark_eos_connect.api.data import Schema
from spark_eos_connect.converters import CONVERTERS, Converter, make_converter
from spark_eos_connect.converters.json_read import JsonReader, parse_json
from spark_eos_connect.errors import DataError
from spark_eos_connect.jvm_tasks.converted import ConvertedRecords

log = logging.getLogger(__name__)

ON_THE_TASK_HOST = frozenset(
    {
        "org.apache.kafka.connect.json.JsonConverter",
        "org.apache.kafka.connect.storage.StringConverter",
        "org.apache.kafka.connect.storage.SimpleHeaderConverter",
        *(
            f"org.apache.kafka.connect.converters.{kind}Converter"
            for kind in ("ByteArray", "Boolean", "Short", "Integer", "Long", "Float", "Double")
        ),
    }
)
"""The converter classes the JVM task host itself has (Connect's API and JSON jars, and the
converters of Connect's runtime jar, which are header converters too)."""

STAND_INS: tuple[str, ...] = tuple(
    sorted(
        name
        for name, cls in CONVERTERS.items()
        if issubclass(cls, Converter) and name not in ON_THE_TASK_HOST
    )
)
"""The Java converter classes this project stands in for when `plugin.path` lacks them."""

KEYS_HANDED_OVER, VALUES_HANDED_OVER = 2, 4
"""START_TASK's reply flags: the JVM hands the keys, the values over."""


def _flag(options: Mapping[str, Any], name: str) -> bool:
    return str(options.get(name, "false")).strip().lower() == "true"


class HandedOverColumns:
    """The converters of a Java task's handed-over key and value columns, and the schemas the
    task's JVM numbered so far (one instance per task start: numbers restart with it)."""

    def __init__(self, flags: int, options: Mapping[str, Any]) -> None:
        self._schemas: dict[int, Schema | None] = {-1: None}
        self._reader = JsonReader(replace_null_with_default=False)
        self.tolerate_all = str(options.get("errors.tolerance", "none")).strip().lower() == "all"
        self.log_errors = _flag(options, "errors.log.enable")
        self.log_messages = _flag(options, "errors.log.include.messages")
        self.columns: list[tuple[str, Converter]] = []
        for flag, option in ((KEYS_HANDED_OVER, "key"), (VALUES_HANDED_OVER, "value")):
            if flags & flag:
                name = f"{option}.converter"
                converter = make_converter(
                    str(options[name]), props_with_prefix(options, f"{name}."), option == "key"
                )
                self.columns.append((option, converter))

    @classmethod
    def for_task(cls, flags: int, options: Mapping[str, Any]) -> HandedOverColumns | None:
        """The columns START_TASK's reply `flags` say are handed over (None: none is)."""
        return cls(flags, options) if flags & (KEYS_HANDED_OVER | VALUES_HANDED_OVER) else None

    def connect_data(self, data: bytes) -> tuple[Schema | None, Any]:
        """The Connect schema and value of one handed-over key or value."""
        number = int.from_bytes(data[:4], "little", signed=True)
        try:
            schema = self._schemas[number]
        except KeyError:
            raise DataError(f"the JVM task host handed over schema {number} undefined") from None
        return schema, self._reader.value(schema, parse_json(data[4:]))

    def convert(self, batch: ConvertedRecords) -> None:
        """Convert the batch's handed-over columns in place; a record that fails is dropped under
        `errors.tolerance=all` (logged under `errors.log.enable=true`, its value too under
        `errors.log.include.messages=true`), else the batch fails naming the converter."""
        for number, text in batch.schemas or ():
            self._schemas[number] = self._reader.schema(parse_json(text.encode("utf-8")))
        dropped: set[int] = set()
        for option, converter in self.columns:
            column = batch.keys if option == "key" else batch.values
            for index, data in enumerate(column):
                if index in dropped:
                    continue
                topic = batch.topics[index]
                value: Any = data  # the handed-over bytes until decoded
                try:
                    schema, value = (None, None) if data is None else self.connect_data(data)
                    column[index] = converter.from_connect_data(topic, schema, value)
                except Exception as error:
                    what = (
                        f"{option}.converter {type(converter).__name__} (this project's, for a "
                        f"Java task) failed on a record of topic {topic}: {error}"
                    )
                    if not self.tolerate_all:
                        raise DataError(what) from error
                    if self.log_errors:
                        record = f", where the record's {option} is = {value!r}"
                        log.error(
                            "errors.tolerance=all: the record is skipped: %s%s",
                            what,
                            record if self.log_messages else "",
                        )
                    dropped.add(index)
        batch.without(dropped)
