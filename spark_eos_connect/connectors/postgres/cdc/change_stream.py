"""The streaming side of the PostgreSQL CDC task: the slot's changes as events with their
positions, each transaction read from the slot once in a task's life.

The slot is read without consuming it (`pg_logical_slot_peek_binary_changes`): a cursor (the
end LSN of the last transaction read) leaves out of later reads what the task already has, and
a read covers a few polls (`READ_AHEAD`), kept in a buffer. A transaction is turned into events
as polls ask for them, at most `max.batch.size` a poll, one event held back so that its last
record's offset says `complete`. Transactions (or their first records) the committed offset
covers are skipped, and so are changes a resumed snapshot part already holds. The slot moves
past transactions that gave no record once every record polled before them is committed.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final

from spark_eos_connect.connectors.postgres.cdc import database as db
from spark_eos_connect.connectors.postgres.cdc.captured_tables import CapturedTables, key_text
from spark_eos_connect.connectors.postgres.cdc.change_events import events_of, unseen_events
from spark_eos_connect.connectors.postgres.cdc.envelope import ChangeEvent, SourceInfo, TableSchemas
from spark_eos_connect.connectors.postgres.cdc.heartbeat import (
    HEARTBEAT_KEY_SCHEMA,
    HEARTBEAT_VALUE_SCHEMA,
    Heartbeats,
)
from spark_eos_connect.connectors.postgres.cdc.pgoutput import (
    POSTGRES_EPOCH_US,
    Begin,
    Commit,
    Delete,
    Insert,
    Relation,
    Update,
    decode,
    format_lsn,
)
from spark_eos_connect.connectors.postgres.cdc.positions import (
    Position,
    SnapshotPart,
    skip_count,
    skips_change,
)
from spark_eos_connect.connectors.postgres.cdc.transaction_metadata import TransactionMetadata
from spark_eos_connect.errors import DataError

__all__ = ["ChangeStream", "Slot", "StreamSettings"]

MAX_PEEK_ROWS: Final = 1 << 22
"""The most messages one read past the cursor asks for."""
READ_AHEAD: Final = 4
"""Messages one slot read asks for past the cursor, in `max.batch.size`s: later polls take the
rest from the buffer, and the slot, which decodes from its confirmed position on each read, is
read less often while a micro-batch lasts."""
_COMMIT, _RELATION = ord("C"), ord("R")
"""The first bytes of pgoutput's Commit and Relation messages."""

Made = tuple[ChangeEvent, Position]
"""An event and the position Kafka holds once it holds the event's record."""


def _now_us() -> int:
    return time.time_ns() // 1000


class Slot:
    """The replication slot's confirmed position, moved forward only."""

    def __init__(self, connection: Any, name: str, lsn: int) -> None:
        self._connection, self.name, self.lsn = connection, name, lsn

    def advance(self, lsn: int) -> None:
        """Move the slot to `lsn` if that is ahead of it."""
        if lsn > self.lsn:
            db.advance_slot(self._connection, self.name, lsn)
            self.lsn = lsn


@dataclass(frozen=True)
class StreamSettings:
    """What the stream makes of changes (the task's options)."""

    server: str
    database: str
    publication: str
    batch: int
    skipped: frozenset[str]
    tombstones: bool
    transaction_topic: str | None
    heartbeats: Heartbeats
    heartbeat_query: str


class _OpenTransaction:
    """A database transaction being turned into events, maybe over several polls."""

    def __init__(
        self, events: Iterator[ChangeEvent], begin: Begin, commit: Commit, end: int, skip: int
    ) -> None:
        self.begin, self.commit, self.end, self.skip = begin, commit, end, skip
        self.made = 0
        """Events made so far (those Kafka already holds included)."""
        self.last: Position | None = None
        """The position of the last event handed out."""
        self._events = events
        self._held: ChangeEvent | None = None
        self.done = False

    def take(self, wanted: int, resumed: list[SnapshotPart], tables: CapturedTables) -> list[Made]:
        """Up to `wanted` more events; `done` once the transaction has none left. Positions
        name the tables as they are once the event was made (its table may be new)."""
        made: list[Made] = []
        while len(made) < wanted:
            following = next(self._events, None)
            held, self._held = self._held, following
            if held is not None:
                self.made += 1
                if self.made > self.skip:
                    position = Position(
                        self.commit.end_lsn,
                        xid=self.begin.xid,
                        records=self.made,
                        complete=following is None,
                        resumed=resumed,
                        tables=tables.names_json,
                    )
                    made.append((held, position))
                    self.last = position
            if following is None:
                self.done = True
                break
        return made


