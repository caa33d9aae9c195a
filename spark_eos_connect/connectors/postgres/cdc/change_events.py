"""One pgoutput change as Debezium's events: an insert a `c` event, an update a `u` event (a
primary key change a `d` event, its tombstone and a `c` event), a delete a `d` event and its
tombstone; operations in `skipped.operations` give none. Under REPLICA IDENTITY FULL an update's
unchanged TOASTed values are taken from the old row it carries. A resumed snapshot part may
already hold a change's rows: `unseen_events` keeps the events it does not. Pure."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from spark_eos_connect.connectors.postgres.cdc.envelope import ChangeEvent, SourceInfo, TableSchemas
from spark_eos_connect.connectors.postgres.cdc.pgoutput import (
    UNCHANGED_TOAST,
    Delete,
    Insert,
    Update,
)

__all__ = ["events_of", "unseen_events"]


def _filled(new: tuple[Any, ...], old: tuple[Any, ...]) -> tuple[Any, ...]:
    """An update's new row with each unchanged TOASTed value taken from the old row."""
    if UNCHANGED_TOAST not in new:
        return new
    return tuple(
        o if n is UNCHANGED_TOAST and o is not UNCHANGED_TOAST else n
        for n, o in zip(new, old, strict=True)
    )


def events_of(
    schemas: TableSchemas,
    change: Insert | Update | Delete,
    source: SourceInfo,
    now_us: int,
    skipped: frozenset[str],
    tombstones: bool,
) -> list[ChangeEvent]:
    """The events of `change` of a table with `schemas`."""
    if isinstance(change, Insert):
        if "c" in skipped:
            return []
        return [schemas.event("c", None, schemas.row(change.new), source, now_us)]
    if isinstance(change, Update):
        if "u" in skipped:
            return []
        new = change.new
        if change.old is not None and not change.old_is_key:  # REPLICA IDENTITY FULL
            new = _filled(new, change.old)
        after = schemas.row(new)
        before = None if change.old is None else schemas.row(change.old)
        if before is not None and schemas.key(before) != schemas.key(after):
            deleted = schemas.event("d", before, None, source, now_us)
            events = [deleted, schemas.tombstone(deleted)] if tombstones else [deleted]
            return [*events, schemas.event("c", None, after, source, now_us)]
        shown = before if not change.old_is_key else None
        return [schemas.event("u", shown, after, source, now_us)]
    if "d" in skipped:
        return []
    deleted = schemas.event("d", schemas.row(change.old), None, source, now_us)
    return [deleted, schemas.tombstone(deleted)] if tombstones else [deleted]


def unseen_events(
    change: Insert | Update | Delete,
    events: list[ChangeEvent],
    held: Callable[[tuple[Any, ...]], bool],
) -> list[ChangeEvent]:
    """The events of `change` (as `events_of` made them) that a resumed snapshot does not
    already hold; `held(values)` says whether the snapshot that read the row with those values
    (its key) saw the change's transaction. A primary key change touches two rows, each judged
    on its own: its delete and tombstone belong to the old key, its create to the new one (a
    snapshot part may have read the new key after the change while the old one was read, and
    emitted, before it)."""
    if isinstance(change, Delete):
        return [] if held(change.old) else events
    if isinstance(change, Update) and change.old is not None and len(events) > 1:
        # events_of makes more than one event of an update only for a key change
        old_key = [] if held(change.old) else events[:-1]
        return old_key + ([] if held(change.new) else events[-1:])
    return [] if held(change.new) else events
