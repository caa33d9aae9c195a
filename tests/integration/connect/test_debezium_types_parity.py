"""PostgresCdcSource's type mapping next to Debezium 3.6.1.Final's, field by field.

One wide table holds a column of each PostgreSQL type Debezium maps (and one it leaves out),
with rows of edge values: NULLs, infinities, BC dates and years past 9999, NaN floats,
arrays with null elements, empty and zero bit strings, `24:00:00`, negative money and
intervals. A second table holds `bytea`, `text`, array, `hstore` and `jsonb` values stored
EXTERNAL (TOASTed, over 2 KB) that an update of another column leaves untouched (REPLICA
IDENTITY DEFAULT: pgoutput sends a marker for them, each connector a placeholder).

Both tables are captured at once by the project's source (a Spark query) and by Debezium's
PostgresConnector on the session's Connect 4.3.1 worker, both with JsonConverter and schemas.
The snapshot (the output functions' text) and the streamed changes (pgoutput's text: inserts
copying every snapshot row, an update setting a row to another's values, a delete) must give
the same keys, value schemas and `before`/`after` values, compared column by column so that a
difference names the column, the row and both values.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from spark_eos_connect.apps.connect_worker import ConnectWorker
from spark_eos_connect.kafka.clients import ConsumedRecord, admin_client, ensure_topic
from spark_eos_connect.testing import wait_for
from spark_eos_connect.testing.postgres import PostgresDatabase

from ..debezium_events import DEBEZIUM, decoded, swapped
from .cdc_query import start_cdc_query
from .conftest import CONNECT_MARKS
from .test_postgres_cdc_interop import JSON

pytestmark = CONNECT_MARKS

TIMEOUT_S = 120.0

COLUMNS: dict[str, str] = {
    "b": "boolean",
    "i2": "smallint",
    "i4": "integer",
    "i8": "bigint",
    "o": "oid",
    "f4": "real",
    "f8": "double precision",
    "n": "numeric(10,2)",
    "nv": "numeric",
    "m": "money",
    "ba": "bytea",
    "b1": "bit(1)",
    "b5": "bit(5)",
    "vb": "varbit",
    "vb3": "varbit(3)",
    "d": "date",
    "t": "time",
    "t3": "time(3)",
    "ttz": "timetz",
    "ts": "timestamp",
    "ts3": "timestamp(3)",
    "tz": "timestamptz",
    "tz0": "timestamptz(0)",
    "iv": "interval",
    "u": "uuid",
    "j": "json",
    "jb": "jsonb",
    "x": "xml",
    "ip": "inet",
    "cd": "cidr",
    "mac": "macaddr",
    "mac8": "macaddr8",
    "i4r": "int4range",
    "i8r": "int8range",
    "nr": "numrange",
    "tsr": "tsrange",
    "tstzr": "tstzrange",
    "dr": "daterange",
    "e": "mood",
    "price": "price",
    "hs": "hstore",
    "ct": "citext",
    "lt": "ltree",
    "tv": "tsvector",
    "pt": "point",
    "c5": "char(5)",
    "vc": "varchar(8)",
    "tx": "text",
    "ua": "uuid[]",
    "ta": "text[]",
    "ia": "int[]",
    "i2a": "smallint[]",
    "i8a": "bigint[]",
    "na": "numeric[]",
    "n2a": "numeric(10,2)[]",
    "f8a": "float8[]",
    "boa": "boolean[]",
    "ca": "char(3)[]",
    "vca": "varchar[]",
    "ea": "mood[]",
    "da": "date[]",
    "tsa": "timestamp[]",
    "tza": "timestamptz[]",
    "tma": "time[]",
    "baa": "bytea[]",
    "ipa": "inet[]",
    "ira": "int4range[]",
    "jba": "jsonb[]",
    "hsa": "hstore[]",
    "lta": "ltree[]",
    "cta": "citext[]",
    "circ": "circle",
}
"""The wide table's columns (after `id`): each type Debezium maps, and `circle`, which it
leaves out of its records."""

ROWS: dict[int, dict[str, str]] = {
    1: {
        "b": "true",
        "i2": "-7",
        "i4": "2147483647",
        "i8": "-9223372036854775808",
        "o": "4000000000",
        "f4": "1.5",
        "f8": "0.1",
        "n": "12345678.91",
        "nv": "12.3450",
        "m": "1234.56",
        "ba": "'\\x00ff10'",
        "b1": "'1'",
        "b5": "'10110'",
        "vb": "'111011010001000110000001000000001'",
        "vb3": "'10'",
        "d": "'2024-02-29'",
        "t": "'12:34:56.789012'",
        "t3": "'23:59:59.999'",
        "ttz": "'13:51:30.123789+02'",
        "ts": "'2024-01-02 03:04:05.123456'",
        "ts3": "'2024-01-02 03:04:05.123'",
        "tz": "'2024-01-02 03:04:05.123456+01'",
        "tz0": "'2024-01-02 03:04:05+01'",
        "iv": "'1 year 2 mons 3 days 04:05:06.789'",
        "u": "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'",
        "j": """'{"b": 1, "a": [1, 2]}'""",
        "jb": """'{"b": 1, "a": [1, 2]}'""",
        "x": "'<foo>bar</foo><foo>bar</foo>'",
        "ip": "'192.168.2.1/24'",
        "cd": "'10.0.0.0/8'",
        "mac": "'08:00:2b:01:02:03'",
        "mac8": "'08:00:2b:01:02:03:04:05'",
        "i4r": "'[1,10)'",
        "i8r": "'(1,10]'",
        "nr": "'[5.3,6.3)'",
        "tsr": "'[2019-03-31 15:30:00, infinity)'",
        "tstzr": "'[2019-03-31 15:30:00+02, 2019-04-01 00:00:00+00)'",
        "dr": "'[2019-03-31, 2019-04-30)'",
        "e": "'happy'",
        "price": "1.5",
        "hs": """'"a"=>"1", "b"=>NULL, "c d"=>"e\\"f", "k1"=>"v1", "key4"=>"val4"'""",
        "ct": "'Hello World'",
        "lt": "'Top.Science.Astronomy'",
        "tv": "'a fat cat sat on a mat'",
        "pt": "'(1.5,-2.25)'",
        "c5": "'ab'",
        "vc": "'abc'",
        "tx": """'two é "q" \\ end'""",
        "ua": "'{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11,NULL,00000000-0000-0000-0000-000000000000}'",
        "ta": """'{one,NULL,"a,b","\\"q\\"","",NULL}'""",
        "ia": "'{1,NULL,3}'",
        "i2a": "'{-1,2}'",
        "i8a": "'{9223372036854775807,NULL}'",
        "na": "'{1.50,NULL,-2,0.000}'",
        "n2a": "'{1.2,NULL,3}'",
        "f8a": "'{1.5,NaN,-Infinity,NULL}'",
        "boa": "'{t,f,NULL}'",
        "ca": "'{a,bc,NULL}'",
        "vca": "'{x,NULL}'",
        "ea": "'{sad,happy}'",
        "da": "'{2024-01-01,NULL,infinity}'",
        "tsa": "'{\"2024-01-02 03:04:05.5\",NULL}'",
        "tza": "'{\"2020-04-01 11:51:02+00\",NULL}'",
        "tma": "'{12:00:00,NULL}'",
        "baa": "ARRAY['\\x00ff'::bytea, NULL]",
        "ipa": "'{10.0.0.1,NULL}'",
        "ira": "'{\"[1,2)\",NULL}'",
        "jba": """array['{"bar": "baz"}', NULL]::jsonb[]""",
        "hsa": """array['"key6" => "val6"'::hstore, NULL]""",
        "lta": "'{Ship.Frigate,NULL}'",
        "cta": "'{Aa,NULL}'",
        "circ": "'<(1,2),3>'",
    },
    2: {},
    3: {
        "b": "false",
        "i2": "32767",
        "i4": "-2147483648",
        "i8": "9223372036854775807",
        "o": "0",
        "f4": "'NaN'",
        "f8": "'-Infinity'",
        "n": "-0.01",
        "nv": "0",
        "m": "-1234.5",
        "ba": "''",
        "b1": "'0'",
        "b5": "'00000'",
        "vb": "''",
        "vb3": "'000'",
        "d": "'infinity'",
        "t": "'24:00:00'",
        "t3": "'00:00:00'",
        "ttz": "'00:00:00-05:30'",
        "ts": "'infinity'",
        "ts3": "'-infinity'",
        "tz": "'infinity'",
        "tz0": "'-infinity'",
        "iv": "'-1 days -00:00:01.5'",
        "u": "'00000000-0000-0000-0000-000000000000'",
        "j": "'null'",
        "jb": "'[]'",
        "x": "'<a/>'",
        "ip": "'::1'",
        "cd": "'2001:db8::/32'",
        "mac": "'ff:ff:ff:ff:ff:ff'",
        "mac8": "'00:00:00:00:00:00:00:00'",
        "i4r": "'empty'",
        "i8r": "'(,)'",
        "nr": "'(,5]'",
        "tsr": "'(-infinity,2019-01-01)'",
        "tstzr": "'empty'",
        "dr": "'[2019-01-01,)'",
        "e": "'sad'",
        "price": "-99999999.99",
        "hs": "''",
        "ct": "''",
        "lt": "''",
        "tv": "''",
        "pt": "'(0,0)'",
        "c5": "'abcde'",
        "vc": "''",
        "tx": "''",
        "ua": "'{}'",
        "ta": "'{}'",
        "ia": "'{}'",
        "na": "'{}'",
        "f8a": "'{}'",
        "ea": "'{}'",
        "circ": "'<(0,0),1>'",
    },
    4: {
        "f4": "'Infinity'",
        "f8": "'NaN'",
        "n": "99999999.99",
        "nv": "-123456789012345678901234567890.123456789",
        "m": "'-92233720368547758.08'",
        "d": "'0044-03-15 BC'",
        "t": "'00:00:00.000001'",
        "t3": "'12:00:00.5'",
        "ttz": "'23:59:59.999999+14'",
        "ts": "'4713-01-01 00:00:00 BC'",
        "ts3": "'0001-12-31 23:59:59.999 BC'",
        "tz": "'0001-01-01 00:00:00+00 BC'",
        "tz0": "'21016-11-04 13:51:30+07'",
        "iv": "'P-1Y-2M3DT-4H-5M-6.000007S'",
        "b5": "'00001'",
        "vb": "'1'",
        "da": "'{0044-03-15 BC}'",
        "tsa": "'{infinity,-infinity}'",
        "tza": "'{infinity,\"0001-01-01 00:00:00+00 BC\"}'",
    },
    5: {
        "d": "'-infinity'",
        "ts": "'-infinity'",
        "ts3": "'infinity'",
        "tz": "'-infinity'",
        "tz0": "'infinity'",
        "t3": "'24:00:00'",
        "f4": "'-Infinity'",
        "f8": "'Infinity'",
        "da": "'{-infinity,1582-10-10,1000-01-01}'",
        "na": "'{1,NaN}'",
        "lta": "'{Ship.Frigate,Ship.Destroyer}'",
    },
    6: {
        "d": "'1582-10-10'",
        "ts": "'1582-10-10 12:00:00'",
        "ts3": "'0044-03-15 12:00:00 BC'",
        "tz": "'1582-10-10 12:00:00+00'",
        "tz0": "'1000-01-01 00:00:00+00'",
        "tsa": '\'{"1582-10-10 12:00:00","0044-03-15 12:00:00.5 BC","1000-01-01 00:00:00"}\'',
        "tza": '\'{"1582-10-10 12:00:00+00","0044-03-15 12:00:00+00 BC"}\'',
        "da": "'{0005-02-28 BC}'",
    },
}
"""The wide table's rows: typical values, all NULLs, edges; absent columns are NULL."""

