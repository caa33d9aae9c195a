"""`spark.reader_options`: a sink stream's schema carries the reader's options to its writer,
which takes them; options given to both must agree."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.sql.types import StructType

from spark_eos_connect.api.config import InvalidConfigError
from spark_eos_connect.runtime.config.options import DataSourceOptions
from spark_eos_connect.sink.kafka_input import SINK_RANGE_DDL, SINK_RANGE_SCHEMA
from spark_eos_connect.spark.datasource import EosConnectDataSource
from spark_eos_connect.spark.reader_options import (
    READER_OPTIONS,
    sink_range_schema,
    stream_reader_options,
    with_reader_options,
    writer_options,
)

BOOTSTRAP = {"kafka.bootstrap.servers": "127.0.0.1:9"}


def sink_options(tmp_path: Path) -> dict[str, str]:
    """A FileStreamSink query's connector options, as a user gives them to the reader."""
    return {
        "name": "orders-file",
        "connector.class": "FileStreamSink",
        "topics": "orders",
        "tasks.max": "2",
        "file": str(tmp_path / "out.txt"),
        **BOOTSTRAP,
    }


def test_the_sink_stream_schema_carries_the_readers_options() -> None:
    read = DataSourceOptions.read({"Name": "n", "tasks.max": 2, **BOOTSTRAP})
    schema = sink_range_schema(SINK_RANGE_SCHEMA, read)

    ddl = SINK_RANGE_DDL.replace(" long", " bigint").replace(", ", ",").replace(" ", ":")
    assert schema.simpleString() == f"struct<{ddl}>"
    assert READER_OPTIONS in schema.fields[0].metadata
    expected = {"name": "n", "tasks.max": "2", "kafka.bootstrap.servers": "127.0.0.1:9"}
    assert stream_reader_options(StructType.fromJson(schema.jsonValue())) == expected
    assert stream_reader_options(StructType.fromJson(StructType().jsonValue())) == {}


def test_the_writer_takes_the_readers_options_and_adds_its_own() -> None:
    merged = with_reader_options(
        {"name": "n", "tasks.max": "2"}, {"checkpointlocation": "/ck", "name": "n"}
    )

    assert merged == {"name": "n", "tasks.max": "2", "checkpointlocation": "/ck"}


def test_options_given_to_both_must_agree_and_the_error_names_each() -> None:
    reader = {"name": "n", "tasks.max": "2", "kafka.sasl.password": "hunter2"}
    writer = {"name": "n", "tasks.max": "3", "kafka.sasl.password": "other", "topics": "t"}

    with pytest.raises(InvalidConfigError) as caught:
        with_reader_options(reader, writer)

    assert set(caught.value.problems) == {"tasks.max", "kafka.sasl.password", "topics"}
    assert "different values" in caught.value.problems["tasks.max"][0]
    assert "given to the writer alone" in caught.value.problems["topics"][0]
    assert "hunter2" not in str(caught.value) and "other" not in str(caught.value)


def test_a_stream_without_reader_options_leaves_the_writers_as_they_are() -> None:
    own = DataSourceOptions.read({"name": "n", **BOOTSTRAP})

    assert writer_options(own, StructType()) is own


def test_a_sink_writer_given_no_connector_options_runs_the_readers_connector(
    tmp_path: Path,
) -> None:
    from spark_eos_connect.spark.sink_writer import EosConnectSinkStreamWriter

    reading = EosConnectDataSource(sink_options(tmp_path))
    schema = reading.schema()
    assert isinstance(schema, StructType)
    writing = EosConnectDataSource({"checkpointLocation": str(tmp_path / "ck")})

    writer = writing.streamWriter(StructType.fromJson(schema.jsonValue()), overwrite=False)

    assert isinstance(writer, EosConnectSinkStreamWriter)
    assert writer.plan.connector == "orders-file"
    assert len(writer.plan.task_configs) == 2
    assert {c["file"] for c in writer.plan.task_configs} == {str(tmp_path / "out.txt")}


def test_a_sink_writer_given_another_value_is_refused_naming_the_option(tmp_path: Path) -> None:
    schema = EosConnectDataSource(sink_options(tmp_path)).schema()
    assert isinstance(schema, StructType)
    writing = EosConnectDataSource({**sink_options(tmp_path), "tasks.max": "1"})

    with pytest.raises(InvalidConfigError) as caught:
        writing.streamWriter(schema, overwrite=False)

    assert set(caught.value.problems) == {"tasks.max"}


def test_a_plain_secret_travels_by_name_alone_and_a_reference_travels_whole() -> None:
    reference = "${file:/etc/kafka.properties:password}"
    read = DataSourceOptions.read(
        {"name": "n", "kafka.sasl.password": "hunter2", "connection.password": reference}
    )
    schema = sink_range_schema(SINK_RANGE_SCHEMA, read)

    assert "hunter2" not in schema.json()
    carried = stream_reader_options(StructType.fromJson(schema.jsonValue()))
    assert carried == {"name": "n", "kafka.sasl.password": None, "connection.password": reference}


def test_a_withheld_secret_is_the_writers_to_give_and_its_absence_is_named() -> None:
    reader = {"name": "n", "kafka.sasl.password": None}

    merged = with_reader_options(reader, {"kafka.sasl.password": "hunter2"})
    with pytest.raises(InvalidConfigError) as refused:
        with_reader_options(reader, {"checkpointlocation": "/ck"})

    assert merged == {"name": "n", "kafka.sasl.password": "hunter2"}
    assert "kafka.sasl.password is a secret the reader was given in plain text" in str(
        refused.value
    )
