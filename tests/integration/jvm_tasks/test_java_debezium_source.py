"""Debezium 3.6.1.Final's Java PostgresConnector from its plugin folder (which ships its own
connect-api 4.3.0: the host's must win) as an eosconnect source on a real broker and database:
the snapshot, then a change streamed, each once under read_committed, with Debezium's offsets
(its numbers Longs) in the offsets topic. The same connector beside it with Confluent's
AvroConverter, which the plugin folder lacks (this project's converter stands in), against the
Schema Registry test double: confluent-kafka's AvroDeserializer reads Debezium's values and keys
from its topic, equal to JsonConverter's, under Confluent's subject names. A third beside them
with Debezium's own SMT, ExtractNewRecordState, from the plugin folder: the rows as the table
holds them; a bad option of that SMT fails `load()`, checked by its own ConfigDef. The
field-by-field comparison with Debezium on a Connect worker is tests/integration/connect/
test_java_debezium_parity.py; the kill campaigns are test_java_debezium_crash_recovery.py."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from spark_eos_connect.api.config import InvalidConfigError
from spark_eos_connect.jvm import jars
from spark_eos_connect.kafka.clients import ConsumedRecord, admin_client, ensure_topic
from spark_eos_connect.source.validation import validate_source_options
from spark_eos_connect.testing import wait_for
from spark_eos_connect.testing.postgres import PostgresDatabase
from spark_eos_connect.testing.schema_registry import SchemaRegistryDouble

from ..debezium_events import DEBEZIUM, comparable, decoded

pytestmark = pytest.mark.integration

JSON = "org.apache.kafka.connect.json.JsonConverter"
UNWRAP = {  # Debezium's own SMT, which its plugin folder holds
    "transforms": "unwrap",
    "transforms.unwrap.type": "io.debezium.transforms.ExtractNewRecordState",
    "transforms.unwrap.add.fields": "op",
}
AVRO = "io.confluent.connect.avro.AvroConverter"
TIMEOUT_S = 120.0


@pytest.fixture
def registry() -> Iterator[SchemaRegistryDouble]:
    with SchemaRegistryDouble() as double:
        yield double


def test_debezium_snapshot_then_a_streamed_change_each_once_as_json_and_as_avro(
    spark: Any,
    bootstrap_servers: str,
    kafka_config: dict[str, Any],
    read_committed: Callable[..., list[ConsumedRecord]],
    unique_name: Callable[[str], str],
    postgres_db: PostgresDatabase,
    registry: SchemaRegistryDouble,
    tmp_path: Path,
) -> None:
    postgres_db.execute(
        "CREATE TABLE items (id int PRIMARY KEY, name text NOT NULL)",
        "INSERT INTO items VALUES (1, 'one'), (2, 'two')",
    )

    def start(kind: str, converters: dict[str, str]) -> tuple[Any, str, str]:
        name = unique_name(f"java-debezium-{kind}")
        prefix = name.replace("-", "_")
        topic = f"{prefix}.public.items"
        ensure_topic(admin_client(kafka_config), topic, partitions=1)
        options = {
            "name": name,
            "connector.class": DEBEZIUM,
            "plugin.path": str(jars.plugin_path("debezium")),
            **postgres_db.connector_options(),
            "topic.prefix": prefix,
            "plugin.name": "pgoutput",
            "slot.name": prefix,
            "slot.drop.on.stop": "true",
            "publication.name": f"{prefix}_pub",
            "publication.autocreate.mode": "filtered",
            "table.include.list": "public.items",
            **converters,
            "kafka.bootstrap.servers": bootstrap_servers,
        }
        stream = spark.readStream.format("eosconnect").options(**options).load()
        query = (
            stream.writeStream.format("eosconnect")
            .option("name", name)
            .option("kafka.bootstrap.servers", bootstrap_servers)
            .option("checkpointLocation", str(tmp_path / kind))
            .trigger(processingTime="500 milliseconds")
            .start()
        )
        return query, topic, name

    avro = {
        f"{side}.converter{option}": value
        for side in ("key", "value")
        for option, value in (("", AVRO), (".schema.registry.url", registry.url))
    }
    as_json = {"key.converter": JSON, "value.converter": JSON}
    queries = {
        "json": start("json", as_json),
        "avro": start("avro", avro),
        "unwrap": start("unwrap", {**as_json, **UNWRAP}),
    }

    def holds(count: int) -> bool:
        failed = [q.exception() for q, _, _ in queries.values() if q.exception()]
        held = all(len(read_committed(t, settled=False)) >= count for _, t, _ in queries.values())
        return held or bool(failed)

    def no_failure() -> None:
        for query, _, _ in queries.values():
            assert query.exception() is None, query.exception()

    try:
        wait_for(lambda: holds(2), TIMEOUT_S, "Debezium's snapshots")
        no_failure()
        postgres_db.execute("INSERT INTO items VALUES (3, 'three')")
        wait_for(lambda: holds(3), TIMEOUT_S, "the streamed insert")
        no_failure()
    finally:
        for query, _, _ in queries.values():
            query.stop()

    _, json_topic, name = queries["json"]
    json_records = [r for r in read_committed(json_topic) if r.value]
    events = [decoded(r)[1]["payload"] for r in json_records]
    assert [(e["op"], e["after"]["id"]) for e in events] == [("r", 1), ("r", 2), ("c", 3)]
    offsets = [
        (json.loads(r.key), json.loads(r.value))
        for r in read_committed("eosconnect-offsets")
        if r.key and r.value and json.loads(r.key)[0] == name
    ]
    prefix = name.replace("-", "_")
    assert offsets and all(key == [name, {"server": prefix}] for key, _ in offsets)
    last = offsets[-1][1]
    assert isinstance(last["lsn"], int) and isinstance(last["ts_usec"], int)
    assert last["messageType"] == "INSERT"

    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroDeserializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    _, avro_topic, _ = queries["avro"]
    client = SchemaRegistryClient({"url": registry.url})
    decode = AvroDeserializer(client)
    avro_records = [r for r in read_committed(avro_topic) if r.value]
    values = [
        decode(r.value, SerializationContext(avro_topic, MessageField.VALUE)) for r in avro_records
    ]
    keys = [decode(r.key, SerializationContext(avro_topic, MessageField.KEY)) for r in avro_records]
    assert [comparable(v) for v in values] == [comparable(e) for e in events]
    assert keys == [decoded(r)[0]["payload"] for r in json_records]
    assert sorted(client.get_subjects()) == [f"{avro_topic}-key", f"{avro_topic}-value"]
    registered = json.loads(str(client.get_latest_version(f"{avro_topic}-value").schema.schema_str))
    assert registered["connect.name"] == f"{avro_topic}.Envelope"

    _, unwrapped_topic, _ = queries["unwrap"]
    rows = [decoded(r)[1]["payload"] for r in read_committed(unwrapped_topic)]
    assert rows == [
        {"id": 1, "name": "one", "__op": "r"},
        {"id": 2, "name": "two", "__op": "r"},
        {"id": 3, "name": "three", "__op": "c"},
    ]


def test_a_bad_option_of_a_plugins_own_transform_fails_load_naming_it(
    spark: Any, bootstrap_servers: str, postgres_db: PostgresDatabase
) -> None:
    options = {
        "name": "unwrap-refused",
        "connector.class": DEBEZIUM,
        "plugin.path": str(jars.plugin_path("debezium")),
        **postgres_db.connector_options(),
        "topic.prefix": "refused",
        "plugin.name": "pgoutput",
        **UNWRAP,
        "transforms.unwrap.delete.tombstone.handling.mode": "sometimes",
        "kafka.bootstrap.servers": bootstrap_servers,
    }

    with pytest.raises(InvalidConfigError) as refused:  # the check load() makes
        validate_source_options(options)
    with pytest.raises(Exception) as failed:
        spark.readStream.format("eosconnect").options(**options).load()

    option = "transforms.unwrap.delete.tombstone.handling.mode"
    assert list(refused.value.problems) == [option]
    assert "Value must be one of drop, tombstone" in refused.value.problems[option][0]
    assert "Value must be one of drop, tombstone" in str(failed.value)  # Spark shortens it