TOASTED = {
    "note": ("text", "repeat('toast ', 600)"),
    "raw": ("bytea", "decode(repeat('0123456789abcdef', 300), 'hex')"),
    "words": ("text[]", "array_fill('word'::text, ARRAY[700])"),
    "nums": ("int[]", "array(SELECT generate_series(1, 1000))"),
    "bigs": ("bigint[]", "array(SELECT generate_series(1, 500)::bigint)"),
    "ids": ("uuid[]", "array(SELECT md5(g::text)::uuid FROM generate_series(1, 200) g)"),
    "days": ("date[]", "array(SELECT '2024-01-01'::date + g FROM generate_series(1, 800) g)"),
    "tags": (
        "hstore",
        "hstore(array(SELECT 'k' || g FROM generate_series(1, 300) g), "
        "array(SELECT 'v' || g FROM generate_series(1, 300) g))",
    ),
    "doc": ("jsonb", "jsonb_build_object('text', repeat('json ', 600))"),
}
"""The TOASTed table's columns: type and a value of over 2 KB, stored EXTERNAL."""

SETUP = (
    "CREATE EXTENSION hstore",
    "CREATE EXTENSION citext",
    "CREATE EXTENSION ltree",
    "CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy')",
    "CREATE DOMAIN price AS numeric(10,2)",
    "CREATE TABLE kinds (id int PRIMARY KEY, "
    + ", ".join(f"{name} {kind}" for name, kind in COLUMNS.items())
    + ")",
    *(
        f"INSERT INTO kinds (id{''.join(f', {c}' for c in row)}) "
        f"VALUES ({key}{''.join(f', {v}' for v in row.values())})"
        for key, row in ROWS.items()
    ),
    "CREATE TABLE toasted (id int PRIMARY KEY, counter int, "
    + ", ".join(f"{name} {kind}" for name, (kind, _) in TOASTED.items())
    + ")",
    "ALTER TABLE toasted "
    + ", ".join(f"ALTER COLUMN {name} SET STORAGE EXTERNAL" for name in TOASTED),
    f"INSERT INTO toasted VALUES (1, 1, {', '.join(value for _, value in TOASTED.values())})",
)
CHANGED = ", ".join(c for c in COLUMNS if c != "circ")
CHANGES = (
    f"INSERT INTO kinds (id, {', '.join(COLUMNS)}) "
    f"SELECT id + 10, {', '.join(COLUMNS)} FROM kinds ORDER BY id",
    f"UPDATE kinds SET ({CHANGED}) = (SELECT {CHANGED} FROM kinds WHERE id = 4) WHERE id = 1",
    "DELETE FROM kinds WHERE id = 13",
    "UPDATE toasted SET counter = 2 WHERE id = 1",
)
KINDS_RECORDS = len(ROWS) * 2 + 1 + 2
"""The snapshot's rows, their copies, the update, the delete and its tombstone."""
TOASTED_RECORDS = 2


