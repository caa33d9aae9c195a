"""Config providers through a real Kafka → sink connector query (issue 13): the reader's and the
sink's Kafka settings and the connector's options reference a properties file; the driver
(offset planning, group commit) and the executors (reading ranges, the sink task writing to its
`file`) resolve them, the config topic keeps the references and the planted secret is found
nowhere. A bad reference fails naming it, before the connector is registered or written to."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer

from spark_eos_connect.kafka.clients import admin_client
from spark_eos_connect.kafka.group_offsets import KafkaGroupOffsets

pytestmark = pytest.mark.integration

INTERNAL_TOPICS = ("eosconnect-configs", "eosconnect-status")
SECRET = "Planted-sink-9c1f0e7d"


def run_available_now(spark: Any, options: dict[str, str], checkpoint: Path) -> Any:
    """Kafka rows into the sink connector with Trigger.AvailableNow; the finished query."""
    from pyspark.errors import StreamingQueryException

    stream = spark.readStream.format("eosconnect").options(**options).load()
    query = (
        stream.writeStream.format("eosconnect")
        .options(**options)
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    with contextlib.suppress(StreamingQueryException):  # the test reads query.exception()
        query.awaitTermination(180)
    if query.isActive:
        query.stop()
        raise AssertionError("the query was still running after 180s")
    return query


@pytest.fixture
def sink_setup(
    tmp_path: Path,
    bootstrap_servers: str,
    kafka_config: dict[str, Any],
    topic_factory: Callable[..., str],
    unique_name: Callable[[str], str],
) -> tuple[str, str, Path, dict[str, str]]:
    """(topic with three records, connector name, output file, options with references)."""
    topic, name = topic_factory("provsink"), unique_name("provsink")
    producer = Producer(kafka_config)
    for value in (b"a", b"b", b"c"):
        producer.produce(topic, value)
    assert producer.flush(30) == 0
    out = tmp_path / "out.txt"
    secrets = tmp_path / "secrets.properties"
    secrets.write_text(f"bootstrap={bootstrap_servers}\nout={out}\napi.token={SECRET}\n")
    options = {
        "name": name,
        "connector.class": "FileStreamSink",
        "topics": topic,
        "file": f"${{file:{secrets}:out}}",
        "api.token": f"${{file:{secrets}:api.token}}",
        "kafka.bootstrap.servers": f"${{file:{secrets}:bootstrap}}",
    }
    return topic, name, out, options


def ours(records: list[Any], name: str) -> list[Any]:
    return [r for r in records if name.encode() in (r.key or b"")]


def test_sink_query_resolves_references_where_used_and_stores_them_unresolved(
    spark: Any,
    sink_setup: tuple[str, str, Path, dict[str, str]],
    kafka_config: dict[str, Any],
    read_uncommitted: Callable[..., list[Any]],
    default_rest_api: Any,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    capfd: pytest.CaptureFixture[str],
) -> None:
    topic, name, out, options = sink_setup

    query = run_available_now(spark, options, tmp_path / "ck")

    assert query.exception() is None
    assert sorted(out.read_text().splitlines()) == ["a", "b", "c"]
    assert KafkaGroupOffsets(kafka_config).committed(f"connect-{name}") == {(topic, 0): 3}
    [stored] = [r for r in ours(read_uncommitted(INTERNAL_TOPICS[0]), name) if r.value]
    properties = json.loads(stored.value)["properties"]
    assert properties["file"] == options["file"]
    assert properties["api.token"] == options["api.token"]
    assert not any(key.startswith(("kafka.", "config.providers")) for key in properties)
    rest = default_rest_api.get(f"/connectors/{name}/config").text
    assert json.loads(rest)["api.token"] == options["api.token"]

    for internal in INTERNAL_TOPICS:
        assert not [r for r in read_uncommitted(internal) if SECRET.encode() in (r.value or b"")]
    progress = json.dumps([query.recentProgress, query.status], default=str)
    out_text, err_text = capfd.readouterr()
    for text in (rest, progress, caplog.text, out_text, err_text):
        assert SECRET not in text


def test_a_bad_sink_reference_fails_naming_it_before_anything_is_written(
    spark: Any,
    sink_setup: tuple[str, str, Path, dict[str, str]],
    kafka_config: dict[str, Any],
    read_uncommitted: Callable[..., list[Any]],
    tmp_path: Path,
) -> None:
    _, name, out, options = sink_setup
    reference = options["file"].replace(":out}", ":absent}")

    query = run_available_now(spark, {**options, "file": reference}, tmp_path / "ck")

    message = str(query.exception())
    assert f"Cannot resolve {reference} in option file: " in message, message
    assert SECRET not in message
    assert not out.exists()
    assert KafkaGroupOffsets(kafka_config).committed(f"connect-{name}") == {}
    existing = admin_client(kafka_config).list_topics(timeout=30).topics
    for internal in (t for t in INTERNAL_TOPICS if t in existing):  # a fresh broker has none
        assert ours(read_uncommitted(internal), name) == []
