"""Debezium's Java PostgresConnector under eosconnect next to the same connector on a Connect
4.3.1 worker (issue 46: "Records equal Debezium's on a Connect worker, field by field").

One database, two tables (an account table with int, text, numeric(12,2), timestamptz, bool
and nullable columns, REPLICA IDENTITY FULL so that `before` carries every column; an entry
table with a composite primary key and a numeric without a scale), captured at once by
Debezium 3.6.1.Final from its plugin folder as an eosconnect source (a Spark query) and by the
session's Connect worker, both with `exactly.once.support=required`, JsonConverter with
schemas and transaction metadata, each with a replication slot, a publication and a topic
prefix of its own. The snapshot, then inserts, updates (a key change among them), deletes and
one transaction over both tables, streamed.

Each topic's records (both tables' and the BEGIN/END transaction topic's) are compared one by
one, key by key in the order written: key, value (schema and payload) and headers, with
Connect's prefix read as ours; each record must be in the partition (of three) that Java's
producer picks for its key bytes. Left out is only what two connectors on one database make
each for themselves: the envelope's event times (`ts_ms`, `ts_us`, `ts_ns`), `source.name`
(the prefix, compared swapped anyway), in snapshot records where and when each one's snapshot
read the row (`source`'s LSN, transaction, xmin, sequence and times), and the value of the
`__debezium.context.runId` header (a UUID each task start makes). Streamed records read the
same WAL, so their `source` and `transaction` are compared whole.

The offsets each writes are compared too: the offsets-topic keys (connector name and source
partition, as raw bytes with the names swapped), and the last offset after the snapshot and
after the changes: the same fields with the same JSON types; after the snapshot the same
values but for the snapshot's positions, after the changes (the same transaction of the same
WAL) the same values. The offsets in between are not: each commits at its own transaction
boundaries (Connect's per poll, ours per micro-batch).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from typing import Any

from spark_eos_connect.apps.connect_worker import ConnectWorker
from spark_eos_connect.jvm import jars
from spark_eos_connect.kafka.clients import ConsumedRecord, admin_client, ensure_topic
from spark_eos_connect.protocol.murmur2 import default_partition
from spark_eos_connect.testing import wait_for
from spark_eos_connect.testing.postgres import PostgresDatabase

from ..debezium_events import DEBEZIUM, comparable, swapped
from .conftest import CONNECT_MARKS

pytestmark = CONNECT_MARKS

JSON = "org.apache.kafka.connect.json.JsonConverter"
OFFSETS_TOPIC = "eosconnect-offsets"
"""The project's default offsets topic, the one the query's connector uses."""
TIMEOUT_S = 120.0
PARTITIONS = 3
"""Partitions of each topic: each record must be in the one Java's producer picks for its key
bytes (murmur2; the key schema's name holds the prefix, so the two sides' differ)."""
TABLES = ("accounts", "entries")
TOPICS = (*(f"public.{table}" for table in TABLES), "transaction")
"""Each connector's topics, after its prefix: a topic per table, and the transactions'."""
SETUP = (
    "CREATE TABLE accounts (id int PRIMARY KEY, owner text NOT NULL, balance numeric(12, 2) "
    "NOT NULL, opened timestamptz NOT NULL, active boolean NOT NULL, note text)",
    "ALTER TABLE accounts REPLICA IDENTITY FULL",
    "CREATE TABLE entries (account int, line int, amount numeric, memo text, "
    "PRIMARY KEY (account, line))",
    "INSERT INTO accounts VALUES "
    "(1, 'ann', 10.50, '2024-01-02 03:04:05.123456+00', true, 'first'), "
    "(2, 'bob', -0.01, '1999-12-31 23:59:59+05', false, NULL), "
    "(3, 'cy é \"q\"', 0, '2024-02-29 12:00:00-08', true, '')",
    "INSERT INTO entries VALUES (1, 1, 12.345, 'coffee'), (1, 2, -3, NULL), "
    "(2, 1, 1e-7, 'tiny'), (3, 1, 123456789012345678901234567890.5, 'huge')",
)
SNAPSHOT = {"public.accounts": 3, "public.entries": 4, "transaction": 0}
CHANGES = (
    "INSERT INTO accounts VALUES (4, 'dee', 99.99, '2025-06-01 00:00:00.5+02', false, 'new')",
    "UPDATE accounts SET balance = balance + 1, note = NULL, active = NOT active WHERE id = 1",
    "BEGIN; INSERT INTO entries VALUES (4, 1, 7.25, 'both'); "
    "UPDATE accounts SET balance = balance - 7.25 WHERE id = 4; COMMIT",
    "UPDATE entries SET line = 9 WHERE account = 1 AND line = 2",
    "UPDATE entries SET memo = 'changed', amount = NULL WHERE account = 2 AND line = 1",
    "DELETE FROM accounts WHERE id = 2",
    "DELETE FROM entries WHERE account = 3",
)
STREAMED = {"public.accounts": 1 + 1 + 1 + 2, "public.entries": 1 + 3 + 1 + 2, "transaction": 14}
"""accounts: the insert, two updates, the delete and its tombstone; entries: the insert, the
key change (delete, tombstone, create), the update, the delete and its tombstone; a BEGIN and
an END event per transaction."""


def shape(offset: dict[str, Any]) -> dict[str, str]:
    """An offset's fields and their JSON types."""
    return {field: type(value).__name__ for field, value in offset.items()}


