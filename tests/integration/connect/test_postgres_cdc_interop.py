"""PostgresCdcSource's topics read by Kafka Connect's own JsonConverter (issue 37's interop).

The project's CDC source writes a table's snapshot, inserts, an update, a primary key change
and a delete (with tombstones) into Kafka with JsonConverter and schemas. A FileStreamSink on
the Connect 4.3.1 worker then reads the topic with `org.apache.kafka.connect.json.JsonConverter`
for key and value (schemas enabled): its task must stay RUNNING (every key and value converted)
and each line it writes, Java's `Struct.toString()` of the value Connect made, must equal the
same string made from the value the project meant (read back with the project's converter):
every envelope field (`before`, `after`, `source`, `op`, `ts_*`), with its Decimal, dates and
named types, survives the trip field by field.
"""

from __future__ import annotations

import decimal
from collections.abc import Callable
from pathlib import Path
from typing import Any

from spark_eos_connect.api.data import Struct
from spark_eos_connect.apps.connect_worker import ConnectWorker
from spark_eos_connect.converters import make_converter
from spark_eos_connect.kafka.clients import ConsumedRecord, admin_client, ensure_topic
from spark_eos_connect.testing import wait_for
from spark_eos_connect.testing.postgres import PostgresDatabase

from .cdc_query import start_cdc_query
from .conftest import CONNECT_MARKS

pytestmark = CONNECT_MARKS

JSON = "org.apache.kafka.connect.json.JsonConverter"
FILE_SINK = "org.apache.kafka.connect.file.FileStreamSinkConnector"
TIMEOUT_S = 120.0
TABLE = (
    "CREATE TABLE items (id int PRIMARY KEY, name text NOT NULL, price numeric(10,2), "
    "day date, seen timestamptz, flag boolean, big bigint, doc jsonb)"
)
ROWS = (
    "INSERT INTO items VALUES (1, 'one', 12.50, '2024-02-29', '2024-01-02 03:04:05.25+00', "
    "true, 9007199254740993, '{\"a\": [1, 2]}'), (2, 'two é \"q\"', NULL, NULL, NULL, NULL, NULL, "
    "NULL)"
)
CHANGES = (
    "INSERT INTO items VALUES (3, 'three', -0.01, '1969-12-31', '1999-12-31 23:59:59+05', false, "
    "-1, 'null')",
    "UPDATE items SET name = 'uno', price = price * 2 WHERE id = 1",
    "UPDATE items SET id = 20 WHERE id = 2",
    "DELETE FROM items WHERE id = 3",
)
RECORDS = 2 + 1 + 1 + 3 + 2
"""Snapshot rows, the insert, the update, the key change (delete, tombstone, create), the
delete and its tombstone."""


def java_string(value: Any) -> str:
    """What Java's `String.valueOf` prints for the Connect value Connect's JsonConverter makes
    of `value` (a Struct prints its non-null fields in order as `Struct{name=value,...}`)."""
    if value is None:
        return "null"
    if isinstance(value, Struct):
        fields = ",".join(f"{n}={java_string(v)}" for n, v in value if v is not None)
        return "Struct{" + fields + "}"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, decimal.Decimal):
        return str(value)  # BigDecimal.toString of a plain-scale value
    return str(value)


def test_connect_json_converter_reads_the_cdc_envelope_field_by_field(
    spark: Any,
    bootstrap_servers: str,
    kafka_config: dict[str, Any],
    connect_worker: ConnectWorker,
    read_committed: Callable[..., list[ConsumedRecord]],
    unique_name: Callable[[str], str],
    postgres_db: PostgresDatabase,
    tmp_path: Path,
) -> None:
    postgres_db.execute(TABLE, ROWS)
    name = unique_name("cdc-interop")
    prefix = name.replace("-", "_")
    topic = f"{prefix}.public.items"
    ensure_topic(admin_client(kafka_config), topic, partitions=1)
    options = {
        "name": name,
        "connector.class": "PostgresCdcSource",
        "database.hostname": postgres_db.host,
        "database.port": str(postgres_db.port),
        "database.user": postgres_db.user,
        "database.password": postgres_db.password,
        "database.dbname": postgres_db.dbname,
        "topic.prefix": prefix,
        "slot.name": prefix,
        "publication.name": f"{prefix}_pub",
        "key.converter": "JsonConverter",
        "value.converter": "JsonConverter",
        "kafka.bootstrap.servers": bootstrap_servers,
    }
    query = start_cdc_query(spark, options, tmp_path / "ck")
    try:
        wait_for(lambda: len(read_committed(topic)) >= 2, TIMEOUT_S, "the snapshot's rows")
        postgres_db.execute(*CHANGES)
        wait_for(lambda: len(read_committed(topic)) >= RECORDS, TIMEOUT_S, "every change")
    finally:
        query.stop()
    records = sorted(read_committed(topic), key=lambda r: r.offset)
    assert len(records) == RECORDS
    ours = make_converter(JSON, {"schemas.enable": "true"}, is_key=False)
    expected = [java_string(ours.to_connect_data(topic, r.value).value) for r in records]
    assert [line.split("op=")[1][0] for line in expected if line != "null"] == list("rrcudcd")

    out = tmp_path / "connect-sink.txt"
    sink = f"{name}-sink"
    connect_worker.put_connector(
        sink,
        {
            "connector.class": FILE_SINK,
            "tasks.max": "1",
            "topics": topic,
            "file": str(out),
            "key.converter": JSON,
            "key.converter.schemas.enable": "true",
            "value.converter": JSON,
            "value.converter.schemas.enable": "true",
            "consumer.override.auto.offset.reset": "earliest",
            "consumer.override.isolation.level": "read_committed",
        },
    )
    try:

        def all_written() -> bool:
            connect_worker.raise_if_failed(sink)
            return out.exists() and len(out.read_text().splitlines()) >= RECORDS

        wait_for(all_written, TIMEOUT_S, "Connect's FileStreamSink to write every record")
        status = connect_worker.status(sink)
        assert status is not None and [t["state"] for t in status["tasks"]] == ["RUNNING"]
    finally:
        connect_worker.call("DELETE", f"/connectors/{sink}")
    lines = out.read_text().splitlines()
    for number, (line, want) in enumerate(zip(lines, expected, strict=True)):
        assert line == want, f"record {number}:\nConnect: {line}\nproject: {want}"
    assert "price=25.00" in lines[3] and "name=uno" in lines[3]
    assert "version=3.6.1.Final,connector=postgresql" in lines[0]
