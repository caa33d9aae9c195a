"""Debezium 3.6.1.Final's Java PostgresConnector from its plugin folder (which ships its own
connect-api 4.3.0: the host's must win) as an eosconnect source on a real broker and database:
the snapshot, then a change streamed, each once under read_committed, with Debezium's offsets
(its numbers Longs) in the offsets topic. The kill campaigns and the field-by-field comparison
with a Connect worker are still to come (issue 46)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from spark_eos_connect.jvm import jars
from spark_eos_connect.kafka.clients import ConsumedRecord, admin_client, ensure_topic
from spark_eos_connect.testing import wait_for
from spark_eos_connect.testing.postgres import PostgresDatabase

pytestmark = pytest.mark.integration

DEBEZIUM = "io.debezium.connector.postgresql.PostgresConnector"
JSON = "org.apache.kafka.connect.json.JsonConverter"
TIMEOUT_S = 120.0


def test_debezium_snapshot_then_a_streamed_change_each_once(
    spark: Any,
    bootstrap_servers: str,
    kafka_config: dict[str, Any],
    read_committed: Callable[..., list[ConsumedRecord]],
    unique_name: Callable[[str], str],
    postgres_db: PostgresDatabase,
    tmp_path: Path,
) -> None:
    postgres_db.execute(
        "CREATE TABLE items (id int PRIMARY KEY, name text NOT NULL)",
        "INSERT INTO items VALUES (1, 'one'), (2, 'two')",
    )
    name = unique_name("java-debezium")
    prefix = name.replace("-", "_")
    topic = f"{prefix}.public.items"
    ensure_topic(admin_client(kafka_config), topic, partitions=1)
    options = {
        "name": name,
        "connector.class": DEBEZIUM,
        "plugin.path": str(jars.plugin_path("debezium")),
        "database.hostname": postgres_db.host,
        "database.port": str(postgres_db.port),
        "database.user": postgres_db.user,
        "database.password": postgres_db.password,
        "database.dbname": postgres_db.dbname,
        "topic.prefix": prefix,
        "plugin.name": "pgoutput",
        "slot.name": prefix,
        "slot.drop.on.stop": "true",
        "publication.name": f"{prefix}_pub",
        "publication.autocreate.mode": "filtered",
        "table.include.list": "public.items",
        "key.converter": JSON,
        "value.converter": JSON,
        "kafka.bootstrap.servers": bootstrap_servers,
    }
    stream = spark.readStream.format("eosconnect").options(**options).load()
    query = (
        stream.writeStream.format("eosconnect")
        .option("name", name)
        .option("kafka.bootstrap.servers", bootstrap_servers)
        .option("checkpointLocation", str(tmp_path / "ck"))
        .trigger(processingTime="500 milliseconds")
        .start()
    )

    def holds(count: int) -> bool:
        return len(read_committed(topic, settled=False)) >= count or bool(query.exception())

    try:
        wait_for(lambda: holds(2), TIMEOUT_S, "Debezium's snapshot")
        assert query.exception() is None, query.exception()
        postgres_db.execute("INSERT INTO items VALUES (3, 'three')")
        wait_for(lambda: holds(3), TIMEOUT_S, "the streamed insert")
        assert query.exception() is None, query.exception()
    finally:
        query.stop()

    events = [json.loads(r.value)["payload"] for r in read_committed(topic) if r.value]
    assert [(e["op"], e["after"]["id"]) for e in events] == [("r", 1), ("r", 2), ("c", 3)]
    offsets = [
        (json.loads(r.key), json.loads(r.value))
        for r in read_committed("eosconnect-offsets")
        if r.key and r.value and json.loads(r.key)[0] == name
    ]
    assert offsets and all(key == [name, {"server": prefix}] for key, _ in offsets)
    last = offsets[-1][1]
    assert isinstance(last["lsn"], int) and isinstance(last["ts_usec"], int)
    assert last["messageType"] == "INSERT"
