"""A workload of numbered database transactions and the checks that Kafka holds each of their
changes exactly once, in commit order, with the snapshot and the stream meeting exactly."""

from __future__ import annotations

import json
import threading
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from spark_eos_connect.kafka.clients import ConsumedRecord
from spark_eos_connect.testing.postgres import PostgresDatabase

PREFIX_TABLES = ("accounts", "entries")

SCHEMA = (
    "CREATE TABLE accounts (id bigint PRIMARY KEY, name text NOT NULL, balance numeric(12,2))",
    "CREATE TABLE entries (id int PRIMARY KEY, account bigint, note text)",
)


def transaction(connection: Any, n: int) -> None:
    """Database transaction number `n`: inserts into both tables, and now and then an update,
    a delete and a primary key change of earlier rows."""
    with connection.transaction():
        connection.execute("INSERT INTO accounts VALUES (%s, %s, %s)", (n, f"acct-{n}", n * 1.25))
        connection.execute("INSERT INTO entries VALUES (%s, %s, %s)", (n, n, f"entry {n}"))
        if n % 4 == 0:
            connection.execute(
                "UPDATE accounts SET balance = balance + 1, name = name || '+' WHERE id = %s",
                (n - 2,),
            )
        if n % 5 == 0:
            connection.execute("DELETE FROM entries WHERE id = %s", (n - 3,))
        if n % 7 == 0:
            connection.execute("UPDATE entries SET id = id + 1000000 WHERE id = %s", (n - 1,))


class Writer(threading.Thread):
    """Commits numbered transactions (`transaction`) from `first` on, `pause_s` apart (about
    20 a second by default), until stopped; `next` is the number of the next one."""

    def __init__(self, database: PostgresDatabase, first: int, pause_s: float = 0.05) -> None:
        super().__init__(name="cdc-writer", daemon=True)
        self.database = database
        self.next = first
        self.pause_s = pause_s
        self.stopping = threading.Event()

    def run(self) -> None:
        with self.database.connect() as connection:
            while not self.stopping.wait(self.pause_s):
                transaction(connection, self.next)
                self.next += 1

    def stop(self) -> None:
        self.stopping.set()
        self.join(timeout=30)


LEDGER = (
    "CREATE TABLE ledger (id int PRIMARY KEY, amount int) PARTITION BY RANGE (id)",
    "CREATE TABLE ledger_1 PARTITION OF ledger FOR VALUES FROM (0) TO (100000)",
)
"""A partitioned table (captured with `publish.via.partition.root=true`)."""
NEW_SHAPE = (
    "ALTER TABLE entries ADD COLUMN tag text",
    "UPDATE entries SET tag = 'v2:' || id WHERE id % 10 = 0",
)
"""A change of `entries`' shape, then changes in the new shape."""
NEW_PARTITION = "CREATE TABLE ledger_2 PARTITION OF ledger FOR VALUES FROM (100000) TO (200000)"


def ledger_changes(database: PostgresDatabase, numbers: Iterable[int]) -> None:
    """A transaction per number: an insert into the ledger's partition of its id range
    (`n + 100000` too once the second partition exists) and an update of an earlier row."""
    with database.connect() as connection:
        two = connection.execute("SELECT to_regclass('ledger_2') IS NOT NULL").fetchone()[0]
        for n in numbers:
            with connection.transaction():
                connection.execute("INSERT INTO ledger VALUES (%s, %s)", (n, n))
                if two:
                    connection.execute("INSERT INTO ledger VALUES (%s, %s)", (n + 100000, n))
                connection.execute("UPDATE ledger SET amount = amount + 1 WHERE id = %s", (n - 1,))


def run_transactions(database: PostgresDatabase, numbers: Iterable[int]) -> None:
    """Run the numbered transactions one after the other."""
    with database.connect() as connection:
        for n in numbers:
            transaction(connection, n)


def table_rows(database: PostgresDatabase, table: str) -> dict[str, dict[str, Any]]:
    """The table now, as the events' JSON would show it: key JSON -> row."""
    with database.connect() as connection:
        rows = connection.execute(f"SELECT row_to_json(t)::text FROM {table} t").fetchall()
    result = {}
    for (text,) in rows:
        row = json.loads(text)
        result[json.dumps({"id": row["id"]})] = row
    return result


