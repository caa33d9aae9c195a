"""Debezium's envelope and Connect schemas for PostgreSQL rows, written by JsonConverter."""

from __future__ import annotations

import decimal
import json

import pytest

from spark_eos_connect.api.data import Struct
from spark_eos_connect.connectors.postgres.cdc.envelope import (
    SOURCE_SCHEMA,
    UNAVAILABLE,
    SourceInfo,
    TableSchemas,
    snapshot_marker,
)
from spark_eos_connect.connectors.postgres.cdc.pgoutput import UNCHANGED_TOAST
from spark_eos_connect.connectors.postgres.cdc.schemas import (
    ColumnInfo,
    TableInfo,
    column_schema,
    parse_value,
)
from spark_eos_connect.converters import make_converter
from spark_eos_connect.errors import DataError

TABLE = TableInfo(
    "public",
    "orders",
    (
        ColumnInfo("id", 20, optional=False),
        ColumnInfo("note", 25),
        ColumnInfo("amount", 1700, (10 << 16) + 2 + 4),
        ColumnInfo("at", 1184),
    ),
    ("id",),
)
SOURCE = SourceInfo("shop", "sales", 1_700_000_000_123_456, 731, 26368784)


def test_topic_key_and_envelope_follow_debeziums_names() -> None:
    schemas = TableSchemas("shop", TABLE)
    assert schemas.topic == "shop.public.orders"
    assert schemas.key_schema.name == "shop.public.orders.Key"
    assert [f.name for f in schemas.key_schema.fields] == ["id"]
    envelope = schemas.envelope_schema
    assert (envelope.name, envelope.version) == ("shop.public.orders.Envelope", 2)
    assert [f.name for f in envelope.fields] == [
        "before",
        "after",
        "source",
        "transaction",
        "op",
        "ts_ms",
        "ts_us",
        "ts_ns",
    ]
    assert envelope.field("after").schema.name == "shop.public.orders.Value"  # type: ignore[union-attr]


def test_an_insert_event_as_jsonconverter_writes_it() -> None:
    schemas = TableSchemas("shop", TABLE)
    after = schemas.row(("7", "hi", "12.50", "2024-01-02 03:04:05.25+00"))
    event = schemas.event("c", None, after, SOURCE, now_us=1_700_000_001_000_000)
    converter = make_converter("JsonConverter", {"schemas.enable": "false"}, is_key=False)
    value = json.loads(converter.from_connect_data(event.topic, event.value_schema, event.value))
    assert value["op"] == "c" and value["before"] is None
    assert value["after"]["id"] == 7 and value["after"]["note"] == "hi"
    assert value["after"]["at"] == "2024-01-02T03:04:05.250000Z"  # timestamptz: 6 digits
    assert value["source"]["txId"] == 731 and value["source"]["lsn"] == 26368784
    assert value["source"]["ts_ms"] == 1_700_000_000_123
    assert value["source"]["connector"] == "postgresql" and value["source"]["db"] == "sales"
    assert value["ts_ms"] == 1_700_000_001_000
    key_converter = make_converter("JsonConverter", {"schemas.enable": "false"}, is_key=True)
    assert json.loads(
        key_converter.from_connect_data(event.topic, event.key_schema, event.key)
    ) == {"id": 7}


def test_a_delete_tombstone_keeps_the_key_and_has_no_value() -> None:
    schemas = TableSchemas("shop", TABLE)
    before = schemas.row(("7", None, None, None))
    deleted = schemas.event("d", before, None, SOURCE, now_us=1)
    tombstone = schemas.tombstone(deleted)
    assert tombstone.value is None and tombstone.key == deleted.key
    assert deleted.value is not None and deleted.value.get("op") == "d"


def test_a_table_without_a_key_has_null_keys_and_still_its_tombstones() -> None:
    keyless = TableInfo("public", "logs", (ColumnInfo("line", 25),), ())
    schemas = TableSchemas("shop", keyless)
    assert schemas.key_schema is None
    deleted = schemas.event("d", schemas.row(("gone",)), None, SOURCE, now_us=1)
    assert deleted.key is None and deleted.key_schema is None
    assert schemas.tombstone(deleted).key is None


def test_excluded_columns_are_left_out_of_rows_but_rows_are_read_whole() -> None:
    schemas = TableSchemas("shop", TABLE, frozenset({"note"}))
    assert "note" not in [f.name for f in schemas.row_schema.fields]
    row = schemas.row(("7", "secret", "1.50", "2024-01-01 00:00:00+00"))
    assert "secret" not in repr(row)
    with pytest.raises(DataError, match=r"a row of 2 values for 4 columns"):
        schemas.row(("7", "x"))


def test_an_unchanged_toasted_value_takes_debeziums_placeholder_per_type() -> None:
    table = TableInfo(
        "public",
        "docs",
        (ColumnInfo("id", 23, optional=False), ColumnInfo("body", 25), ColumnInfo("raw", 17)),
        ("id",),
    )
    row = TableSchemas("shop", table).row(("1", UNCHANGED_TOAST, UNCHANGED_TOAST))
    assert row.get("body") == UNAVAILABLE
    assert row.get("raw") == UNAVAILABLE.encode()


