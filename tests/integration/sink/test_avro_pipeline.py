"""FileStreamSource with `value.converter=AvroConverter` -> Kafka (exactly once) -> FileStreamSink
with the same converter, and DeltaSink whose columns come from the Avro schemas, against the
Schema Registry test double (an HTTP server every Spark process reaches): a field added mid-run
(InsertField, an optional field: null default) is a new schema version both ends follow (a new
Delta column, null for the older rows); an incompatible change (Cast of the field to int64) is
refused by the registry, failing the source task with nothing of it committed."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from spark_eos_connect.converters import make_converter
from spark_eos_connect.delta import delta_sink
from spark_eos_connect.testing.schema_registry import SchemaRegistryDouble

pytestmark = pytest.mark.integration

AVRO = "io.confluent.connect.avro.AvroConverter"
TRANSFORMS = "org.apache.kafka.connect.transforms."
HOIST = {
    "transforms.hoist.type": TRANSFORMS + "HoistField$Value",
    "transforms.hoist.field": "line",
}
ORIGIN = {
    "transforms.origin.type": TRANSFORMS + "InsertField$Value",
    "transforms.origin.static.field": "origin",
    "transforms.origin.static.value": "file",
}
CAST = {"transforms.cast.type": TRANSFORMS + "Cast$Value", "transforms.cast.spec": "line:int64"}


@pytest.fixture(scope="module")
def registry() -> Iterator[SchemaRegistryDouble]:
    with SchemaRegistryDouble() as double:
        yield double


def source_run(
    spark: Any, options: dict[str, str], bootstrap: str, checkpoint: Path, timeout_s: float = 180
) -> Any:
    """One availableNow run of the source into Kafka; the finished query."""
    kafka = {"kafka.bootstrap.servers": bootstrap}
    stream = spark.readStream.format("eosconnect").options(**options, **kafka).load()
    query = (
        stream.writeStream.format("eosconnect")
        .options(name=options["name"], **kafka)
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    with contextlib.suppress(Exception):  # the test reads query.exception()
        query.awaitTermination(timeout_s)
    if query.isActive:
        query.stop()
        raise AssertionError(f"source query still running after {timeout_s}s")
    return query


def test_avro_records_evolve_mid_run_and_an_incompatible_change_commits_nothing(
    spark: Any,
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    read_committed: Callable[..., list[Any]],
    group_offsets: Callable[[str], dict[tuple[str, int], int]],
    run_available_now: Callable[..., Any],
    unique_name: Callable[[str], str],
    registry: SchemaRegistryDouble,
    tmp_path: Path,
) -> None:
    topic, lines = topic_factory("avro-lines"), tmp_path / "in.txt"
    converter = {"value.converter": AVRO, "value.converter.schema.registry.url": registry.url}
    source = {
        "name": unique_name("avro-src"),
        "connector.class": "FileStreamSource",
        "file": str(lines),
        "topic": topic,
        **converter,
        **HOIST,
    }
    checkpoint = tmp_path / "source-ck"

    lines.write_text("1\n2\n")
    first = source_run(spark, {**source, "transforms": "hoist"}, bootstrap_servers, checkpoint)
    assert first.exception() is None
    with lines.open("a") as out:
        out.write("3\n4\n")
    evolved = {**source, **ORIGIN, "transforms": "hoist,origin"}
    second = source_run(spark, evolved, bootstrap_servers, checkpoint)
    assert second.exception() is None

    committed = read_committed(topic)
    written, offsets = [r.value for r in committed], [r.offset for r in committed]
    assert [v[:5] for v in written] == [b"\x00\x00\x00\x00\x01"] * 2 + [b"\x00\x00\x00\x00\x02"] * 2
    reader = make_converter(AVRO, {"schema.registry.url": registry.url}, False)
    assert [reader.to_connect_data(topic, v).value.to_dict() for v in written] == [
        {"line": "1"},
        {"line": "2"},
        {"line": "3", "origin": "file"},
        {"line": "4", "origin": "file"},
    ]

    with lines.open("a") as out:
        out.write("5\n")
    refused = source_run(
        spark, {**source, **CAST, "transforms": "hoist,cast"}, bootstrap_servers, checkpoint
    )
    error = str(refused.exception())
    assert f"with class {AVRO}" in error, error[-3000:]
    assert f"subject '{topic}-value'" in error and "HTTP 409" in error
    assert "incompatible" in error
    assert len(read_committed(topic)) == 4

    name, out_file = unique_name("avro-sink"), tmp_path / "out.txt"
    sink = {
        "name": name,
        "connector.class": "FileStreamSink",
        "topics": topic,
        "file": str(out_file),
        "kafka.bootstrap.servers": bootstrap_servers,
        **converter,
    }
    stream = spark.readStream.format("eosconnect").options(**sink).load()
    query = run_available_now(
        stream.writeStream.format("eosconnect").options(**sink), tmp_path / "sink-ck"
    )
    assert query.exception() is None
    assert out_file.read_text().splitlines() == [
        "Struct{line='1'}",
        "Struct{line='2'}",
        "Struct{line='3',origin='file'}",
        "Struct{line='4',origin='file'}",
    ]
    # past the last record (and past a refused attempt's abort marker, if one follows it)
    assert group_offsets(name)[(topic, 0)] in (offsets[-1] + 1, offsets[-1] + 2)
    assert registry.requests.count(f"POST /subjects/{topic}-value/versions") >= 3

    table = tmp_path / "table"
    delta = {
        "name": unique_name("avro-delta"),
        "topics": topic,
        "path": str(table),
        "kafka.bootstrap.servers": bootstrap_servers,
        "maxRecordsPerTrigger": "2",  # v1 in one batch, then the batch adding the column
        **converter,
    }
    stream = spark.readStream.format("eosconnect").options(**delta).load()
    query = run_available_now(stream.writeStream.foreachBatch(delta_sink(delta)), tmp_path / "dk")
    assert query.exception() is None
    rows = spark.read.format("delta").load(str(table)).orderBy("_kafka_offset")
    # the column the second schema added comes after those of the first batch's table
    assert rows.columns[0] == "line" and rows.columns[-1] == "origin"
    assert [(r.line, r.origin, r._kafka_offset) for r in rows.collect()] == [
        ("1", None, offsets[0]),
        ("2", None, offsets[1]),
        ("3", "file", offsets[2]),
        ("4", "file", offsets[3]),
    ]
