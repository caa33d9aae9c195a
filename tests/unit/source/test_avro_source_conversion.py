"""A source task's records through `value.converter=AvroConverter` (task side, against the Schema
Registry test double): a schema evolution with a default registers a new version; an
incompatible change fails the task naming converter, topic, subject and the registry's answer,
or is skipped with `errors.tolerance=all`."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from spark_eos_connect.api.data import Schema, SchemaBuilder, Struct
from spark_eos_connect.api.source import SourceRecord
from spark_eos_connect.converters import make_converter
from spark_eos_connect.runtime.errors_dlq import ErrorPolicy, ToleranceExceededError
from spark_eos_connect.source.conversion import RecordPreparer
from spark_eos_connect.source.plan import RecordConversion
from spark_eos_connect.testing.schema_registry import SchemaRegistryDouble

AVRO = "io.confluent.connect.avro.AvroConverter"
V1 = SchemaBuilder.struct().name("com.example.Line").field("text", Schema.STRING).build()
V2 = (
    SchemaBuilder.struct()
    .name("com.example.Line")
    .field("text", Schema.STRING)
    .field("length", SchemaBuilder.int32().default_value(0))
    .build()
)
BAD = SchemaBuilder.struct().name("com.example.Line").field("text", Schema.INT64).build()


@pytest.fixture
def registry() -> Iterator[SchemaRegistryDouble]:
    with SchemaRegistryDouble() as double:
        yield double


def preparer(url: str, tolerate_all: bool = False) -> RecordPreparer:
    options = {"value.converter": AVRO, "value.converter.schema.registry.url": url}
    conversion = RecordConversion(
        key_converter=None,
        value_converter=AVRO,
        header_converter=None,
        options=options,
        errors=ErrorPolicy("c", tolerate_all=tolerate_all),
    )
    return RecordPreparer(conversion, options, "c-0")


def record(schema: Schema, value: Struct, position: int) -> SourceRecord:
    return SourceRecord({"f": "x"}, {"position": position}, "lines", value, value_schema=schema)


def test_a_field_added_with_a_default_is_a_new_version_read_back_per_record(
    registry: SchemaRegistryDouble,
) -> None:
    prepared = preparer(registry.url).prepare(
        [
            record(V1, Struct(V1, {"text": "a"}), 1),
            record(V2, Struct(V2, {"text": "bb", "length": 2}), 2),
        ]
    )
    first, second = (r.value for r in prepared.ready)
    assert first is not None and second is not None
    assert (first[1:5], second[1:5]) == (b"\x00\x00\x00\x01", b"\x00\x00\x00\x02")
    reader = make_converter("AvroConverter", {"schema.registry.url": registry.url}, False)
    assert reader.to_connect_data("lines", first).schema == V1
    assert reader.to_connect_data("lines", second).value == Struct(V2, {"text": "bb", "length": 2})


def test_an_incompatible_schema_fails_the_task_naming_what_was_refused(
    registry: SchemaRegistryDouble,
) -> None:
    task = preparer(registry.url)
    task.prepare([record(V1, Struct(V1, {"text": "a"}), 1)])
    with pytest.raises(ToleranceExceededError) as caught:
        task.prepare([record(BAD, Struct(BAD, {"text": 5}), 2)])
    message = str(caught.value)
    for part in (AVRO, "topic lines", "subject 'lines-value'", "HTTP 409", "incompatible"):
        assert part in message
    assert "nothing of the open transaction is committed" in message


def test_with_tolerance_all_the_refused_record_is_dropped(registry: SchemaRegistryDouble) -> None:
    task = preparer(registry.url, tolerate_all=True)
    prepared = task.prepare(
        [
            record(V1, Struct(V1, {"text": "a"}), 1),
            record(BAD, Struct(BAD, {"text": 5}), 2),
        ]
    )
    assert (len(prepared.ready), prepared.dropped, task.failed) == (1, [1], 1)
