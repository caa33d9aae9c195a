"""A Java connector's converter that only this project has: the key and value columns the JVM
hands over (schema number + Connect's JsonConverter payload) converted here by the project's
converter of that class, configured from the same options (AvroConverter against the Schema
Registry test double, under Confluent's subject names); a failing record dropped only under
errors.tolerance=all; the driver's check of a Java connector's converter classes."""

from __future__ import annotations

import json
import urllib.request
import zipfile
from collections.abc import Iterator
from decimal import Decimal as Exact
from pathlib import Path
from typing import Any

import pytest

from spark_eos_connect.api.data import Decimal, Schema, SchemaBuilder, Struct
from spark_eos_connect.converters import JsonConverter, make_converter
from spark_eos_connect.converters.base import ConverterType
from spark_eos_connect.errors import DataError
from spark_eos_connect.jvm_tasks.converted import ConvertedRecords
from spark_eos_connect.jvm_tasks.resolution import java_converter_problems
from spark_eos_connect.jvm_tasks.stand_ins import (
    KEYS_HANDED_OVER,
    ON_THE_TASK_HOST,
    STAND_INS,
    VALUES_HANDED_OVER,
    HandedOverColumns,
)
from spark_eos_connect.testing.schema_registry import SchemaRegistryDouble

AVRO = "io.confluent.connect.avro.AvroConverter"
ROW = (
    SchemaBuilder.struct()
    .name("db.public.items.Value")
    .field("id", Schema.INT32)
    .field("price", Decimal.builder(2).optional().build())
    .field(
        "state",
        SchemaBuilder.string()
        .name("io.debezium.data.Enum")
        .parameter("allowed", "new,old")
        .default_value("new")
        .build(),
    )
    .build()
)
KEY = SchemaBuilder.struct().name("db.public.items.Key").field("id", Schema.INT32).build()


def row(id_: int, state: str = "old") -> Struct:
    return Struct(ROW).put("id", id_).put("price", Exact("1.25")).put("state", state)


class JvmHandOver:
    """What the JVM's HandOverConverter writes, made with this project's JsonConverter (which
    writes Connect's JsonConverter's bytes)."""

    def __init__(self) -> None:
        self.json = JsonConverter()
        self.json.configure(
            {"schemas.enable": "false", "replace.null.with.default": "false"},
            ConverterType.VALUE,
        )
        self.numbers: dict[Schema, int] = {}
        self.fresh: list[tuple[int, str]] = []

    def __call__(self, schema: Schema | None, value: Any) -> bytes | None:
        if schema is None and value is None:
            return None
        number = -1
        if schema is not None:
            if schema not in self.numbers:
                self.numbers[schema] = len(self.numbers)
                self.fresh.append((self.numbers[schema], self.json.schema_json(schema)))
            number = self.numbers[schema]
        payload = self.json.from_connect_data("t", schema, value) or b""
        return number.to_bytes(4, "little", signed=True) + payload

    def batch(self, keys: list[bytes | None], values: list[bytes | None]) -> ConvertedRecords:
        schemas, self.fresh = self.fresh, []
        return ConvertedRecords(
            first_seq=0,
            taken=len(values),
            topics=["t"] * len(values),
            keys=keys,
            values=values,
            offsets=[],
            schemas=schemas or None,
        )


@pytest.fixture
def registry() -> Iterator[SchemaRegistryDouble]:
    with SchemaRegistryDouble() as double:
        yield double


def avro_options(url: str, *options: str) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for option in options:
        found[f"{option}.converter"] = AVRO
        found[f"{option}.converter.schema.registry.url"] = url
    return found


def test_the_table_holds_the_converters_the_task_host_lacks() -> None:
    assert "io.confluent.connect.avro.AvroConverter" in STAND_INS
    assert "io.confluent.connect.json.JsonSchemaConverter" in STAND_INS
    assert "org.apache.kafka.connect.json.JsonConverter" not in STAND_INS  # the JVM has it
    assert "org.apache.kafka.connect.converters.ByteArrayConverter" not in STAND_INS  # too
    assert "org.apache.kafka.connect.converters.ByteArrayConverter" in ON_THE_TASK_HOST


def test_handed_over_keys_and_values_become_avro_under_confluents_subjects(
    registry: SchemaRegistryDouble,
) -> None:
    jvm = JvmHandOver()
    columns = HandedOverColumns.for_task(
        KEYS_HANDED_OVER | VALUES_HANDED_OVER, avro_options(registry.url, "key", "value")
    )
    assert columns is not None
    first = jvm.batch([jvm(KEY, Struct(KEY).put("id", 1))], [jvm(ROW, row(1))])
    columns.convert(first)
    second = jvm.batch([jvm(KEY, Struct(KEY).put("id", 2))], [jvm(ROW, row(2, "new"))])
    assert second.schemas is None  # each schema's text comes once
    columns.convert(second)

    reader = make_converter(AVRO, {"schema.registry.url": registry.url}, False)
    read = [reader.to_connect_data("t", v) for v in first.values + second.values]
    assert [r.value for r in read] == [row(1), row(2, "new")]
    assert read[0].schema.name == "db.public.items.Value"
    assert read[0].schema.field("state").schema.parameters == {"allowed": "new,old"}
    keys = [reader.to_connect_data("t", k).value for k in first.keys + second.keys]
    assert [k.get("id") for k in keys] == [1, 2]
    with urllib.request.urlopen(f"{registry.url}/subjects") as answer:
        assert sorted(json.load(answer)) == ["t-key", "t-value"]