def test_every_type_maps_as_debezium_maps_it(
    capture_both: Callable[..., dict[str, tuple[list[Any], list[Any]]]],
) -> None:
    totals = {"kinds": KINDS_RECORDS, "toasted": TOASTED_RECORDS}
    captured = capture_both(SETUP, CHANGES, {"kinds": len(ROWS), "toasted": 1}, totals, {})
    differences: list[str] = []
    for table, (ours, theirs) in captured.items():
        assert len(ours) == len(theirs) == totals[table], table
        if table == "kinds":
            snapshot_dates(ours[: len(ROWS)], theirs[: len(ROWS)], SNAPSHOT_DATES)
        for number, (mine, other) in enumerate(zip(ours, theirs, strict=True)):
            differences.extend(compare(f"{table} record {number}", mine, other))
    assert differences == [], "\n".join(differences)


OPTIONS = {
    "decimal.handling.mode": "string",
    "interval.handling.mode": "string",
    "hstore.handling.mode": "map",
    "binary.handling.mode": "base64",
    "time.precision.mode": "connect",
}
"""The second case's value options: every one away from its default."""
OPTION_COLUMNS = (
    "n", "nv", "m", "price", "ba", "iv", "hs", "d", "t", "t3", "ts", "ts3", "tz", "ttz",
    "na", "n2a", "da", "tsa", "baa", "hsa",
)  # fmt: skip
"""The wide table's columns whose values those options change."""
OPTION_ROWS: dict[int, dict[str, str]] = {
    **{
        key: {
            c: v
            for c, v in ROWS[key].items()
            if c in OPTION_COLUMNS and not any(x in v for x in ("infinity", "24:00", " BC"))
        }
        for key in (1, 2, 3, 4, 6)
    },
    7: {
        "n": "'NaN'",
        "nv": "'Infinity'",
        "na": "'{NaN,-Infinity,1.5,NULL}'",
        "n2a": "'{1.255,NULL}'",
        "iv": "'1 mon -2 days 00:00:00.000001'",
    },
}
"""Its rows: the wide table's (without infinite dates and times, `24:00:00` and BC dates: ours
refuses them in `time.precision.mode=connect`, as Python's dates and times behind Connect's
Date, Time and Timestamp have no value for them) and numeric specials, which only
`decimal.handling.mode=string` takes."""
OPTION_SETUP = (
    *SETUP[:5],
    "CREATE TABLE kinds (id int PRIMARY KEY, "
    + ", ".join(f"{name} {COLUMNS[name]}" for name in OPTION_COLUMNS)
    + ")",
    *(
        f"INSERT INTO kinds (id{''.join(f', {c}' for c in row)}) "
        f"VALUES ({key}{''.join(f', {v}' for v in row.values())})"
        for key, row in OPTION_ROWS.items()
    ),
)
OPTION_CHANGES = (
    f"INSERT INTO kinds SELECT id + 10, {', '.join(OPTION_COLUMNS)} FROM kinds ORDER BY id",
    f"UPDATE kinds SET ({', '.join(OPTION_COLUMNS)}) = "
    f"(SELECT {', '.join(OPTION_COLUMNS)} FROM kinds WHERE id = 7) WHERE id = 1",
    "DELETE FROM kinds WHERE id = 13",
)


