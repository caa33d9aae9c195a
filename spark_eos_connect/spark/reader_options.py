"""A sink query's reader options, carried to its writer through the stream's schema.

A sink connector's query reads with `spark.readStream.format("eosconnect")` and writes with
`writeStream.format("eosconnect")`: two data sources that Spark creates apart, in different
Python processes on the driver, whose one common thing is the stream's schema. So the reader's
`schema()` puts its options (JSON) in the metadata of the stream's first column
(`sink_range_schema`), Spark hands the writer that schema, and `writer_options` completes the
writer's own options with them: the connector's options are given once, to the reader.

Options given to both must agree (`with_reader_options`): one given with two values, or one the
reader plans the stream with (`name`, `connector.class`, `tasks.max`, `topics`,
`topics.regex`) given to the writer alone, is refused naming the option (never its value).

The schema is visible (`df.schema.json()`), so a secret (`runtime.config.secret_names`) travels
only as a `${provider:...}` reference (`runtime.config.config_references`): a secret the
reader was given in plain text is carried by name alone, and a writer not given it too is
refused, naming it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pyarrow as pa
from pyspark.sql.types import DataType, IntegerType, LongType, StringType, StructField, StructType

from spark_eos_connect.api.config import InvalidConfigError
from spark_eos_connect.runtime.config.config_references import has_reference
from spark_eos_connect.runtime.config.options import DataSourceOptions
from spark_eos_connect.runtime.config.secret_names import is_secret

READER_OPTIONS = "eosconnect.reader.options"
"""The field metadata key holding the reader's options (a JSON object of strings)."""

PLANNED_BY_THE_READER = ("name", "connector.class", "tasks.max", "topics", "topics.regex")
"""Options the reader plans a sink stream with: the writer cannot take them alone."""

_SPARK_TYPES: dict[pa.DataType, DataType] = {
    pa.int32(): IntegerType(),
    pa.int64(): LongType(),
    pa.string(): StringType(),
}


def sink_range_schema(arrow: pa.Schema, options: DataSourceOptions) -> StructType:
    """The Spark schema of `arrow` (a sink stream's columns), its first column carrying the
    reader's `options` in its metadata."""
    carried = json.dumps({k: carried_value(k, v) for k, v in sorted(options.given.items())})
    return StructType(
        [
            StructField(
                field.name,
                _SPARK_TYPES[field.type],
                nullable=True,
                metadata={READER_OPTIONS: carried} if index == 0 else None,
            )
            for index, field in enumerate(arrow)
        ]
    )


def carried_value(name: str, value: Any) -> str | None:
    """What the schema carries of option `name`: its value, None for a secret given in plain
    text (a reference to one is carried)."""
    text = str(value)
    return None if is_secret(name) and not has_reference(text) else text


def stream_reader_options(schema: StructType) -> dict[str, str | None]:
    """The reader's options a stream's schema carries (None: a secret withheld); {} for a
    stream that carries none."""
    for field in schema.fields:
        carried = (field.metadata or {}).get(READER_OPTIONS)
        if carried:
            return {str(k): None if v is None else str(v) for k, v in json.loads(carried).items()}
    return {}


def with_reader_options(reader: Mapping[str, Any], writer: Mapping[str, Any]) -> dict[str, Any]:
    """The writer's options (names lower-case) completed with the reader's; raises one
    `InvalidConfigError` naming every option given to both with different values, every
    option the reader plans with given to the writer alone, and every secret the reader was
    given in plain text (withheld: None) that the writer was not given."""
    problems: dict[str, list[str]] = {}
    for name in sorted(n for n, v in reader.items() if v is None and n not in writer):
        problems[name] = [
            f"Option {name} is a secret the reader was given in plain text, and secrets travel "
            "to the writer only as ${provider:...} references: give it to the writer too, or "
            "to the reader as a reference"
        ]
    for name, value in sorted(writer.items()):
        if name in reader and reader[name] is None:
            continue  # a withheld secret: the writer's own value is the one there is
        if name in reader and str(reader[name]) != str(value):
            problems[name] = [
                f"Option {name} is given to the reader and to the writer with different "
                "values: the writer takes the reader's options; give it to the reader alone"
            ]
        elif name not in reader and name in PLANNED_BY_THE_READER:
            problems[name] = [
                f"Option {name} is given to the writer alone: the reader plans the stream with "
                "it; give it to the reader (the writer takes the reader's options)"
            ]
    if problems:
        raise InvalidConfigError(problems)
    return {**{n: v for n, v in reader.items() if v is not None}, **writer}


def writer_options(writer: DataSourceOptions, schema: StructType) -> DataSourceOptions:
    """The options of the `eosconnect` writer of a stream with `schema`: its own, completed
    with the reader's that the schema carries (`with_reader_options`)."""
    reader = stream_reader_options(schema)
    if not reader:
        return writer
    return DataSourceOptions.read(with_reader_options(reader, writer.given))