def test_java_debezium_writes_what_debezium_on_a_connect_worker_writes(
    run_source: Callable[..., Any],
    bootstrap_servers: str,
    kafka_config: dict[str, Any],
    connect_worker: ConnectWorker,
    read_committed: Callable[..., list[ConsumedRecord]],
    unique_name: Callable[[str], str],
    postgres_db: PostgresDatabase,
) -> None:
    postgres_db.execute(*SETUP)
    ours = unique_name("dbz-parity")
    theirs = f"{ours}-connect"
    prefixes = {ours: ours.replace("-", "_"), theirs: theirs.replace("-", "_")}
    topics = {name: {t: f"{p}.{t}" for t in TOPICS} for name, p in prefixes.items()}
    everything = [topic for by_kind in topics.values() for topic in by_kind.values()]
    admin = admin_client(kafka_config)
    for topic in everything:
        ensure_topic(admin, topic, partitions=PARTITIONS)

    def config(name: str) -> dict[str, str]:
        prefix = prefixes[name]
        return {
            "connector.class": DEBEZIUM,
            "tasks.max": "1",
            "exactly.once.support": "required",
            **postgres_db.connector_options(),
            "topic.prefix": prefix,
            "plugin.name": "pgoutput",
            "slot.name": prefix,
            "slot.drop.on.stop": "true",
            "publication.name": f"{prefix}_pub",
            "publication.autocreate.mode": "filtered",
            "table.include.list": ",".join(f"public.{t}" for t in TABLES),
            "key.converter": JSON,
            "key.converter.schemas.enable": "true",
            "value.converter": JSON,
            "value.converter.schemas.enable": "true",
            "provide.transaction.metadata": "true",
        }

    def offsets(name: str) -> list[tuple[bytes, Any]]:
        """`name`'s offsets-topic records (raw key, decoded value), in the order written."""
        topic = connect_worker.offsets_topic if name == theirs else OFFSETS_TOPIC
        found = sorted(read_committed(topic), key=lambda r: r.offset)
        return [
            (r.key, None if r.value is None else json.loads(r.value))
            for r in found
            if r.key and json.loads(r.key)[0] == name
        ]

    def holding(counts: dict[str, int]) -> Callable[[], bool]:
        def check() -> bool:
            connect_worker.raise_if_failed(theirs)
            assert query.exception() is None, query.exception()
            found = Counter(r.topic for r in read_committed(*everything, settled=False))
            return all(
                found[by_kind[k]] >= counts[k] for by_kind in topics.values() for k in TOPICS
            )

        return check

    options = {"name": ours, "plugin.path": str(jars.plugin_path("debezium")), **config(ours)}
    query = run_source(options, once=False)
    try:
        connect_worker.put_connector(theirs, config(theirs))
        wait_for(holding(SNAPSHOT), TIMEOUT_S, "both snapshots")
        snapshot_offsets = {name: offsets(name) for name in (ours, theirs)}
        postgres_db.execute(*CHANGES)
        total = {t: SNAPSHOT[t] + STREAMED[t] for t in TOPICS}
        wait_for(holding(total), TIMEOUT_S, "every change on both sides")
    finally:
        query.stop()
        connect_worker.call("DELETE", f"/connectors/{theirs}")

    def as_ours(value: Any) -> Any:
        return swapped(value, prefixes[theirs], prefixes[ours])

    problems: list[str] = []
    consumed = sorted(read_committed(*everything), key=lambda r: r.offset)
    for kind in TOPICS:
        mine = by_key([r for r in consumed if r.topic == topics[ours][kind]], lambda k: k)
        other = by_key([r for r in consumed if r.topic == topics[theirs][kind]], as_ours)
        assert len(mine) == len(other) == SNAPSHOT[kind] + STREAMED[kind], kind
        for number, (our_record, their_record) in enumerate(zip(mine, other, strict=True)):
            where = f"{kind} record {number} by key"
            problems.extend(
                f"{where}: {difference}"
                for difference in differences(our_record, their_record, as_ours)
            )
        problems.extend(
            f"{kind}: key {record.key!r} in partition {record.partition}"
            for record in (*mine, *other)
            if record.key is not None
            and record.partition != default_partition(record.key, PARTITIONS)
        )
    assert not problems, "\n".join(problems)

    # the offsets: one source partition each, the same key bytes but for the names; the last
    # offset after the snapshot and after the changes
    after_changes = {name: offsets(name) for name in (ours, theirs)}
    for name, records in after_changes.items():
        key = json.dumps([name, {"server": prefixes[name]}], separators=(",", ":")).encode()
        assert {k for k, _ in records} == {key}, name
    snapshot_ends = {name: records[-1][1] for name, records in snapshot_offsets.items()}
    streamed_ends = {name: records[-1][1] for name, records in after_changes.items()}
    for ends in (snapshot_ends, streamed_ends):
        assert shape(ends[ours]) == shape(ends[theirs]), ends
    assert without_positions(snapshot_ends[ours]) == without_positions(snapshot_ends[theirs])
    assert streamed_ends[ours] == streamed_ends[theirs]


