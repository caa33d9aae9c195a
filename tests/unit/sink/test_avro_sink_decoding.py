"""A sink task's value column through AvroConverter: good records decode, and each record that
cannot (unknown schema id, not the wire format) is kept as a failed record naming its topic,
partition and offset, for `errors.tolerance`/DLQ as other converter failures are."""

from __future__ import annotations

import pyarrow as pa

from spark_eos_connect.api.data import Schema, SchemaBuilder, Struct
from spark_eos_connect.converters import make_converter
from spark_eos_connect.runtime.errors_dlq import FailedRecord, Stage
from spark_eos_connect.sink.decoding import convert_column
from spark_eos_connect.sink.rows import RecordChunk

SCHEMA = SchemaBuilder.struct().name("com.example.P").field("x", Schema.INT32).build()


def test_failing_records_are_kept_with_where_and_why() -> None:
    url = "mock://avro-sink-decoding"
    avro = make_converter("AvroConverter", {"schema.registry.url": url}, False)
    good = avro.from_connect_data("t", SCHEMA, Struct(SCHEMA, {"x": 4}))
    unknown_id = bytes.fromhex("00000000630a")
    not_avro = b'{"x": 4}'
    values = pa.array([good, unknown_id, None, not_avro], pa.binary())
    rows = RecordChunk(
        ["t"] * 4,
        [3] * 4,
        [10, 11, 12, 13],
        pa.nulls(4, pa.binary()),
        values,
        [None] * 4,
        [()] * 4,
    )
    failed: dict[int, FailedRecord] = {}
    schemas, decoded = convert_column(avro, Stage.VALUE_CONVERTER, rows, values, failed)
    assert decoded[0] == Struct(SCHEMA, {"x": 4}) and schemas[0] == SCHEMA
    assert decoded[2] is None
    assert sorted(failed) == [1, 3]
    assert failed[1].where() == "topic=t partition=3 offset=11"
    assert "schema with id 99" in str(failed[1].error)
    assert failed[3].where() == "topic=t partition=3 offset=13"
    assert "magic byte 123" in str(failed[3].error)
    assert failed[1].executing_class.endswith("AvroConverter")