def test_value_options_map_as_debeziums_do(
    capture_both: Callable[..., dict[str, tuple[list[Any], list[Any]]]],
) -> None:
    snapshot = len(OPTION_ROWS)
    total = snapshot * 2 + 3
    captured = capture_both(
        OPTION_SETUP, OPTION_CHANGES, {"kinds": snapshot}, {"kinds": total}, OPTIONS
    )
    ours, theirs = captured["kinds"]
    assert len(ours) == len(theirs) == total
    snapshot_dates(ours[:snapshot], theirs[:snapshot], [6])  # the only one without infinities
    differences: list[str] = []
    for number, (mine, other) in enumerate(zip(ours, theirs, strict=True)):
        differences.extend(compare(f"record {number}", mine, other))
    assert differences == [], "\n".join(differences)


@pytest.fixture
def capture_both(
    spark: Any,
    bootstrap_servers: str,
    kafka_config: dict[str, Any],
    connect_worker: ConnectWorker,
    read_committed: Callable[..., list[ConsumedRecord]],
    unique_name: Callable[[str], str],
    postgres_db: PostgresDatabase,
    tmp_path: Path,
) -> Callable[..., dict[str, tuple[list[Any], list[Any]]]]:
    """`capture_both(setup, changes, snapshots, totals, value_options)`: run `setup`, capture
    the tables `snapshots` names (with their snapshot's row count) with both connectors and
    `value_options`, wait for both snapshots, make `changes`, wait until both sides have
    `totals` records, and return each table's records (ours, Debezium's with our prefix)."""

    def capture(
        setup: tuple[str, ...],
        changes: tuple[str, ...],
        snapshots: dict[str, int],
        totals: dict[str, int],
        value_options: dict[str, str],
    ) -> dict[str, tuple[list[Any], list[Any]]]:
        postgres_db.execute(*setup)
        name = unique_name("types")
        ours_prefix = name.replace("-", "_")
        theirs_prefix = f"{ours_prefix}_dbz"
        admin = admin_client(kafka_config)
        for prefix in (ours_prefix, theirs_prefix):
            for table in snapshots:
                ensure_topic(admin, f"{prefix}.public.{table}", partitions=1)
        common = {
            "database.hostname": postgres_db.host,
            "database.port": str(postgres_db.port),
            "database.user": postgres_db.user,
            "database.password": postgres_db.password,
            "database.dbname": postgres_db.dbname,
            "table.include.list": ",".join(f"public.{table}" for table in snapshots),
            **value_options,
        }
        debezium = f"{name}-debezium"
        connect_worker.put_connector(
            debezium,
            {
                **common,
                "connector.class": DEBEZIUM,
                "tasks.max": "1",
                "topic.prefix": theirs_prefix,
                "plugin.name": "pgoutput",
                "slot.name": theirs_prefix,
                "slot.drop.on.stop": "true",
                "publication.name": f"{theirs_prefix}_pub",
                "publication.autocreate.mode": "filtered",
                "key.converter": JSON,
                "key.converter.schemas.enable": "true",
                "value.converter": JSON,
                "value.converter.schemas.enable": "true",
            },
        )
        options = {
            **common,
            "name": name,
            "connector.class": "PostgresCdcSource",
            "topic.prefix": ours_prefix,
            "slot.name": ours_prefix,
            "publication.name": f"{ours_prefix}_pub",
            "key.converter": "JsonConverter",
            "value.converter": "JsonConverter",
            "kafka.bootstrap.servers": bootstrap_servers,
        }
        query = start_cdc_query(spark, options, tmp_path / f"ck-{name}")
        topics = {
            table: (f"{ours_prefix}.public.{table}", f"{theirs_prefix}.public.{table}")
            for table in snapshots
        }
        counts: dict[str, int] = dict(snapshots)

        def both_have() -> bool:
            connect_worker.raise_if_failed(debezium)
            assert query.exception() is None, query.exception()
            return all(
                len(read_committed(topic)) >= counts[table]
                for table, pair in topics.items()
                for topic in pair
            )

        try:
            wait_for(both_have, TIMEOUT_S, "both snapshots' rows")
            postgres_db.execute(*changes)
            counts.update(totals)
            wait_for(both_have, TIMEOUT_S, "every change on both sides")
        finally:
            query.stop()
            connect_worker.call("DELETE", f"/connectors/{debezium}")
        return {
            table: (
                records(read_committed(ours), snapshots[table]),
                [
                    swapped(record, theirs_prefix, ours_prefix)
                    for record in records(read_committed(theirs), snapshots[table])
                ],
            )
            for table, (ours, theirs) in topics.items()
        }

    return capture


