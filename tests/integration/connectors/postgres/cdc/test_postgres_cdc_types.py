"""Every PostgreSQL type Debezium 3.6.1 maps, read from a real server both ways: a snapshot query
(the output functions' text, as psycopg's text loader hands it over) and pgoutput. Both must give
the same Connect values, and those Debezium's tests expect (`AbstractRecordsProducerTest`)."""

from __future__ import annotations

import decimal
from typing import Any

import pytest
from psycopg.types.string import TextLoader

from spark_eos_connect.connectors.postgres.cdc import database as db
from spark_eos_connect.connectors.postgres.cdc.pgoutput import Insert, Relation, decode
from spark_eos_connect.connectors.postgres.cdc.schemas import (
    ColumnInfo,
    captured,
    column_schema,
    text_parser,
)
from spark_eos_connect.connectors.postgres.cdc.types import load_types
from spark_eos_connect.testing.postgres import PostgresDatabase

pytestmark = pytest.mark.integration

COLUMNS: dict[str, tuple[str, str, Any]] = {
    # name: (type, literal, expected Connect value)
    "b": ("bool", "true", True),
    "i2": ("int2", "1", 1),
    "i8": ("int8", "1234567890123", 1234567890123),
    "o": ("oid", "4000000000", 4_000_000_000),
    "r": ("float4", "3.3", 3.3),
    "dinf": ("float8", "'-Infinity'", float("-inf")),
    "n": ("numeric(6,4)", "22.22", decimal.Decimal("22.2200")),
    "m": ("money", "'1234.11'", decimal.Decimal("1234.11")),
    "ba": ("bytea", "'\\x010203'", b"\x01\x02\x03"),
    "b1": ("bit(1)", "'1'", True),
    "bs": ("bit(2)", "'11'", b"\x03"),
    "bv": ("varbit", "'111011010001000110000001000000001'", bytes([1, 2, 35, 218, 1])),
    "d": ("date", "'2016-11-04'", 17109),
    "d_pinf": ("date", "'infinity'", -2147472692),
    "t": ("time", "'24:00:00'", 86_400_000_000),
    "tp": ("time(3)", "'13:51:30.123'", 49890123),
    "ttz": ("timetz", "'13:51:30.123789+02:00'", "11:51:30.123789Z"),
    "ts_min": ("timestamp", "'4713-12-31T23:59:59.999999 BC'", -210831897600000001),
    "ts_max": ("timestamp", "'294247-01-01T23:59:59.999999'", 9223371331200000000 - 1),
    "ts_pinf": ("timestamp", "'infinity'", 9223372036825200000),
    "tz": ("timestamptz", "'2016-11-04T13:51:30.123456+02:00'", "2016-11-04T11:51:30.123456Z"),
    "tz_zero": (
        "timestamptz",
        "'21016-11-04T13:51:30.000000+07:00'",
        "+21016-11-04T06:51:30.000000Z",
    ),
    "tz_ninf": ("timestamptz", "'-infinity'", "-infinity"),
    "u": ("uuid", "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"),
    "j": ("json", """'{"bar": "baz"}'""", '{"bar": "baz"}'),
    "jb": ("jsonb", """'{"bar": "baz"}'""", '{"bar": "baz"}'),
    "x": ("xml", "'<foo>bar</foo><foo>bar</foo>'", "<foo>bar</foo><foo>bar</foo>"),
    "ip": ("inet", "'192.168.2.0/12'", "192.168.2.0/12"),
    "cidr": ("cidr", "'192.168.100.128/25'", "192.168.100.128/25"),
    "mac": ("macaddr", "'08:00:2b:01:02:03'", "08:00:2b:01:02:03"),
    "tsr": ("tsrange", "'[2019-03-31 15:30:00, infinity)'", '["2019-03-31 15:30:00",infinity)'),
    "dr": ("daterange", "'[2019-03-31, 2019-04-30)'", "[2019-03-31,2019-04-30)"),
    "nr": ("numrange", "'[5.3,6.3)'", "[5.3,6.3)"),
    "e": ("mood", "'happy'", "happy"),
    "price": ("price", "1.5", decimal.Decimal("1.50")),
    "hs": ("hstore", """'"key4" => "val4","key5" => NULL'""", '{"key5":null,"key4":"val4"}'),
    "ct": ("citext", "'Hello World'", "Hello World"),
    "lt": ("ltree", "'Top.Collections.Pictures'", "Top.Collections.Pictures"),
    "ia": ("int[]", "'{1,2,3}'", [1, 2, 3]),
    "na": (
        "numeric(10,2)[]",
        "'{1.2,3.4,NULL}'",
        [decimal.Decimal("1.20"), decimal.Decimal("3.40"), None],
    ),
    "ca": ("char(10)[]", "'{cone,ctwo}'", ["cone      ", "ctwo      "]),
    "ta": ("text[]", """'{one,NULL,"a,b","\\"q\\""}'""", ["one", None, "a,b", '"q"']),
    "jba": ("jsonb[]", """array['{"bar": "baz"}']::jsonb[]""", ['{"bar": "baz"}']),
    "tza": ("timestamptz[]", "'{\"2020-04-01 11:51:02+00\"}'", ["2020-04-01T11:51:02.000000Z"]),
    "ea": ("mood[]", "'{sad,happy}'", ["sad", "happy"]),
    "lta": ("ltree[]", "'{Ship.Frigate,Ship.Destroyer}'", ["Ship.Frigate", "Ship.Destroyer"]),
    "hsa": (
        "hstore[]",
        """array['"key6" => "val6"'::hstore]""",
        ['{"key6":"val6"}'],
    ),
}
"""Expected values are those of Debezium's AbstractRecordsProducerTest where it has the
literal; the others are what its source makes of the output text (see test_schemas.py)."""


