"""The converters' work, without Kafka or Spark: records/s of AvroConverter next to
JsonConverter (schemas.enable) on the source path (`from_connect_data` of Connect structs, as
a source task's records are written) and on the sink path (`to_connect_column` of a binary
Arrow column, as a sink task's values are read). The Avro modes use confluent-kafka's in-process
`mock://` registry: after the first record the schema id is cached, as it is against a real
registry. Each mode converts `records` records of one struct schema once, unmeasured, to warm
the caches, then measured; the sink modes' output is checked against the structs written.
The run's `records`, at most `MAX_RECORDS` (four modes, two passes each, in one Python thread).
"""

from __future__ import annotations

import datetime as dt
import time
import uuid
from collections.abc import Callable

import pyarrow as pa

from spark_eos_connect.api.data import Schema, SchemaBuilder, Struct, Timestamp
from spark_eos_connect.apps.bench.config import CONVERTERS
from spark_eos_connect.apps.bench.results import ModeResult, Verification
from spark_eos_connect.converters import Converter, make_converter

JSON_SOURCE = "JsonConverter, source path"
AVRO_SOURCE = "AvroConverter, source path"
JSON_SINK = "JsonConverter, sink path"
AVRO_SINK = "AvroConverter, sink path"
"""The modes; config.PEERS compares each Avro mode with the JSON mode of the same path."""

MAX_RECORDS = 200_000
TOPIC = "bench-converters"
SCHEMA = (
    SchemaBuilder.struct()
    .name("bench.Order")
    .field("id", Schema.INT64)
    .field("customer", Schema.STRING)
    .field("amount", Schema.FLOAT64)
    .field("paid", Schema.BOOLEAN)
    .field("placed", Timestamp.SCHEMA)
    .field("note", Schema.OPTIONAL_STRING)
    .build()
)
_EPOCH = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)


def records(count: int) -> list[Struct]:
    """`count` structs of `SCHEMA`, all different."""
    return [
        Struct(
            SCHEMA,
            {
                "id": n,
                "customer": f"customer-{n % 1000:04d}",
                "amount": n / 100,
                "paid": n % 2 == 0,
                "placed": _EPOCH + dt.timedelta(milliseconds=n),
                "note": None if n % 3 else "gift",
            },
        )
        for n in range(count)
    ]


def converter(name: str) -> Converter:
    """A fresh value converter (Avro: on its own `mock://` registry)."""
    options = {"schema.registry.url": f"mock://bench-{uuid.uuid4().hex}"}
    return make_converter(name, options if name == "AvroConverter" else {}, False)


def _timed(call: Callable[[], object]) -> float:
    started = time.perf_counter()
    call()
    return time.perf_counter() - started


def source_mode(name: str, mode: str, values: list[Struct]) -> ModeResult:
    """`from_connect_data` of every struct (a warm-up pass first)."""
    conv = converter(name)
    write = conv.from_connect_data
    for value in values:
        write(TOPIC, SCHEMA, value)
    seconds = _timed(lambda: [write(TOPIC, SCHEMA, value) for value in values])
    return ModeResult(CONVERTERS, mode, len(values), seconds, timing="from_connect_data")


def sink_mode(name: str, mode: str, values: list[Struct]) -> tuple[ModeResult, Verification]:
    """`to_connect_column` of the values written by the same converter (a warm-up pass first);
    verified by comparing every struct read with the one written."""
    conv = converter(name)
    column = pa.array([conv.from_connect_data(TOPIC, SCHEMA, v) for v in values], pa.binary())
    conv.to_connect_column(TOPIC, column)
    out: list[tuple[list[Schema | None], list[object]]] = []
    seconds = _timed(lambda: out.append(conv.to_connect_column(TOPIC, column)))
    read = out[0][1]
    matching = sum(1 for a, b in zip(read, values, strict=True) if a == b)
    result = ModeResult(CONVERTERS, mode, len(values), seconds, timing="to_connect_column")
    return result, Verification(CONVERTERS, mode, len(values), matching, matching, "decoded")


def run_converters(count: int) -> tuple[list[ModeResult], list[Verification]]:
    """The four modes on `count` records."""
    values = records(count)
    results = [
        source_mode("JsonConverter", JSON_SOURCE, values),
        source_mode("AvroConverter", AVRO_SOURCE, values),
    ]
    verifications = []
    for name, mode in (("JsonConverter", JSON_SINK), ("AvroConverter", AVRO_SINK)):
        result, verification = sink_mode(name, mode, values)
        results.append(result)
        verifications.append(verification)
    return results, verifications
