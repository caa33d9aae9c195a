"""The snapshot side of the PostgreSQL CDC task: rows of the captured tables read from one
database snapshot (the slot's exported one, or a fresh one when a snapshot resumes), as `r`
events with their positions.

Rows come table after table in the tables' numbering, each table by key. A row's position is
where a resumed snapshot would continue: after its key in its table, or at the next table
whole after a table's last row (so a table without a key is never resumed in its middle unless
a crash cuts it). `source.snapshot` marks the first and last rows as Debezium does.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from typing import Any

from spark_eos_connect.connectors.postgres.cdc import database as db
from spark_eos_connect.connectors.postgres.cdc.captured_tables import CapturedTables, key_positions
from spark_eos_connect.connectors.postgres.cdc.envelope import (
    ChangeEvent,
    SourceInfo,
    snapshot_marker,
)
from spark_eos_connect.connectors.postgres.cdc.positions import Position, SnapshotPart

__all__ = ["SnapshotReader"]

log = logging.getLogger(__name__)

Row = tuple[int, tuple[str | None, ...]]
"""A table's number and one of its rows as output text."""


class SnapshotReader:
    """Reads the captured tables from `first` (after key `after` in it) on, on `connection`,
    whose transaction holds the database snapshot; closes it when done."""

    def __init__(
        self,
        connection: Any,
        tables: CapturedTables,
        first: int,
        after: tuple[Any, ...] | None,
        fetch_size: int,
        source: SourceInfo,
        parts: list[SnapshotPart],
        resumed: bool,
    ) -> None:
        self._connection = connection
        self._tables = tables
        self._fetch_size = fetch_size
        self._source = source
        """The `source` block of every row: its `lsn` is the slot's consistent point."""
        self._parts = parts
        self._rows = self._read(first, after)
        self._lookahead: Row | None = None
        self._last_table: int | None = first if resumed else None
        """The table of the last row emitted; None before a fresh snapshot's first."""
        self.done = False
        self._keys: dict[int, tuple[int, ...]] = {}
        """Where each table's rows hold its key columns, by table number."""

    def _read(self, first: int, after: tuple[Any, ...] | None) -> Iterator[Row]:
        for index in range(first, len(self._tables.tables)):
            table = self._tables.tables[index]
            categories = db.key_categories(self._connection, table)
            start = after if index == first else None
            for row in db.read_table(self._connection, table, start, categories, self._fetch_size):
                yield index, row

    def _key_positions(self, index: int) -> tuple[int, ...]:
        found = self._keys.get(index)
        if found is None:
            found = self._keys[index] = key_positions(self._tables.tables[index])
        return found

    def poll(self, wanted: int) -> list[tuple[ChangeEvent, Position]]:
        """Up to `wanted` more rows as events; `done` after the last (the connection is then
        closed)."""
        made: list[tuple[ChangeEvent, Position]] = []
        append = made.append
        now = time.time_ns() // 1000
        point = self._source.lsn or 0
        parts = list(self._parts)  # the same for every row of a poll
        tables = self._tables.names_json
        sources: dict[str, SourceInfo] = {}
        """The `source` block of each `snapshot` marker in this poll."""
        table: int | None = None
        if self._lookahead is None:
            self._lookahead = next(self._rows, None)
        while self._lookahead is not None and len(made) < wanted:
            index, row = self._lookahead
            following = self._lookahead = next(self._rows, None)
            last = following is None
            table_done = following is None or following[0] != index
            if index != table:
                table = index
                schemas = self._tables.schemas(index)
                keys = self._key_positions(index)
            marker = snapshot_marker(
                self._last_table is None, last, self._last_table != index, table_done
            )
            self._last_table = index
            if table_done:  # a resume starts at the next table, whole
                at_table, key = index + 1, None
            else:
                at_table, key = index, tuple([row[i] for i in keys])
            position = Position(
                point, "last" if last else "true", at_table, key, resumed=parts, tables=tables
            )
            source = sources.get(marker)
            if source is None:
                source = sources[marker] = SourceInfo(
                    self._source.server, self._source.database, now, None, point, marker
                )
            append((schemas.event("r", None, schemas.row(row), source, now), position))
        if self._lookahead is None:
            self.close()
            self.done = True
            log.info("snapshot done; streaming from %s", point)
        return made

    def close(self) -> None:
        """End the snapshot's transaction and close its connection."""
        connection, self._connection = self._connection, None
        if connection is not None:
            try:
                connection.rollback()
                connection.close()
            except Exception as error:  # closing anyway
                log.debug("closing the snapshot's connection failed: %s", error)