RUN_ID = "__debezium.context.runId"
"""The header that names the connector's run (a time-based UUID each task start makes)."""


def headers(record: ConsumedRecord) -> list[tuple[str, str | None]]:
    """A record's headers, names and UTF-8 values, in order; a run id's value only as there."""
    return [
        (k, None if v is None else "<run id>" if k == RUN_ID and v else v.decode())
        for k, v in record.headers
    ]


def by_key(records: list[ConsumedRecord], read: Callable[[Any], Any]) -> list[ConsumedRecord]:
    """`records` in the order of their keys (JSON, read with `read`), each key's in the order
    written (one partition holds them)."""

    def order(record: ConsumedRecord) -> tuple[str, int]:
        key = read(json.loads(record.key or b"null"))
        return json.dumps(key, sort_keys=True), record.offset

    return sorted(records, key=order)


def differences(
    ours: ConsumedRecord, theirs: ConsumedRecord, as_ours: Callable[[Any], Any]
) -> list[str]:
    """How `ours` differs from `theirs` (read with `as_ours`): key, headers, value schema and
    comparable payload."""
    found = []
    our_key, their_key = json.loads(ours.key or b"null"), as_ours(json.loads(theirs.key or b"null"))
    if our_key != their_key:
        found.append(f"key {our_key} != {their_key}")
    if headers(ours) != as_ours(headers(theirs)):
        found.append(f"headers {headers(ours)} != {as_ours(headers(theirs))}")
    if (ours.value is None) != (theirs.value is None):
        return [*found, f"value {ours.value!r} != {theirs.value!r}"]
    if ours.value is None or theirs.value is None:
        return found
    our_value, their_value = json.loads(ours.value), as_ours(json.loads(theirs.value))
    if our_value["schema"] != their_value["schema"]:
        found.append(f"schema {our_value['schema']} != {their_value['schema']}")
    mine, other = comparable(our_value["payload"]), comparable(their_value["payload"])
    for field in sorted(set(mine) | set(other)):
        if mine.get(field) != other.get(field):
            found.append(f"payload.{field} {mine.get(field)} != {other.get(field)}")
    return found


OFFSET_POSITIONS = ("lsn", "lsn_proc", "lsn_commit", "txId", "xmin", "ts_usec")
"""Where and when a snapshot's own transaction read: each connector's own."""


def without_positions(offset: dict[str, Any]) -> dict[str, Any]:
    """A snapshot's offset without the positions each connector's snapshot read at."""
    return {k: v for k, v in offset.items() if k not in OFFSET_POSITIONS}
