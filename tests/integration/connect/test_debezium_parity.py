"""PostgresCdcSource next to Debezium 3.6.1.Final's PostgresConnector (issue 37's parity).

The interop test's table with columns of further types, captured at once by the project's
source (a Spark query) and by Debezium's connector (a plugin of the Connect 4.3.1 worker;
pgoutput, a slot and a publication of its own), both with JsonConverter and schemas, into two
topics under two prefixes of the same shape. The same snapshot rows and the same changes
(insert, update, key change, delete) must come out as the same records: keys, value schemas
(field names, types, optional, names such as `io.debezium.time.*`, versions, parameters,
defaults, docs), `before`, `after`, `op`, `transaction` and the `source` fields that describe
the change. What differs by nature is left out: the names that carry the prefix (compared with
the prefix swapped), the event times (`ts_*`, made by each connector when it emits), the
snapshot's order (ours by primary key, Debezium's the heap's) and its `source` transaction, LSN
and times (each connector's own snapshot). Deliberate differences are asserted: `source.lsn` is
the transaction's commit LSN (Debezium's: the change's own record), `source.sequence` is null.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from spark_eos_connect.apps.connect_worker import ConnectWorker
from spark_eos_connect.kafka.clients import ConsumedRecord, admin_client, ensure_topic
from spark_eos_connect.testing import wait_for
from spark_eos_connect.testing.postgres import PostgresDatabase

from ..debezium_events import DEBEZIUM, decoded, swapped
from .cdc_query import start_cdc_query
from .conftest import CONNECT_MARKS
from .test_postgres_cdc_interop import CHANGES, JSON, RECORDS, ROWS, TABLE

pytestmark = CONNECT_MARKS

TIMEOUT_S = 120.0
MORE_TYPES = (
    "ALTER TABLE items ADD COLUMN small smallint, ADD COLUMN real4 real, "
    "ADD COLUMN double8 double precision, ADD COLUMN raw bytea, ADD COLUMN code varchar(8), "
    "ADD COLUMN at timestamp, ADD COLUMN at3 timestamp(3), ADD COLUMN seen3 timestamptz(3), "
    "ADD COLUMN seen0 timestamptz(0), ADD COLUMN clock time, ADD COLUMN clock3 time(3), "
    "ADD COLUMN tag uuid, ADD COLUMN plain json, ADD COLUMN amount numeric"
)
"""Columns of further types, added to the interop test's table."""
MORE_VALUES = (
    "UPDATE items SET small = -7, real4 = 1.5, double8 = 0.1, raw = '\\x00ff', code = 'ab', "
    "at = '2024-01-02 03:04:05.123456', at3 = '2024-01-02 03:04:05.123', "
    "seen3 = '2024-01-02 03:04:05.12+01', seen0 = '2024-01-02 03:04:05+01', "
    "clock = '12:34:56.789012', clock3 = '12:34:56.789', "
    "tag = 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', plain = '{\"b\": 1}', amount = 12.345 "
    "WHERE id = 1"
)
"""Values for those columns in the snapshot's first row (its `u` event carries them too)."""


