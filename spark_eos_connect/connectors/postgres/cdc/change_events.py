"""One pgoutput change as Debezium's events: an insert a `c` event, an update a `u` event (a
primary key change a `d` event, its tombstone and a `c` event), a delete a `d` event and its
tombstone; operations in `skipped.operations` give none. Under REPLICA IDENTITY FULL an update's
unchanged TOASTed values are taken from the old row it carries. Pure."""

from __future__ import annotations

from typing import Any

from spark_eos_connect.connectors.postgres.cdc.envelope import ChangeEvent, SourceInfo, TableSchemas
from spark_eos_connect.connectors.postgres.cdc.pgoutput import (
    UNCHANGED_TOAST,
    Delete,
    Insert,
    Update,
)

__all__ = ["events_of"]


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
