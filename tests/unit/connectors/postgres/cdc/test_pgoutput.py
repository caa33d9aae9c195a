"""pgoutput messages decoded from the bytes a PostgreSQL 15 slot returned."""

from __future__ import annotations

import pytest

from spark_eos_connect.connectors.postgres.cdc.pgoutput import (
    UNCHANGED_TOAST,
    Begin,
    Column,
    Commit,
    Delete,
    Insert,
    PgOutputError,
    Relation,
    Truncate,
    Update,
    decode,
    format_lsn,
    parse_lsn,
)

BEGIN = b"B\x00\x00\x00\x00\x01\x92U \x00\x03\x04.,\xb6\x9b\x9e\x00\x00\x02\xd8"
RELATION = (
    b"R\x00\x00@\x01public\x00t\x00d\x00\x03\x01id\x00\x00\x00\x00\x17\xff\xff\xff\xff\x00"
    b"name\x00\x00\x00\x00\x19\xff\xff\xff\xff\x00n\x00\x00\x00\x00\x14\xff\xff\xff\xff"
)
INSERT = b"I\x00\x00@\x01N\x00\x03t\x00\x00\x00\x011t\x00\x00\x00\x01at\x00\x00\x00\x015"
INSERT_NULL = b"I\x00\x00@\x01N\x00\x03t\x00\x00\x00\x012nt\x00\x00\x00\x016"
UPDATE = b"U\x00\x00@\x01N\x00\x03t\x00\x00\x00\x011t\x00\x00\x00\x01bt\x00\x00\x00\x015"
DELETE = b"D\x00\x00@\x01K\x00\x03t\x00\x00\x00\x012nn"
COMMIT = b"C\x00\x00\x00\x00\x00\x01\x92U \x00\x00\x00\x00\x01\x92UP\x00\x03\x04.,\xb6\x9b\x9e"


def test_begin_and_commit_carry_the_transaction_and_its_lsns() -> None:
    begin, commit = decode(BEGIN), decode(COMMIT)
    assert isinstance(begin, Begin) and isinstance(commit, Commit)
    assert begin.xid == 728
    assert begin.final_lsn == commit.commit_lsn == parse_lsn("0/1925520")
    assert commit.end_lsn == parse_lsn("0/1925550") > commit.commit_lsn
    assert begin.commit_ts_us == commit.commit_ts_us > 0


def test_relation_names_the_table_its_columns_types_and_key() -> None:
    relation = decode(RELATION)
    assert relation == Relation(
        16385,
        "public",
        "t",
        "default",
        (Column("id", 23, -1, True), Column("name", 25, -1, False), Column("n", 20, -1, False)),
    )


def test_row_changes_hold_text_values_and_nulls() -> None:
    assert decode(INSERT) == Insert(16385, ("1", "a", "5"))
    assert decode(INSERT_NULL) == Insert(16385, ("2", None, "6"))
    assert decode(UPDATE) == Update(16385, None, ("1", "b", "5"))
    assert decode(DELETE) == Delete(16385, ("2", None, None), old_is_key=True)


def test_an_update_that_changed_the_key_carries_the_old_key_and_unchanged_toast() -> None:
    data = b"U\x00\x00@\x01K\x00\x01t\x00\x00\x00\x013N\x00\x02t\x00\x00\x00\x017u"
    assert decode(data) == Update(16385, ("3",), ("7", UNCHANGED_TOAST), old_is_key=True)


def test_truncate_lists_its_relations() -> None:
    data = b"T\x00\x00\x00\x02\x00\x00\x00@\x01\x00\x00@\x02"
    assert decode(data) == Truncate((16385, 16386), 0)


def test_logical_messages_are_ignored_and_garbage_is_refused() -> None:
    assert decode(b"M\x00") is None
    with pytest.raises(PgOutputError, match="unknown pgoutput message kind"):
        decode(b"Z")
    with pytest.raises(PgOutputError, match="truncated"):
        decode(INSERT[:-2])


def test_lsn_text_round_trips() -> None:
    assert parse_lsn("16/B374D848") == (0x16 << 32) | 0xB374D848
    assert format_lsn(parse_lsn("16/B374D848")) == "16/B374D848"
    with pytest.raises(ValueError, match="not an LSN"):
        parse_lsn("nope")
