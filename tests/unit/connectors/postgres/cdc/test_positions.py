"""Offsets of the PostgreSQL CDC source and what a re-read skips."""

from __future__ import annotations

import json
from typing import Any

import pytest

from spark_eos_connect.connectors.postgres.cdc.positions import (
    OffsetError,
    Position,
    SnapshotPart,
    Visibility,
    parse_offset,
    skip_count,
    skips_change,
)


def test_streaming_offsets_round_trip_and_only_complete_ones_move_the_slot() -> None:
    partial = Position(500, xid=9, records=2, complete=False)
    assert parse_offset(partial.offset()) == partial
    assert partial.slot_lsn() is None
    done = Position(500, xid=9, records=3, complete=True)
    assert done.slot_lsn() == 500
    snapshot = Position(100, "true", 1, ("7", "b"))
    assert parse_offset(snapshot.offset()) == snapshot
    assert snapshot.slot_lsn() is None and snapshot.in_snapshot


def test_a_re_read_skips_what_the_committed_offset_covers() -> None:
    committed = Position(500, xid=9, records=2, complete=False)
    assert skip_count(committed, 400) is None  # ended earlier: all of it is in Kafka
    assert skip_count(committed, 500) == 2  # its first two records are
    assert skip_count(committed, 600) == 0
    assert skip_count(Position(500, xid=9, records=3), 500) is None
    assert skip_count(None, 500) == 0
    assert skip_count(Position(100, "last"), 500) == 0


def test_a_malformed_offset_is_named() -> None:
    with pytest.raises(OffsetError, match="not an offset of PostgresCdcSource"):
        parse_offset({"position": 3})


def test_visibility_follows_pg_current_snapshot() -> None:
    seen = Visibility.parse("100:105:101,103")
    assert [seen.saw(x) for x in (99, 100, 101, 102, 103, 104, 105)] == [
        True,
        True,
        False,
        True,
        False,
        True,
        False,
    ]
    assert str(seen) == "100:105:101,103"


def test_visibility_widens_32_bit_ids_with_the_snapshot_epoch() -> None:
    epoch = 3 << 32
    seen = Visibility(epoch + 10, epoch + 20)
    assert seen.saw(5)
    assert not seen.saw(25)
    assert seen.saw(0xFFFFFFF0)  # previous epoch: long committed


def test_a_resumed_part_skips_only_changes_its_snapshot_saw_of_rows_it_read() -> None:
    def sortable(table: int, key: tuple[object, ...]) -> tuple[object, ...]:
        return tuple(int(str(v)) for v in key)

    part = SnapshotPart(1, ("10",), Visibility(100, 110), until_lsn=1000)
    assert parse_offset(Position(50, "true", 1, ("10",), resumed=[part]).offset()) is not None
    # row 11 of table 1 was read by the resumed snapshot, which saw transaction 99
    assert skips_change([part], 1, ("11",), 99, 900, sortable)
    assert not skips_change([part], 1, ("11",), 120, 900, sortable)  # it did not see 120
    assert not skips_change([part], 1, ("9",), 99, 900, sortable)  # row 9: the exported one
    assert not skips_change([part], 0, ("11",), 99, 900, sortable)  # earlier table
    assert skips_change([part], 2, ("1",), 99, 900, sortable)  # later table: resumed part
    assert not skips_change([part], 2, ("1",), 99, 1000, sortable)  # committed after it


def test_offsets_carry_the_captured_tables_in_their_numbering() -> None:
    position = Position(7, "true", 1, (3,), tables='["public.a", "public.b"]')
    parsed = parse_offset(position.offset())
    assert parsed == position
    assert parsed is not None and parsed.table_names() == ["public.a", "public.b"]
    older = parse_offset({"lsn": 7, "txId": 1, "record": 1, "complete": True})
    assert older is not None and older.table_names() is None
    with pytest.raises(OffsetError):
        parse_offset({"lsn": 7, "tables": '{"a": 1}'})


@pytest.mark.parametrize(
    "key", [None, ("1",), ('a"\u00e9\n\\', "b"), ("1", None), (1, "x"), ("\U0001f600",)]
)
def test_a_snapshot_offset_holds_its_key_as_json_dumps_writes_it(key: Any) -> None:
    offset = Position(5, "true", 0, key).offset()
    assert offset["key"] == json.dumps(None if key is None else list(key), default=str)
    parsed = parse_offset(offset)
    assert parsed is not None and parsed.key == (None if key is None else tuple(key))