@pytest.mark.parametrize(
    ("oid", "modifier", "text", "expected"),
    [
        (16, -1, "t", True),
        (16, -1, "true", True),  # a snapshot reads `::text`
        (16, -1, "false", False),
        (16, -1, "f", False),
        (1184, -1, "1999-12-31 23:59:59+05", "1999-12-31T18:59:59.000000Z"),
        (1184, 3, "2024-01-02 03:04:05.25+00", "2024-01-02T03:04:05.250Z"),
        (1184, 0, "2024-01-02 03:04:05+00", "2024-01-02T03:04:05Z"),
        (21, -1, "-3", -3),
        (1700, (10 << 16) + 2 + 4, "1.50", decimal.Decimal("1.50")),
        (1700, (10 << 16) + 4, "-3", decimal.Decimal(-3)),
        (1083, 3, "00:00:02.5", 2_500),  # time(3): io.debezium.time.Time, milliseconds
        (1114, 3, "1969-12-31 23:59:59.999", -1),  # timestamp(3): io.debezium.time.Timestamp
        (1114, 0, "1970-01-01 00:00:01", 1_000),
        (1114, 4, "1970-01-01 00:00:01.5", 1_500_000),
        (1082, -1, "1970-01-03", 2),
        (1114, -1, "1970-01-01 00:00:01.5", 1_500_000),
        (1083, -1, "00:00:02", 2_000_000),
        (17, -1, "\\x00ff", b"\x00\xff"),
        (2950, -1, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"),
    ],
)
def test_text_values_become_connect_values(
    oid: int, modifier: int, text: str, expected: object
) -> None:
    column = ColumnInfo("c", oid, modifier)
    assert parse_value(column, text) == expected
    column_schema(column).validate(parse_value(column, text))


def test_the_source_block_is_debeziums_version_1_with_origin_fields() -> None:
    assert (SOURCE_SCHEMA.name, SOURCE_SCHEMA.version) == (
        "io.debezium.connector.postgresql.Source",
        1,
    )
    assert [f.name for f in SOURCE_SCHEMA.fields][-3:] == ["xmin", "origin", "origin_lsn"]
    schemas = TableSchemas("shop", TABLE)
    event = schemas.event("c", None, schemas.row(("7", None, None, None)), SOURCE, now_us=1)
    converter = make_converter("JsonConverter", {"schemas.enable": "false"}, is_key=False)
    value = json.loads(converter.from_connect_data(event.topic, event.value_schema, event.value))
    assert value["source"]["origin"] is None and value["source"]["origin_lsn"] is None
    assert list(value["source"])[-2:] == ["origin", "origin_lsn"]


@pytest.mark.parametrize(
    ("flags", "marker"),
    [
        ((True, True, True, True), "last"),  # the only row of the only table
        ((True, False, True, False), "first"),
        ((True, False, False, False), "true"),
        ((True, False, False, True), "last_in_data_collection"),
        ((False, False, True, False), "first_in_data_collection"),
        ((False, True, True, False), "first_in_data_collection"),
        ((False, True, False, True), "last"),
    ],
)
def test_snapshot_records_are_marked_as_debezium_marks_them(
    flags: tuple[bool, bool, bool, bool], marker: str
) -> None:
    assert snapshot_marker(*flags) == marker


@pytest.mark.parametrize(
    ("text", "scale", "unscaled"),
    [
        ("12.345", 3, b"\x30\x39"),  # Java's BigInteger(12345).toByteArray()
        ("0", 0, b"\x00"),
        ("128", 0, b"\x00\x80"),
        ("-128", 0, b"\x80"),
        ("-129.0", 0, b"\xff\x7f"),  # Debezium strips trailing zeros (never below scale 0)
        ("1.50", 1, b"\x0f"),
        ("1200", 0, b"\x04\xb0"),
    ],
)
def test_a_numeric_without_scale_is_a_variable_scale_decimal(
    text: str, scale: int, unscaled: bytes
) -> None:
    column = ColumnInfo("c", 1700)
    schema = column_schema(column)
    assert (schema.name, schema.version, schema.doc, schema.optional) == (
        "io.debezium.data.VariableScaleDecimal",
        1,
        "Variable scaled decimal",
        True,
    )
    value = parse_value(column, text)
    assert isinstance(value, Struct)
    assert (value.get("scale"), value.get("value")) == (scale, unscaled)
    schema.validate(value)
    assert int.from_bytes(unscaled, "big", signed=True) * decimal.Decimal(10) ** -scale == (
        decimal.Decimal(text)
    )


def test_a_numeric_without_scale_that_is_not_a_number_fails_naming_the_way_out() -> None:
    for text in ("NaN", "Infinity"):  # Debezium fails on these too in precise mode
        with pytest.raises(DataError, match=rf"{text}.*decimal.handling.mode"):
            parse_value(ColumnInfo("c", 1700), text)