def test_tombstones_and_a_column_not_handed_over_stay_as_they_are(
    registry: SchemaRegistryDouble,
) -> None:
    assert HandedOverColumns.for_task(1, avro_options(registry.url, "value")) is None
    jvm = JvmHandOver()
    columns = HandedOverColumns(VALUES_HANDED_OVER, avro_options(registry.url, "value"))
    batch = jvm.batch([b"raw key", None], [None, jvm(Schema.OPTIONAL_INT64, None)])
    columns.convert(batch)
    assert batch.keys == [b"raw key", None]
    assert batch.values == [None, None]  # AvroConverter writes a null value as null


def test_a_record_the_converter_refuses_fails_the_batch_naming_it(
    registry: SchemaRegistryDouble,
) -> None:
    jvm = JvmHandOver()
    columns = HandedOverColumns(VALUES_HANDED_OVER, avro_options(registry.url, "value"))
    batch = jvm.batch([None], [jvm(None, "schemaless")])
    with pytest.raises(DataError, match=r"value.converter AvroConverter .* topic t"):
        columns.convert(batch)


def test_under_errors_tolerance_all_a_refused_record_is_dropped_its_offset_kept(
    registry: SchemaRegistryDouble,
) -> None:
    jvm = JvmHandOver()
    options = {**avro_options(registry.url, "value"), "errors.tolerance": "all"}
    columns = HandedOverColumns(VALUES_HANDED_OVER, options)
    batch = jvm.batch([b"a", b"b", b"c"], [jvm(ROW, row(1)), jvm(None, "x"), jvm(ROW, row(3))])
    batch.offsets = [({"p": 1}, {"o": 3})]
    columns.convert(batch)
    assert batch.keys == [b"a", b"c"] and batch.positions == [0, 2]
    assert batch.taken == 3 and batch.offsets == [({"p": 1}, {"o": 3})]


@pytest.mark.parametrize(
    ("log_options", "logged"),
    [
        ({}, None),
        ({"errors.log.enable": "true"}, "failed on a record of topic t"),
        (
            {"errors.log.enable": "true", "errors.log.include.messages": "true"},
            "where the record's value is = 'x'",
        ),
    ],
)
def test_a_dropped_record_is_logged_as_errors_log_asks(
    registry: SchemaRegistryDouble,
    caplog: pytest.LogCaptureFixture,
    log_options: dict[str, str],
    logged: str | None,
) -> None:
    jvm = JvmHandOver()
    options = {**avro_options(registry.url, "value"), "errors.tolerance": "all", **log_options}
    batch = jvm.batch([b"a", b"b"], [jvm(ROW, row(1)), jvm(None, "x")])
    with caplog.at_level("ERROR", logger="spark_eos_connect.jvm_tasks.stand_ins"):
        HandedOverColumns(VALUES_HANDED_OVER, options).convert(batch)
    assert batch.keys == [b"a"]
    lines = [r.getMessage() for r in caplog.records]
    if logged is None:
        assert lines == []
    else:
        assert len(lines) == 1 and logged in lines[0], lines
        assert ("where the record's" in lines[0]) == ("errors.log.include.messages" in log_options)


def jar(path: Path, *classes: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as archive:
        for name in classes:
            archive.writestr(name.replace(".", "/") + ".class", b"\xca\xfe\xba\xbe")
    return path


def test_the_driver_refuses_a_java_connectors_converter_found_nowhere(tmp_path: Path) -> None:
    jar(tmp_path / "plugins" / "acme" / "acme.jar", "com.acme.Source", "com.acme.OwnConverter")
    plugin_path = str(tmp_path / "plugins")
    unknown = {"value.converter": ["Unknown converter 'com.example.Nope' ..."]}
    props = {"connector.class": "com.acme.Source", "value.converter": "com.example.Nope"}

    problems = java_converter_problems(unknown, props, plugin_path)
    (message,) = problems["value.converter"]
    assert "'com.example.Nope'" in message and plugin_path in message and AVRO in message

    held = {**props, "value.converter": "com.acme.OwnConverter"}
    assert java_converter_problems(unknown, held, plugin_path) == {}  # the plugin's own
    stood_in = {**props, "value.converter": AVRO}
    missing_url = {"value.converter": ["Missing required configuration ..."]}
    assert java_converter_problems(missing_url, stood_in, plugin_path) == missing_url
    header = {**props, "value.converter": AVRO, "header.converter": "com.example.NoHeaders"}
    assert "header.converter" in java_converter_problems({}, header, plugin_path)
    boolean = "org.apache.kafka.connect.converters.BooleanConverter"  # the JVM's, not ours
    on_host = {**props, "value.converter": boolean, "header.converter": boolean}
    unknown_here = {"value.converter": [f"Unknown converter '{boolean}'"]}
    assert java_converter_problems(unknown_here, on_host, plugin_path) == {}
    python = {**props, "connector.class": "FileStreamSource"}  # not a Java connector
    assert java_converter_problems(unknown, python, plugin_path) == unknown