def setup(database: PostgresDatabase) -> None:
    definitions = ", ".join(f"{name} {kind}" for name, (kind, _, _) in COLUMNS.items())
    values = ", ".join(literal for _, literal, _ in COLUMNS.values())
    database.execute(
        "CREATE EXTENSION hstore",
        "CREATE EXTENSION citext",
        "CREATE EXTENSION ltree",
        "CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy')",
        "CREATE DOMAIN price AS numeric(10,2)",
        f"CREATE TABLE types (id int PRIMARY KEY, {definitions}, circ circle)",
        "CREATE PUBLICATION types_pub FOR TABLE types",
        "SELECT pg_create_logical_replication_slot('types_slot', 'pgoutput')",
        f"INSERT INTO types VALUES (1, {values}, '<(1,2),3>')",
        "INSERT INTO types (id) VALUES (2)",
    )


def settings_of(database: PostgresDatabase) -> db.ConnectionSettings:
    return db.ConnectionSettings(
        database.host, database.port, database.user, database.password, database.dbname
    )


def stream(settings: db.ConnectionSettings) -> tuple[Relation, list[tuple[str | None, ...]]]:
    with db.connect(settings) as connection:
        rows, _ = db.peek_changes(connection, "types_slot", "types_pub", 1000)
    messages = [decode(data) for _, data in rows]
    relation = next(m for m in messages if isinstance(m, Relation))
    inserts = [m.new for m in messages if isinstance(m, Insert)]
    return relation, [tuple(v if v is None else str(v) for v in new) for new in inserts]


def snapshot(settings: db.ConnectionSettings, oids: set[int]) -> list[tuple[Any, ...]]:
    with db.connect(settings) as connection:
        cursor = connection.cursor()
        for oid in oids:
            cursor.adapters.register_loader(oid, TextLoader)
        return cursor.execute("SELECT * FROM types ORDER BY id").fetchall()


def test_snapshot_and_stream_give_debeziums_values(postgres_db: PostgresDatabase) -> None:
    setup(postgres_db)
    settings = settings_of(postgres_db)
    relation, streamed = stream(settings)
    with db.connect(settings) as connection:
        types = load_types(connection, {c.type_oid for c in relation.columns})
    columns = [
        ColumnInfo(c.name, c.type_oid, c.type_modifier, True, types[c.type_oid])
        for c in relation.columns
    ]
    snapshotted = snapshot(settings, {c.type_oid for c in columns})
    assert [column.name for column in columns] == ["id", *COLUMNS, "circ"]
    assert not captured(columns[-1])  # Debezium leaves circle columns out
    mapped = columns[1:-1]
    parsers = [text_parser(column) for column in mapped]
    for snapshot_row, stream_row in zip(snapshotted, streamed, strict=True):
        for column, parse, snap, streamed_text in zip(
            mapped, parsers, snapshot_row[1:-1], stream_row[1:-1], strict=True
        ):
            assert snap == streamed_text, column.name  # same output text both ways
            value = snap if parse is None or snap is None else parse(snap)
            if stream_row[0] == "2":
                assert value is None
                continue
            assert value == COLUMNS[column.name][2], column.name
            column_schema(column).validate(value)