def test_envelope_matches_debezium_field_by_field(
    spark: Any,
    bootstrap_servers: str,
    kafka_config: dict[str, Any],
    connect_worker: ConnectWorker,
    read_committed: Callable[..., list[ConsumedRecord]],
    unique_name: Callable[[str], str],
    postgres_db: PostgresDatabase,
    tmp_path: Path,
) -> None:
    postgres_db.execute(TABLE, ROWS, MORE_TYPES, MORE_VALUES)
    name = unique_name("parity")
    ours_prefix = name.replace("-", "_")
    theirs_prefix = f"{ours_prefix}_dbz"
    ours_topic, theirs_topic = f"{ours_prefix}.public.items", f"{theirs_prefix}.public.items"
    admin = admin_client(kafka_config)
    for topic in (ours_topic, theirs_topic):
        ensure_topic(admin, topic, partitions=1)
    database = {
        "database.hostname": postgres_db.host,
        "database.port": str(postgres_db.port),
        "database.user": postgres_db.user,
        "database.password": postgres_db.password,
        "database.dbname": postgres_db.dbname,
    }
    debezium = f"{name}-debezium"
    connect_worker.put_connector(
        debezium,
        {
            **database,
            "connector.class": DEBEZIUM,
            "tasks.max": "1",
            "topic.prefix": theirs_prefix,
            "plugin.name": "pgoutput",
            "slot.name": theirs_prefix,
            "slot.drop.on.stop": "true",
            "publication.name": f"{theirs_prefix}_pub",
            "publication.autocreate.mode": "filtered",
            "table.include.list": "public.items",
            "key.converter": JSON,
            "key.converter.schemas.enable": "true",
            "value.converter": JSON,
            "value.converter.schemas.enable": "true",
        },
    )
    options = {
        **database,
        "name": name,
        "connector.class": "PostgresCdcSource",
        "topic.prefix": ours_prefix,
        "slot.name": ours_prefix,
        "publication.name": f"{ours_prefix}_pub",
        "table.include.list": "public.items",
        "key.converter": "JsonConverter",
        "value.converter": "JsonConverter",
        "kafka.bootstrap.servers": bootstrap_servers,
    }
    query = start_cdc_query(spark, options, tmp_path / "ck")

    def both_have(count: int) -> Callable[[], bool]:
        def check() -> bool:
            connect_worker.raise_if_failed(debezium)
            return all(len(read_committed(t)) >= count for t in (ours_topic, theirs_topic))

        return check

    try:
        wait_for(both_have(2), TIMEOUT_S, "both snapshots' rows")
        postgres_db.execute(*CHANGES)
        wait_for(both_have(RECORDS), TIMEOUT_S, "every change on both sides")
    finally:
        query.stop()
        connect_worker.call("DELETE", f"/connectors/{debezium}")
    ours = [decoded(r) for r in sorted(read_committed(ours_topic), key=lambda r: r.offset)]
    theirs = [
        swapped(decoded(r), theirs_prefix, ours_prefix)
        for r in sorted(read_committed(theirs_topic), key=lambda r: r.offset)
    ]
    assert len(ours) == len(theirs) == RECORDS
    for records in (ours, theirs):
        ops = [value["payload"]["op"] if value else None for _, value in records]
        assert ops == ["r", "r", "c", "u", "d", None, "c", "d", None]
        markers = [value["payload"]["source"]["snapshot"] for _, value in records[:2]]
        assert markers == ["first", "last"]
        # the snapshot's order differs by nature: ours is by primary key, Debezium's the heap's
        records[:2] = sorted(records[:2], key=lambda kv: kv[0]["payload"]["id"])
    for number, ((our_key, our_value), (their_key, their_value)) in enumerate(
        zip(ours, theirs, strict=True)
    ):
        where = f"record {number}"
        assert our_key == their_key, where
        if their_value is None:
            assert our_value is None, f"{where}: Debezium wrote a tombstone"
            continue
        assert our_value["schema"] == their_value["schema"], where
        ours_payload, theirs_payload = our_value["payload"], their_value["payload"]
        for field in ("before", "after", "op", "transaction"):
            assert ours_payload[field] == theirs_payload[field], f"{where}: {field}"
        our_source, their_source = ours_payload["source"], theirs_payload["source"]
        streamed = ours_payload["op"] != "r"
        same = ALWAYS_SAME + STREAMED_SAME if streamed else ALWAYS_SAME
        assert {f: our_source[f] for f in same} == {f: their_source[f] for f in same}, where
        # deliberate: no `sequence`, and `lsn` is that of the transaction's commit (which
        # every event of the transaction shares), not that of the change's own WAL record
        assert our_source["sequence"] is None and their_source["sequence"] is not None, where
        if streamed:
            assert our_source["lsn"] >= their_source["lsn"], where
    streamed_lsns = [value["payload"]["source"]["lsn"] for _, value in ours[2:] if value]
    assert len(set(streamed_lsns)) == len(CHANGES), "one LSN per database transaction"


ALWAYS_SAME = (
    "version",
    "connector",
    "name",
    "db",
    "schema",
    "table",
    "xmin",
    "origin",
    "origin_lsn",
)
"""`source` fields equal in every record."""
STREAMED_SAME = ("snapshot", "txId", "ts_ms", "ts_us", "ts_ns")
"""`source` fields equal in streamed records: the transaction and its commit time. A snapshot's
are each connector's own (its snapshot transaction, slot and read time)."""
