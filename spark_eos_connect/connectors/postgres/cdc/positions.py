"""Where a PostgreSQL CDC task stands, as Connect source offsets, and what to skip on a re-read.

Source partition `{"server": <topic.prefix>}`; every record's offset says how far the stream is
once that record is in Kafka:

- streaming: `{"lsn": <end LSN of the record's transaction>, "txId": <xid>, "record": <records
  of that transaction emitted so far>, "complete": <whether that was its last record>}`. A re-read
  skips transactions that end before `lsn`, and the first `record` records of the one ending at
  it (all of them when `complete`). The slot is advanced to `lsn` only when `complete` (a
  transaction split over Kafka transactions is re-read until its last record is committed).
- snapshot: `{"lsn": <the slot's consistent point>, "snapshot": "true", "table": <index of the
  table in the snapshot order>, "key": <JSON of the last primary key emitted>}`, and on the last
  snapshot record `"snapshot": "last"`.
- every offset also holds `"tables"`: the captured tables (`schema.table`, JSON) in the order
  whose numbers `table` counts, tables captured since then appended. A start that captures a
  table this list does not name snapshots it (it existed before, unseen), numbered after them.
- after a snapshot that was resumed with a fresh database snapshot (the exported one died with
  the crashed task), `"resumed"` holds, as JSON, where each resumed part starts and which
  transactions its database snapshot already saw (`SnapshotPart`); changes of rows in such a part
  made by transactions that snapshot saw are skipped, so the part is neither missed nor doubled.

Pure; no I/O.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from spark_eos_connect.errors import EosConnectError

__all__ = [
    "SERVER_FIELD",
    "OffsetError",
    "Position",
    "SnapshotPart",
    "Visibility",
    "parse_offset",
    "skip_count",
    "skips_change",
]

SERVER_FIELD: Final = "server"
"""The source partition's key: the connector's `topic.prefix` (Debezium's server name)."""


class OffsetError(EosConnectError, ValueError):
    """A stored offset is not one this connector writes."""


@dataclass(frozen=True, slots=True)
class Visibility:
    """A database snapshot's transaction visibility: `pg_current_snapshot()`'s
    `xmin:xmax:xip,...` (64-bit transaction ids)."""

    xmin: int
    xmax: int
    in_progress: frozenset[int] = frozenset()

    @classmethod
    def parse(cls, text: str) -> Visibility:
        """From `pg_current_snapshot()::text`."""
        xmin, xmax, xip = text.split(":")
        return cls(int(xmin), int(xmax), frozenset(int(x) for x in xip.split(",") if x))

    def __str__(self) -> str:
        return f"{self.xmin}:{self.xmax}:{','.join(map(str, sorted(self.in_progress)))}"

    def full_xid(self, xid: int) -> int:
        """A 32-bit transaction id (as pgoutput sends it) widened to the 64-bit id nearest to
        this snapshot's `xmax` (ids wrap around; live ones are within 2^31 of each other)."""
        distance = (xid - self.xmax) & 0xFFFFFFFF
        if distance >= 1 << 31:
            distance -= 1 << 32
        return self.xmax + distance

    def saw(self, xid: int) -> bool:
        """Whether the snapshot sees the changes of committed transaction `xid` (32-bit)."""
        full = self.full_xid(xid)
        return full < self.xmin or (full < self.xmax and full not in self.in_progress)


@dataclass(frozen=True, slots=True)
class SnapshotPart:
    """Rows from (`table`, after `key`) on were read from a fresh snapshot `visibility`;
    `until_lsn` is the WAL position when it was taken (later commits it cannot have seen)."""

    table: int
    key: tuple[Any, ...] | None
    visibility: Visibility
    until_lsn: int

    def to_json(self) -> list[Any]:
        """A JSON-ready list."""
        return [
            self.table,
            None if self.key is None else list(self.key),
            str(self.visibility),
            self.until_lsn,
        ]

    @classmethod
    def from_json(cls, item: Sequence[Any]) -> SnapshotPart:
        """The inverse of `to_json`."""
        table, key, visibility, until = item
        return cls(
            int(table),
            None if key is None else tuple(key),
            Visibility.parse(visibility),
            int(until),
        )

    def covers(self, table: int, key: tuple[Any, ...], sortable: Sortable) -> bool:
        """Whether row `key` (text values) of table number `table` was read in this part or a
        later one; `sortable` orders keys as the snapshot's `ORDER BY` did."""
        if table != self.table:
            return table > self.table
        return self.key is None or sortable(table, key) > sortable(table, self.key)


Sortable = Callable[[int, tuple[Any, ...]], tuple[Any, ...]]
"""Turns a primary key's text values into a tuple Python orders as PostgreSQL does."""


def skips_change(
    parts: Sequence[SnapshotPart],
    table: int,
    key: tuple[Any, ...],
    xid: int,
    commit_lsn: int,
    sortable: Sortable,
) -> bool:
    """Whether a streamed change of row `key` in table number `table` is already in the
    snapshot: its transaction was seen by the resumed snapshot part that read the row."""
    for part in reversed(parts):
        if part.covers(table, key, sortable):
            return commit_lsn < part.until_lsn and part.visibility.saw(xid)
    return False


@dataclass(slots=True)
class Position:
    """A committed (or emitted) position, parsed from an offset."""

    lsn: int
    snapshot: str | None = None
    """None when streaming; `"true"` during the snapshot, `"last"` on its last record."""
    table: int = 0
    key: tuple[Any, ...] | None = None
    xid: int | None = None
    records: int = 0
    complete: bool = True
    resumed: list[SnapshotPart] = field(default_factory=list)
    tables: str | None = None
    """The captured tables in snapshot order, as JSON text (None in offsets older than it)."""

    @property
    def in_snapshot(self) -> bool:
        """Whether the snapshot has more rows to emit."""
        return self.snapshot == "true"

    def offset(self) -> dict[str, Any]:
        """The Connect offset map (string keys, primitive values)."""
        result: dict[str, Any] = {"lsn": self.lsn}
        if self.snapshot is not None:
            result["snapshot"] = self.snapshot
            result["table"] = self.table
            result["key"] = _key_json(self.key)
        else:
            result["txId"] = self.xid
            result["record"] = self.records
            result["complete"] = self.complete
        if self.resumed:
            result["resumed"] = _parts_json(tuple(self.resumed))
        if self.tables is not None:
            result["tables"] = self.tables
        return result

    def table_names(self) -> list[str] | None:
        """The captured tables this position numbers, None when it does not say."""
        return None if self.tables is None else list(json.loads(self.tables))

    def slot_lsn(self) -> int | None:
        """How far the slot may be advanced once this position is committed."""
        if self.snapshot is None and self.complete:
            return self.lsn
        return None


def _key_json(key: tuple[Any, ...] | None) -> str:
    """A snapshot key as JSON text (`json.dumps` of it as a list, values not JSON as text):
    a key of text values, the usual one, written without `json.dumps`'s machinery."""
    if key is None:
        return "null"
    if all(value.__class__ is str for value in key):
        return "[" + ", ".join(map(_json_string, key)) + "]"
    return json.dumps(list(key), default=str)


_json_string: Final[Callable[[str], str]] = json.encoder.encode_basestring_ascii
"""A string as `json.dumps` writes it (ASCII, escaped)."""


@functools.lru_cache(maxsize=64)
def _parts_json(parts: tuple[SnapshotPart, ...]) -> str:
    """The `resumed` field of the offsets of every record after the same resumed parts."""
    return json.dumps([part.to_json() for part in parts], default=str)


def parse_offset(offset: Mapping[str, Any] | None) -> Position | None:
    """The position a stored offset describes (None when there is none)."""
    if offset is None:
        return None
    try:
        lsn = int(offset["lsn"])
        resumed = [SnapshotPart.from_json(p) for p in json.loads(offset.get("resumed") or "[]")]
        tables = offset.get("tables")
        if tables is not None and not isinstance(json.loads(tables), list):
            raise ValueError("tables is not a JSON list")
        if "snapshot" in offset:
            key = json.loads(offset.get("key") or "null")
            return Position(
                lsn,
                str(offset["snapshot"]),
                int(offset.get("table", 0)),
                None if key is None else tuple(key),
                resumed=resumed,
                tables=tables,
            )
        xid = offset.get("txId")
        return Position(
            lsn,
            xid=None if xid is None else int(xid),
            records=int(offset.get("record", 0)),
            complete=bool(offset.get("complete", True)),
            resumed=resumed,
            tables=tables,
        )
    except (KeyError, TypeError, ValueError) as error:
        raise OffsetError(
            f"not an offset of PostgresCdcSource: {dict(offset)!r} ({error}); offsets look like "
            '{"lsn": <int>, "txId": <int>, "record": <int>, "complete": <bool>}'
        ) from error


def skip_count(position: Position | None, end_lsn: int) -> int | None:
    """How many records of the transaction ending at `end_lsn` were already emitted: None for
    all of them, 0 for none."""
    if position is None or position.snapshot is not None:
        return 0
    if end_lsn < position.lsn or (end_lsn == position.lsn and position.complete):
        return None
    if end_lsn == position.lsn:
        return position.records
    return 0