SNAPSHOT_DATES = {
    3: (-2147472692, -622191234),
    4: (-735160, -703383),
    5: (-2147472691, -625821272),
    6: (-141432, -141422),
}
"""Deliberate: the `date` column's snapshot values that differ, by row id (ours, Debezium's).
Debezium's snapshot reads a `date` as a `java.sql.Date` (JDBC) and its stream parses the text,
and the two disagree: the snapshot's `infinity`/`-infinity` are pgjdbc's infinity dates read in
Java's hybrid calendar with the epoch day cast to an int, `0044-03-15 BC` loses its era (year
44), `1582-10-10` (in the Julian/Gregorian gap) moves ten days on. Ours are Debezium's streamed
values for both (the streamed copies of these rows compare equal below), so that a row reads
the same whichever way it came."""


def snapshot_dates(
    ours: list[tuple[Any, Any]], theirs: list[tuple[Any, Any]], rows: Iterable[int]
) -> None:
    """Check and take out the snapshot `date` values of `rows` that differ by design
    (SNAPSHOT_DATES)."""
    for (key, mine), (_, other) in zip(ours, theirs, strict=True):
        row = key["payload"]["id"]
        after, their_after = mine["payload"]["after"], other["payload"]["after"]
        if row in rows:
            assert (after["d"], their_after["d"]) == SNAPSHOT_DATES[row], row
            their_after["d"] = after["d"]