class ChangeStream:
    """Reads the slot from where it stands and hands its changes out as events."""

    def __init__(
        self,
        connection: Any,
        slot: Slot,
        tables: CapturedTables,
        settings: StreamSettings,
        emitted: Position | None,
        parts: list[SnapshotPart],
    ) -> None:
        self._connection, self.slot, self._tables = connection, slot, tables
        self._settings = settings
        self.emitted = emitted
        """The position of the last event handed out (or, at start, committed)."""
        self._parts = parts
        self._parts_until = max((p.until_lsn for p in parts), default=0)
        self.idle_lsn = 0
        """The end of the last transaction that gave no record after the last one that did."""
        self._relations: dict[int, TableSchemas | None] = {}
        self._peek_rows = READ_AHEAD * settings.batch
        """Messages the next slot read asks for past the cursor."""
        self._cursor = 0
        """The end LSN of the last transaction read from the slot in this task's life."""
        self._behind = 0
        """Messages the last slot read decoded (all at or before the cursor)."""
        self._buffer: list[tuple[int, bytes]] = []
        self._buffered = 0
        """Read messages from `_buffer[_buffered]` on are not turned into events yet."""
        self._open: _OpenTransaction | None = None

    def poll(self, nothing_in_flight: bool) -> list[Made]:
        """Up to `max.batch.size` events of the next transactions (a heartbeat when none
        comes and one is due); `nothing_in_flight`: Kafka holds every record polled before."""
        batch = self._settings.batch
        made: list[Made] = []
        while True:
            made.extend(self._from_buffer(batch - len(made)))
            if len(made) >= batch:
                break
            idle = not made and nothing_in_flight
            flushed = db.flushed_lsn(self._connection) if idle else 0
            asked = self._behind + self._peek_rows
            rows, decoded = db.peek_changes(
                self._connection, self.slot.name, self._settings.publication, asked, self._cursor
            )
            self._behind = decoded
            if rows:
                self._buffer, self._buffered = rows, 0
                last = decode(rows[-1][1])
                assert isinstance(last, Commit), "a slot read ends with a whole transaction"
                self._cursor = last.end_lsn
                continue
            if decoded < asked:  # the read decoded all the WAL flushed before it
                if idle:  # and every transaction read before is in Kafka
                    self.idle_lsn = max(self.idle_lsn, flushed)
                    self.advance_past_idle()
                if not made and self._settings.heartbeats.due(_now_us() // 1000):
                    made.append(self._heartbeat(max(self._cursor, flushed)))
                break
            if self._peek_rows >= MAX_PEEK_ROWS:
                break
            self._peek_rows *= 2  # the slot's position moved less than thought: read further
        return made

    def advance_past_idle(self) -> None:
        """Move the slot past transactions that gave no record (other tables, changes the
        snapshot already held), or it would keep their WAL forever. Only called when every
        record before them is committed: nothing of theirs can be lost."""
        self.slot.advance(self.idle_lsn)

    def _heartbeat(self, read_to: int) -> Made:
        """A heartbeat whose position says every transaction ending at or before `read_to`
        was read and handed out (the slot read found nothing more)."""
        beats = self._settings.heartbeats
        if self._settings.heartbeat_query:
            self._connection.execute(self._settings.heartbeat_query)
        now_ms = _now_us() // 1000
        event = ChangeEvent(
            beats.topic,
            beats.key(),
            HEARTBEAT_KEY_SCHEMA,
            beats.value(now_ms),
            HEARTBEAT_VALUE_SCHEMA,
            now_ms,
        )
        return event, Position(read_to, tables=self._tables.names_json)

    def _from_buffer(self, wanted: int) -> list[Made]:
        made: list[Made] = []
        while len(made) < wanted:
            if self._open is None and not self._open_next():
                break
            opened = self._open
            assert opened is not None
            resumed = list(self._parts) if opened.commit.end_lsn < self._parts_until else []
            made.extend(opened.take(wanted - len(made), resumed, self._tables))
            if opened.done:
                self._close(opened)
        if self._open is None and self._buffered >= len(self._buffer):
            self._buffer, self._buffered = [], 0
        return made

    def _open_next(self) -> bool:
        """Start on the buffer's next transaction (Relation messages before it applied);
        False when the buffer holds no more."""
        rows = self._buffer
        while self._buffered < len(rows):
            message = decode(rows[self._buffered][1])
            self._buffered += 1
            if isinstance(message, Relation):
                self._relations[message.relation_id] = self._tables.of_relation(message)
            elif isinstance(message, Begin):
                end = self._buffered
                while rows[end][1][0] != _COMMIT:  # a read holds whole transactions
                    end += 1
                commit = decode(rows[end][1])
                assert isinstance(commit, Commit)
                skip = skip_count(self.emitted, commit.end_lsn)
                if skip is None:  # Kafka holds all of it: only its Relation messages count
                    self._apply_relations(self._buffered, end)
                    self._buffered = end + 1
                    continue
                events = self._changes(message, commit, self._buffered, end)
                self._open = _OpenTransaction(events, message, commit, end, skip)
                return True
        return False

    def _apply_relations(self, start: int, end: int) -> None:
        for data in (row[1] for row in self._buffer[start:end]):
            if data[0] == _RELATION:
                message = decode(data)
                assert isinstance(message, Relation)
                self._relations[message.relation_id] = self._tables.of_relation(message)

    def _close(self, done: _OpenTransaction) -> None:
        self._open = None
        self._buffered = done.end + 1
        if done.last is not None:
            self.emitted = done.last
            self.idle_lsn = 0
            return
        end_lsn = done.commit.end_lsn
        self.emitted = Position(end_lsn, xid=done.begin.xid, records=done.made, complete=True)
        if done.made == 0:
            self.idle_lsn = end_lsn

    def _changes(self, begin: Begin, commit: Commit, start: int, end: int) -> Iterator[ChangeEvent]:
        """The events of the transaction whose messages are `_buffer[start:end]`, made as
        they are asked for (Relation messages inside it applied in order)."""
        settings = self._settings
        commit_us = begin.commit_ts_us + POSTGRES_EPOCH_US
        source = SourceInfo(
            settings.server, settings.database, commit_us, begin.xid, commit.commit_lsn
        )
        now = _now_us()
        check_parts = bool(self._parts) and commit.commit_lsn < self._parts_until
        metadata = None
        if settings.transaction_topic is not None:
            metadata = TransactionMetadata(settings.transaction_topic, begin.xid, commit_us // 1000)
        rows = self._buffer
        for at in range(start, end):
            change = decode(rows[at][1])
            if isinstance(change, Relation):
                self._relations[change.relation_id] = self._tables.of_relation(change)
                continue
            if not isinstance(change, Insert | Update | Delete):
                continue
            schemas = self._relations.get(change.relation_id)
            if schemas is None:
                continue
            try:
                events = events_of(
                    schemas, change, source, now, settings.skipped, settings.tombstones
                )
            except DataError as error:
                raise DataError(
                    f"{error} (transaction {begin.xid}, commit LSN "
                    f"{format_lsn(commit.commit_lsn)}); nothing of it or after it is emitted: "
                    "fix the value or leave the table or column out of the capture"
                ) from error
            if check_parts:
                held = functools.partial(self._read_by_snapshot, schemas, begin, commit)
                events = unseen_events(change, events, held)
            if metadata is not None:
                if events and metadata.total == 0:
                    yield metadata.begin()
                for event in events:
                    if event.value is not None:
                        metadata.mark(event, schemas.table.qualified)
            yield from events
        if metadata is not None and metadata.total:
            yield metadata.end()

    def _read_by_snapshot(
        self, schemas: TableSchemas, begin: Begin, commit: Commit, values: tuple[Any, ...]
    ) -> bool:
        """Whether the resumed snapshot part that reads the row whose key `values` hold saw
        this transaction (then the part's rows already hold the change)."""
        table = schemas.table
        index = self._tables.index(table.qualified)
        return index is not None and skips_change(
            self._parts,
            index,
            key_text(table, values),
            begin.xid,
            commit.commit_lsn,
            self._tables.sortable,
        )