@dataclass(frozen=True)
class Event:
    """One record of a table topic, decoded from JsonConverter's schemaless JSON."""

    offset: int
    key: str
    value: dict[str, Any] | None


def events(records: Sequence[ConsumedRecord], topic: str) -> list[Event]:
    """The records of `topic` (one partition) in offset order."""
    found = [r for r in records if r.topic == topic]
    found.sort(key=lambda r: r.offset)
    return [
        Event(
            r.offset,
            json.dumps(json.loads(r.key or b"null")),
            None if r.value is None else json.loads(r.value),
        )
        for r in found
    ]


def _comparable(row: dict[str, Any] | None) -> dict[str, Any] | None:
    """A row with its nulls left out: a row last changed before a column was added has no
    field for it in its event, and null in the table."""
    if row is None:
        return None
    return {k: (float(v) if k == "balance" else v) for k, v in row.items() if v is not None}


def replay(stream: Sequence[Event]) -> dict[str, dict[str, Any]]:
    """Apply a table topic's events in order and fail on any that does not fit the state so
    far: an insert of a key that exists (an overlap or a duplicate), an update or delete of one
    that does not (a gap), a tombstone not right after its delete, commit LSNs going back."""
    state: dict[str, dict[str, Any]] = {}
    last_lsn = 0
    previous: Event | None = None
    for event in stream:
        if event.value is None:
            assert previous is not None and previous.value is not None, "a leading tombstone"
            assert previous.value["op"] == "d" and previous.key == event.key, (
                f"tombstone at {event.offset} does not follow its delete"
            )
            previous = event
            continue
        op, source = event.value["op"], event.value["source"]
        where = f"{op} of {event.key} at offset {event.offset} (txId {source['txId']})"
        if op in ("r", "c"):
            assert event.key not in state, f"{where}: the row is there already (overlap)"
            state[event.key] = event.value["after"]
        elif op == "u":
            assert event.key in state, f"{where}: the row was never seen (gap)"
            state[event.key] = event.value["after"]
        else:
            assert op == "d", where
            assert event.key in state, f"{where}: the row was never seen (gap)"
            del state[event.key]
        if op != "r":
            assert source["lsn"] >= last_lsn, f"{where}: commit LSN went back"
            last_lsn = source["lsn"]
        previous = event
    return state


def assert_exactly_once(stream: Sequence[Event]) -> None:
    """No streamed change twice: (commit LSN, key, op) unique apart from the key change pairs."""
    seen = Counter(
        (e.value["source"]["lsn"], e.key, e.value["op"], json.dumps(e.value["after"]))
        for e in stream
        if e.value is not None and e.value["op"] != "r"
    )
    doubled = [change for change, count in seen.items() if count > 1]
    assert not doubled, f"{len(doubled)} changes twice, e.g. {doubled[:3]}"


def assert_topic_matches_table(
    stream: Sequence[Event], database: PostgresDatabase, table: str
) -> None:
    """The topic replays to exactly the table's rows, every change once."""
    assert_exactly_once(stream)
    replayed = {key: _comparable(row) for key, row in replay(stream).items()}
    expected = {key: _comparable(row) for key, row in table_rows(database, table).items()}
    missing = set(expected) - set(replayed)
    extra = set(replayed) - set(expected)
    assert not missing and not extra, (
        f"{table}: missing {sorted(missing)[:5]}, extra {sorted(extra)[:5]}"
    )
    differing = [k for k in expected if expected[k] != replayed[k]]
    assert not differing, (
        f"{table}: {differing[:3]} differ: {[(expected[k], replayed[k]) for k in differing[:2]]}"
    )


def ops(stream: Sequence[Event]) -> dict[str, int]:
    """How many events of each op (tombstones as `tombstone`)."""
    counts: dict[str, int] = defaultdict(int)
    for event in stream:
        counts["tombstone" if event.value is None else event.value["op"]] += 1
    return dict(counts)
