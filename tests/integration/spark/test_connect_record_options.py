"""A Kafka Connect FileStreamSource config with Connect's converter, transform and `errors.*`
options, run through `spark.readStream.format("eosconnect")`: the bytes each converter writes,
a failing transform skipped (`errors.tolerance=all`, the offsets move past it, every other line
exactly once) or failing the query naming the alias and class, and bad configs refused by
`load()` with every problem listed before anything is written."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from spark_eos_connect.kafka.clients import read_to_end
from spark_eos_connect.protocol.offsets_format import decode_offset_key, decode_offset_value

pytestmark = pytest.mark.integration

JSON = "org.apache.kafka.connect.json.JsonConverter"
CAST = "org.apache.kafka.connect.transforms.Cast$Value"


def connect_config(name: str, path: Path, topic: str, **options: str) -> dict[str, str]:
    """A Connect connector config (as a Connect worker takes it) for a file source."""
    return {
        "name": name,
        "connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
        "tasks.max": "1",
        "file": str(path),
        "topic": topic,
        **options,
    }


def run_until_idle(spark: Any, config: dict[str, str], bootstrap: str, checkpoint: Path) -> Any:
    """One `availableNow` run of the config; the finished query (its exception, if any)."""
    kafka = {"kafka.bootstrap.servers": bootstrap}
    stream = spark.readStream.format("eosconnect").options(**config, **kafka).load()
    query = (
        stream.writeStream.format("eosconnect")
        .options(name=config["name"], **kafka)
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    with contextlib.suppress(Exception):  # the test reads query.exception()
        query.awaitTermination(180)
    return query


def file_offsets(read_committed: Callable[..., list[Any]], name: str) -> list[Any]:
    found = []
    for record in read_committed("eosconnect-offsets"):
        connector, _ = decode_offset_key(record.key)
        if connector == name:
            found.append(decode_offset_value(record.value))
    return found


@pytest.mark.parametrize(
    ("converter", "expected"),
    [
        (
            {"value.converter": JSON},
            [b'{"schema":{"type":"string","optional":false},"payload":"alpha"}'],
        ),
        ({"value.converter": JSON, "value.converter.schemas.enable": "false"}, [b'"alpha"']),
        ({"value.converter": "org.apache.kafka.connect.storage.StringConverter"}, [b"alpha"]),
    ],
    ids=["json-schemas", "json-plain", "string"],
)
def test_file_lines_are_written_with_each_converters_bytes(
    spark: Any,
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    read_committed: Callable[..., list[Any]],
    unique_name: Callable[[str], str],
    tmp_path: Path,
    converter: dict[str, str],
    expected: list[bytes],
) -> None:
    source, topic = tmp_path / "in.txt", topic_factory("lines")
    source.write_text("alpha\n")
    config = connect_config(unique_name("conv"), source, topic, **converter)

    query = run_until_idle(spark, config, bootstrap_servers, tmp_path / "ck")

    assert query.exception() is None
    assert [(r.key, r.value) for r in read_committed(topic)] == [(None, v) for v in expected]


def test_byte_array_converter_refuses_string_lines_as_connect_does(
    spark: Any,
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    read_committed: Callable[..., list[Any]],
    unique_name: Callable[[str], str],
    tmp_path: Path,
) -> None:
    source, topic = tmp_path / "in.txt", topic_factory("lines")
    source.write_text("alpha\n")
    converter = "org.apache.kafka.connect.converters.ByteArrayConverter"
    config = connect_config(unique_name("bytes"), source, topic, **{"value.converter": converter})

    query = run_until_idle(spark, config, bootstrap_servers, tmp_path / "ck")

    error = str(query.exception())
    assert f"stage VALUE_CONVERTER with class {converter}" in error, error[-3000:]
    assert "Invalid schema type for ByteArrayConverter: STRING" in error
    assert read_committed(topic) == []


def test_tolerated_failures_are_skipped_and_the_file_offset_moves_past_them(
    spark: Any,
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    read_committed: Callable[..., list[Any]],
    unique_name: Callable[[str], str],
    tmp_path: Path,
) -> None:
    source, topic, name = tmp_path / "in.txt", topic_factory("numbers"), unique_name("skip")
    source.write_text("1\nx\n3\n")
    config = connect_config(
        name,
        source,
        topic,
        **{
            "transforms": "toNumber",
            "transforms.toNumber.type": CAST,
            "transforms.toNumber.spec": "int32",
            "value.converter": JSON,
            "value.converter.schemas.enable": "false",
            "errors.tolerance": "all",
            "errors.log.enable": "true",
        },
    )

    first = run_until_idle(spark, config, bootstrap_servers, tmp_path / "ck")
    with source.open("a") as more:
        more.write("y\n4\n")
    second = run_until_idle(spark, config, bootstrap_servers, tmp_path / "ck")

    assert first.exception() is None and second.exception() is None
    assert [r.value for r in read_committed(topic)] == [b"1", b"3", b"4"]
    assert file_offsets(read_committed, name)[-1] == {"position": len(source.read_bytes())}


def test_tolerance_none_fails_the_query_naming_the_alias_and_class(
    spark: Any,
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    read_committed: Callable[..., list[Any]],
    unique_name: Callable[[str], str],
    tmp_path: Path,
) -> None:
    source, topic, name = tmp_path / "in.txt", topic_factory("numbers"), unique_name("strict")
    source.write_text("1\nx\n3\n")
    config = connect_config(
        name,
        source,
        topic,
        **{
            "transforms": "toNumber",
            "transforms.toNumber.type": CAST,
            "transforms.toNumber.spec": "int32",
        },
    )

    query = run_until_idle(spark, config, bootstrap_servers, tmp_path / "ck")

    error = str(query.exception())
    assert f"transformation 'toNumber' ({CAST}) failed" in error, error[-3000:]
    assert "Tolerance exceeded in error handler" in error
    assert read_committed(topic) == [] and file_offsets(read_committed, name) == []


@pytest.mark.parametrize(
    ("options", "named"),
    [
        (
            {
                "transforms": "route",
                "transforms.route.type": "org.apache.kafka.connect.transforms.NoSuchRouter",
            },
            ["transforms.route.type", "NoSuchRouter", "expected one of Connect's built-in"],
        ),
        (
            {
                "transforms": "wrap",
                "transforms.wrap.type": "org.apache.kafka.connect.transforms.HoistField$Value",
            },
            ['Missing required configuration "transforms.wrap.field"'],
        ),
        (
            {
                "transforms": "route",
                "transforms.route.type": "RegexRouter",
                "transforms.route.regex": "a",
                "transforms.route.replacement": "b",
                "transforms.route.predicate": "isOrders",
            },
            ["transforms.route.predicate", "no predicate 'isOrders' is declared in predicates"],
        ),
        (
            {
                "tasks.max": "0",
                "transaction.boundary": "sometimes",
                "value.converter": JSON,
                "value.converter.schemas.enable": "maybe",
                "errors.deadletterqueue.topic.name": "dlq",
            },
            [
                "4 problems",
                "tasks.max",
                "transaction.boundary",
                "value.converter.schemas.enable",
                "errors.deadletterqueue.topic.name is not supported on a source connector",
            ],
        ),
    ],
    ids=["unknown-transform", "missing-smt-option", "undeclared-predicate", "several"],
)
def test_load_refuses_a_bad_config_before_anything_is_written(
    spark: Any,
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    read_committed: Callable[..., list[Any]],
    kafka_config: dict[str, Any],
    unique_name: Callable[[str], str],
    tmp_path: Path,
    options: dict[str, str],
    named: list[str],
) -> None:
    source, topic, name = tmp_path / "in.txt", topic_factory("lines"), unique_name("bad")
    source.write_text("alpha\n")
    config = connect_config(name, source, topic, **options)

    with pytest.raises(Exception) as refused:  # Spark wraps the data source's error
        spark.readStream.format("eosconnect").options(
            **config, **{"kafka.bootstrap.servers": bootstrap_servers}
        ).load()

    message = str(refused.value)
    assert "InvalidConfigError" in message, message[-3000:]
    for text in named:
        assert text in message, message[-3000:]
    assert read_committed(topic) == []
    assert connector_configs(kafka_config, name) == []


def connector_configs(kafka_config: dict[str, Any], name: str) -> list[Any]:
    """Records of the connector in the config topic (none when the topic does not exist yet)."""
    from confluent_kafka.admin import AdminClient

    if "eosconnect-configs" not in AdminClient(kafka_config).list_topics(timeout=30).topics:
        return []
    records = read_to_end(kafka_config, ["eosconnect-configs"])
    return [r for r in records if name.encode() in (r.key or b"")]