def records(consumed: list[ConsumedRecord], snapshot: int) -> list[tuple[Any, Any]]:
    """A topic's records as (key, value) in offset order, the snapshot's sorted by key (ours
    is in key order, Debezium's in the heap's)."""
    found = [decoded(r) for r in sorted(consumed, key=lambda r: r.offset)]
    found[:snapshot] = sorted(found[:snapshot], key=lambda kv: kv[0]["payload"]["id"])
    return found


def compare(where: str, ours: tuple[Any, Any], theirs: tuple[Any, Any]) -> Iterator[str]:
    """Each difference between two records, by column: schema, then before and after values."""
    (our_key, our_value), (their_key, their_value) = ours, theirs
    if our_key != their_key:
        yield f"{where}: key {our_key} != {their_key}"
    if our_value is None or their_value is None:
        if our_value is not their_value:
            yield f"{where}: one tombstone ({our_value is None}, {their_value is None})"
        return
    our_fields = envelope_fields(our_value["schema"])
    their_fields = envelope_fields(their_value["schema"])
    if list(our_fields) != list(their_fields):
        yield f"{where}: columns {list(our_fields)} != {list(their_fields)}"
    for column in our_fields.keys() & their_fields.keys():
        if our_fields[column] != their_fields[column]:
            yield (
                f"{where}: schema of {column}: ours {json.dumps(our_fields[column])} "
                f"theirs {json.dumps(their_fields[column])}"
            )
    if our_value["schema"] != their_value["schema"] and our_fields == their_fields:
        yield f"{where}: envelope schemas differ outside the columns"
    our_payload, their_payload = our_value["payload"], their_value["payload"]
    if our_payload["op"] != their_payload["op"]:
        yield f"{where}: op {our_payload['op']} != {their_payload['op']}"
    for part in ("before", "after"):
        mine, other = our_payload[part], their_payload[part]
        if mine is None or other is None:
            if mine is not other:
                yield f"{where}: {part} {mine} != {other}"
            continue
        for column in sorted(mine.keys() | other.keys()):
            if mine.get(column, "<absent>") != other.get(column, "<absent>"):
                yield (
                    f"{where}: {part}.{column} ({COLUMNS.get(column, column)}): ours "
                    f"{shown(mine.get(column, '<absent>'))} theirs "
                    f"{shown(other.get(column, '<absent>'))}"
                )


def envelope_fields(schema: dict[str, Any]) -> dict[str, Any]:
    """The column schemas of an envelope's `after` (`before`'s are the same struct)."""
    after = next(f for f in schema["fields"] if f["field"] == "after")
    return {f["field"]: f for f in after["fields"]}


def shown(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 200 else text[:200] + "..."
