"""A pgoutput change as Debezium's events, and the part of them a resumed snapshot does not
hold yet (a primary key change judged per key)."""

from __future__ import annotations

from typing import Any

import pytest

from spark_eos_connect.connectors.postgres.cdc.change_events import events_of, unseen_events
from spark_eos_connect.connectors.postgres.cdc.envelope import (
    ChangeEvent,
    SourceInfo,
    TableSchemas,
)
from spark_eos_connect.connectors.postgres.cdc.pgoutput import Delete, Insert, Update
from spark_eos_connect.connectors.postgres.cdc.schemas import ColumnInfo, TableInfo

TABLE = TableInfo(
    "public", "entries", (ColumnInfo("id", 20, optional=False), ColumnInfo("tag", 25)), ("id",)
)
SCHEMAS = TableSchemas("shop", TABLE)
SOURCE = SourceInfo("shop", "sales", 1_700_000_000_123_456, 731, 26368784)

KEY_CHANGE = Update(1, ("300", None), ("1000300", "a"), old_is_key=True)


def made(change: Insert | Update | Delete) -> list[ChangeEvent]:
    return events_of(SCHEMAS, change, SOURCE, 0, frozenset(), tombstones=True)


def described(events: list[ChangeEvent]) -> list[tuple[Any, str | None]]:
    """Each event as (key id, op), a tombstone's op None."""
    return [
        (e.key.get("id") if e.key else None, e.value.get("op") if e.value else None) for e in events
    ]


def held_keys(*ids: int) -> Any:
    """A `held` that says the snapshot read rows `ids` after the change."""
    return lambda values: int(values[0]) in ids


def test_a_key_change_is_a_delete_its_tombstone_and_a_create() -> None:
    assert described(made(KEY_CHANGE)) == [(300, "d"), (300, None), (1000300, "c")]


@pytest.mark.parametrize(
    ("held", "kept"),
    [
        ((), [(300, "d"), (300, None), (1000300, "c")]),
        # the snapshot read the new key after the change, the old one before it: the create
        # is in the snapshot, the delete of the row it emitted earlier is not
        ((1000300,), [(300, "d"), (300, None)]),
        ((300,), [(1000300, "c")]),
        ((300, 1000300), []),
    ],
)
def test_a_key_changes_halves_are_kept_or_skipped_each_by_its_own_key(
    held: tuple[int, ...], kept: list[tuple[Any, str | None]]
) -> None:
    events = made(KEY_CHANGE)
    assert described(unseen_events(KEY_CHANGE, events, held_keys(*held))) == kept


@pytest.mark.parametrize(
    "change",
    [
        Insert(1, ("7", "a")),
        Update(1, None, ("7", "b")),
        Update(1, ("7", "a"), ("7", "b")),  # REPLICA IDENTITY FULL, same key
        Delete(1, ("7", None)),
    ],
)
def test_other_changes_are_skipped_whole_when_the_snapshot_holds_their_row(
    change: Insert | Update | Delete,
) -> None:
    events = made(change)
    assert events
    assert unseen_events(change, events, held_keys(7)) == []
    assert unseen_events(change, events, held_keys(8)) == events
