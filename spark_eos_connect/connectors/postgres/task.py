"""The PostgreSQL CDC source task: an initial snapshot, then the slot's changes, exactly once.

Start-up (executor side), from the committed offset of `{"server": <topic.prefix>}`:

- none: nothing of this connector is in Kafka, so it starts over: an old slot of that name is
  dropped, the slot is created with an exported snapshot (`database.create_slot_with_snapshot`)
  and, with `snapshot.mode=initial`, every captured row is emitted from that snapshot (op `r`)
  before the slot's changes. The exported snapshot is exactly the database as of the slot's
  consistent point: transactions committed before it are in the snapshot and not in the slot,
  those committed after it are in the slot and not in the snapshot. No gap, no overlap.
- in the snapshot: the exported snapshot died with the earlier task, so the rest of the rows
  (after the last committed key) are read from a fresh REPEATABLE READ snapshot. Rows read from
  it already hold the changes of the transactions it saw; those changes are skipped when the
  slot delivers them for those rows (`positions.skips_change`), and the rows read before keep
  every change since the consistent point, which the slot still holds.
- streaming: the slot is read from where it stands; transactions (or their first records) the
  offset says were committed are skipped, and the slot is first advanced to the committed LSN
  when a crash came between the Kafka commit and the slot's advance.

The slot is read without consuming it (`pg_logical_slot_peek_binary_changes`) and advanced
(`pg_replication_slot_advance`) only in `commit()`, after Kafka committed the transaction that
held the last record of a database transaction; a crash anywhere re-reads from the slot and the
offsets skip what Kafka already has. Each transaction is read from the slot once in a task's
life: a cursor (the end LSN of the last transaction read) leaves out of later slot reads what the
task already has, and a read covers a few polls (`READ_AHEAD`), kept in a buffer. With
`transaction.boundary=connector` the task ends a Kafka transaction after each database
transaction's last record (and after each snapshot batch).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator, Sequence
from typing import Any, Final

from spark_eos_connect.api.source import RecordMetadata, SourceRecord, SourceTask
from spark_eos_connect.connectors.postgres import config as options
from spark_eos_connect.connectors.postgres import database as db
from spark_eos_connect.connectors.postgres.envelope import (
    ChangeEvent,
    SourceInfo,
    TableSchemas,
    snapshot_marker,
)
from spark_eos_connect.connectors.postgres.heartbeat import (
    HEARTBEAT_KEY_SCHEMA,
    HEARTBEAT_VALUE_SCHEMA,
    Heartbeats,
)
from spark_eos_connect.connectors.postgres.pgoutput import (
    POSTGRES_EPOCH_US,
    UNCHANGED_TOAST,
    Begin,
    Commit,
    Delete,
    Insert,
    Relation,
    Update,
    decode,
    format_lsn,
)
from spark_eos_connect.connectors.postgres.positions import (
    SERVER_FIELD,
    Position,
    SnapshotPart,
    Visibility,
    parse_offset,
    skip_count,
    skips_change,
)
from spark_eos_connect.connectors.postgres.schemas import TableInfo, parse_value
from spark_eos_connect.connectors.postgres.transaction_metadata import TransactionMetadata
from spark_eos_connect.connectors.postgres.value_options import ValueSettings
from spark_eos_connect.errors import DataError

__all__ = ["PostgresCdcSourceTask"]

log = logging.getLogger(__name__)

MAX_PEEK_ROWS: Final = 1 << 22
"""The most messages one read past the cursor asks for."""
READ_AHEAD: Final = 4
"""Messages one slot read asks for past the cursor, in `max.batch.size`s: later polls take the
rest from the buffer, and the slot, which decodes from its confirmed position on each read, is
read less often while a micro-batch lasts."""


def _now_us() -> int:
    return time.time_ns() // 1000


def _shape(table: TableInfo) -> tuple[tuple[str, int, int], ...]:
    """A table's columns as a Relation message lists them: name, type, modifier."""
    return tuple((c.name, c.type_oid, c.type_modifier) for c in table.columns)


def _filled(new: tuple[Any, ...], old: tuple[Any, ...]) -> tuple[Any, ...]:
    """An update's new row with each unchanged TOASTed value taken from the old row, which
    REPLICA IDENTITY FULL sends whole."""
    if UNCHANGED_TOAST not in new:
        return new
    return tuple(
        o if n is UNCHANGED_TOAST and o is not UNCHANGED_TOAST else n
        for n, o in zip(new, old, strict=True)
    )


_COMMIT, _RELATION = ord("C"), ord("R")
"""The first bytes of pgoutput's Commit and Relation messages."""


class _OpenTransaction:
    """A database transaction being turned into records, maybe over several polls: one
    event is held back until the next shows it was not the transaction's last (the last
    record's offset says `complete`)."""

    def __init__(
        self,
        task: PostgresCdcSourceTask,
        begin: Begin,
        commit: Commit,
        start: int,
        end: int,
        skip: int,
    ) -> None:
        self.task, self.begin, self.commit, self.end = task, begin, commit, end
        self.skip = skip
        self.made = 0
        """Events made so far (the records already in Kafka included)."""
        self.last: SourceRecord | None = None
        """The last record handed out."""
        self._events = task._changes(begin, commit, start, end)
        self._held: ChangeEvent | None = None
        self.done = False
        self._resumed = list(task._parts) if commit.end_lsn < task._parts_until else []

    def take(self, wanted: int) -> list[SourceRecord]:
        """Up to `wanted` more records; `done` once the transaction has none left."""
        records: list[SourceRecord] = []
        while len(records) < wanted:
            following = next(self._events, None)
            held, self._held = self._held, following
            if held is not None:
                self.made += 1
                if self.made > self.skip:
                    records.append(self._record(held, complete=following is None))
            if following is None:
                self.done = True
                break
        if records:
            self.last = records[-1]
        return records

    def _record(self, event: ChangeEvent, complete: bool) -> SourceRecord:
        position = Position(
            self.commit.end_lsn,
            xid=self.begin.xid,
            records=self.made,
            complete=complete,
            resumed=self._resumed,
            tables=self.task._tables_json,
        )
        return self.task._record(event, position)


class PostgresCdcSourceTask(SourceTask):
    """Emits a snapshot of the captured tables, then their changes, from one logical slot."""

    def __init__(self) -> None:
        self._connection: Any = None
        self._snapshot_reader: Any = None
        self._snapshot_rows: Iterator[tuple[int, tuple[str | None, ...]]] | None = None
        self._lookahead: tuple[int, tuple[str | None, ...]] | None = None
        self._snapshot_table: int | None = None
        """The table of the last snapshot row emitted; None before a fresh snapshot's first."""
        self._tables: list[TableInfo] = []
        self._schemas: dict[str, TableSchemas] = {}
        self._index: dict[str, int] = {}
        self._tables_json = "[]"
        """The captured tables' names in their numbering, as every offset holds them."""
        self._relations: dict[int, TableSchemas | None] = {}
        self._shapes: dict[tuple[Any, ...], TableSchemas | None] = {}
        """Schemas by the (schema, table, columns) a Relation message gave: built once."""
        self._streams = True
        self._parts: list[SnapshotPart] = []
        self._parts_until = 0
        self._emitted: Position | None = None
        self._committed_offset: dict[str, Any] | None = None
        self._polled = 0
        """How many records were polled so far."""
        self._committed = 0
        """How many of the first polled records Kafka committed (commit_record)."""
        self._numbers: dict[int, int] = {}
        """Polled record (by identity) -> its number, until Kafka committed it."""
        self._idle_lsn = 0
        """The end of the last transaction after that record that gave no record at all."""
        self._slot_lsn = 0
        self._consistent_point = 0
        self._peek_rows = 0
        """Messages the next slot read asks for past the cursor."""
        self._cursor = 0
        """The end LSN of the last transaction read from the slot in this task's life: later
        reads fetch only the transactions ending after it."""
        self._behind = 0
        """Messages the last slot read decoded (all at or before the cursor)."""
        self._buffer: list[tuple[int, bytes]] = []
        self._buffered = 0
        """Read messages from `_buffer[_buffered]` on are not turned into records yet."""
        self._open: _OpenTransaction | None = None
        """The transaction whose records are being handed out."""

    # -- start-up ---------------------------------------------------------------------------

    def version(self) -> str:
        """The Debezium release whose events this task's follow."""
        from spark_eos_connect.connectors.postgres.envelope import CONNECTOR_VERSION

        return CONNECTOR_VERSION

    def start(self, props: dict[str, str]) -> None:
        """Check the database, create or check the publication and slot, plan the snapshot."""
        config = options.CONFIG_DEF.parse(props)
        self._settings = options.connection_settings(config)
        self._prefix: str = config[options.TOPIC_PREFIX]
        self._source_partition = {SERVER_FIELD: self._prefix}
        """Every record's source partition: one object, so the runtime keeps one offset per
        poll."""
        self._slot: str = config[options.SLOT_NAME]
        self._publication: str = config[options.PUBLICATION_NAME]
        self._batch: int = config[options.MAX_BATCH_SIZE]
        self._fetch: int = config[options.SNAPSHOT_FETCH_SIZE]
        self._tombstones: bool = config[options.TOMBSTONES_ON_DELETE]
        self._capture = options.capture_filter(config)
        self._values = ValueSettings.from_config(config)
        self._heartbeats = Heartbeats(
            config[options.HEARTBEAT_INTERVAL_MS],
            f"{config[options.HEARTBEAT_TOPIC_PREFIX]}.{self._prefix}",
            self._prefix,
            _now_us() // 1000,
        )
        self._heartbeat_query: str = config[options.HEARTBEAT_ACTION_QUERY]
        self._transaction_topic: str | None = None
        if config[options.PROVIDE_TRANSACTION_METADATA]:
            self._transaction_topic = f"{self._prefix}.{config[options.TRANSACTION_TOPIC]}"
        self._skipped = options.skipped_operations(config)
        mode: str = config[options.SNAPSHOT_MODE]
        self._streams = mode != options.SNAPSHOT_INITIAL_ONLY
        via_root: bool = config[options.PUBLISH_VIA_PARTITION_ROOT]
        self._peek_rows = READ_AHEAD * self._batch
        self._connection = db.connect(self._settings)
        db.check_server(self._connection)
        committed = parse_offset(self.context.offset_storage_reader.offset(self._source_partition))
        current = db.list_tables(self._connection, self._capture, via_root)
        known = None if committed is None else committed.table_names()
        new = self._set_tables(current, known, committed)
        publication_mode: str = config[options.PUBLICATION_AUTOCREATE_MODE]
        db.ensure_publication(
            self._connection, self._publication, publication_mode, current, via_root
        )
        self._check_published()
        state = db.slot_state(self._connection, self._slot)
        if committed is None:
            self._start_over(state, mode)
            return
        if state is None and mode == options.SNAPSHOT_WHEN_NEEDED:
            log.warning(
                "replication slot %s is gone although offsets were committed for it: "
                "snapshot.mode=when_needed takes a new snapshot",
                self._slot,
            )
            self._start_over(state, mode)
            return
        state = db.check_slot(state, self._slot, self._settings.dbname)
        self._emitted = committed
        self._parts = list(committed.resumed)
        self._parts_until = max((p.until_lsn for p in self._parts), default=0)
        self._slot_lsn = state.confirmed_flush_lsn or 0
        if committed.in_snapshot:
            self._consistent_point = committed.lsn
            self._resume_snapshot(committed)
            return
        target = committed.slot_lsn()
        if target is not None and target > self._slot_lsn:
            db.advance_slot(self._connection, self._slot, target)
            self._slot_lsn = target
        first = 0 if mode == options.SNAPSHOT_ALWAYS else None
        if new and first is None:
            first = self._index[new[0]]
        if first is not None and mode not in (options.SNAPSHOT_NO_DATA, options.SNAPSHOT_NEVER):
            if first:
                log.info("tables captured for the first time get a snapshot: %s", ", ".join(new))
            self._consistent_point = committed.lsn
            self._resume_snapshot(Position(committed.lsn, "true", first, None))
        elif new:
            log.warning(
                "tables captured for the first time are streamed without a snapshot "
                "(snapshot.mode=%s): %s",
                mode,
                ", ".join(new),
            )

    def _set_tables(
        self, current: list[TableInfo], known: list[str] | None, committed: Position | None
    ) -> list[str]:
        """Number the captured tables: those the committed offsets numbered keep their order,
        tables captured for the first time come after them. Returns the latter's names."""
        by_name = {t.qualified: t for t in current}
        order = [name for name in known or [] if name in by_name]
        gone = [name for name in known or [] if name not in by_name]
        if gone and committed is not None and (committed.in_snapshot or committed.resumed):
            raise db.CdcSetupError(
                f"tables {', '.join(gone)} are no longer captured (dropped or filtered out) "
                "while a snapshot that numbers them is unfinished: capture them again until "
                "it is, or reset the connector's offsets"
            )
        new = [name for name in by_name if name not in order] if known is not None else []
        self._tables, self._index, self._schemas = [], {}, {}
        for name in [*order, *(n for n in by_name if n not in order)]:
            self._register(by_name[name])
        return new

    def _register(self, table: TableInfo) -> TableSchemas:
        """Capture `table` from now on, numbered after the others; its schemas."""
        self._index[table.qualified] = len(self._tables)
        self._tables.append(table)
        schemas = self._schemas[table.qualified] = self._table_schemas(table)
        self._tables_json = json.dumps([t.qualified for t in self._tables])
        return schemas

    def _table_schemas(self, table: TableInfo) -> TableSchemas:
        excluded = frozenset(
            c.name
            for c in table.columns
            if not self._capture.captures_column(table.schema, table.name, c.name)
        )
        return TableSchemas(self._prefix, table, excluded, self._values)

    def _check_published(self) -> None:
        """Fail unless the publication publishes every captured table: a table it leaves out
        would give no change at all."""
        published = db.publication_tables(self._connection, self._publication)
        missing = [t.qualified for t in self._tables if t.qualified not in published]
        if missing:
            raise db.CdcSetupError(
                f"publication {self._publication!r} does not publish the captured tables "
                f"{', '.join(missing)}: their changes would never arrive; add them "
                f"(ALTER PUBLICATION {self._publication} ADD TABLE ...), use "
                "publication.autocreate.mode=filtered, or narrow the table filters"
            )

    def _start_over(self, state: db.SlotState | None, mode: str) -> None:
        if state is not None and mode in (options.SNAPSHOT_NO_DATA, options.SNAPSHOT_NEVER):
            state = db.check_slot(state, self._slot, self._settings.dbname)
            log.info("no committed offsets: streaming from slot %s where it stands", self._slot)
            self._consistent_point = self._slot_lsn = state.confirmed_flush_lsn or 0
            return
        if state is not None:
            db.check_slot(state, self._slot, self._settings.dbname)
            log.info("no committed offsets: dropping slot %s to start over", self._slot)
            db.drop_slot(self._connection, self._slot)
        point, reader = db.create_slot_with_snapshot(self._settings, self._slot)
        self._consistent_point = self._slot_lsn = point
        if mode in (options.SNAPSHOT_NO_DATA, options.SNAPSHOT_NEVER):
            reader.close()
        else:
            self._snapshot_reader = reader
            self._snapshot_rows = self._read_snapshot(reader, 0, None)

    def _resume_snapshot(self, committed: Position) -> None:
        visibility, until, reader = db.open_snapshot(self._settings)
        after = committed.key
        self._parts.append(
            SnapshotPart(committed.table, after, Visibility.parse(visibility), until)
        )
        self._parts_until = max(self._parts_until, until)
        log.info(
            "resuming the snapshot at table %d after key %s with snapshot %s",
            committed.table,
            after,
            visibility,
        )
        self._snapshot_reader = reader
        self._snapshot_rows = self._read_snapshot(reader, committed.table, after)
        self._snapshot_table = committed.table

    def _read_snapshot(
        self, reader: Any, first: int, after: tuple[Any, ...] | None
    ) -> Iterator[tuple[int, tuple[str | None, ...]]]:
        for index in range(first, len(self._tables)):
            table = self._tables[index]
            categories = db.key_categories(reader, table)
            start = after if index == first else None
            for row in db.read_table(reader, table, start, categories, self._fetch):
                yield index, row

    # -- polling ----------------------------------------------------------------------------

    def poll(self) -> list[SourceRecord] | None:
        """A batch of snapshot rows while the snapshot lasts, then whole database transactions
        from the slot (about `max.batch.size` records)."""
        if self._snapshot_rows is not None:
            return self._poll_snapshot()
        if not self._streams:  # snapshot.mode=initial_only
            return []
        return self._poll_stream()

    def _record(self, event: ChangeEvent, position: Position) -> SourceRecord:
        return SourceRecord(
            self._source_partition,
            position.offset(),
            event.topic,
            event.value,
            key=event.key,
            timestamp=event.timestamp_ms,
            key_schema=event.key_schema,
            value_schema=event.value_schema,
        )

    def _poll_snapshot(self) -> list[SourceRecord]:
        assert self._snapshot_rows is not None
        records: list[SourceRecord] = []
        now = _now_us()
        rows = self._snapshot_rows
        if self._lookahead is None:
            self._lookahead = next(rows, None)
        while self._lookahead is not None and len(records) < self._batch:
            index, row = self._lookahead
            self._lookahead = next(rows, None)
            last = self._lookahead is None
            marker = snapshot_marker(
                self._snapshot_table is None,
                last,
                self._snapshot_table != index,
                self._lookahead is None or self._lookahead[0] != index,
            )
            self._snapshot_table = index
            table = self._tables[index]
            schemas = self._schemas[table.qualified]
            after = schemas.row(row)
            table_done = self._lookahead is None or self._lookahead[0] != index
            if table_done:  # a resume starts at the next table, whole
                at_table, key = index + 1, None
            else:
                at_table, key = index, self._key_text(table, row)
            source = SourceInfo(
                self._prefix,
                self._settings.dbname,
                now,
                None,
                self._consistent_point,
                marker,
            )
            position = Position(
                self._consistent_point,
                "last" if last else "true",
                at_table,
                key,
                resumed=list(self._parts),
                tables=self._tables_json,
            )
            records.append(self._record(schemas.event("r", None, after, source, now), position))
        if self._lookahead is None:
            self._finish_snapshot()
        if records:
            self._number(records)
        self._ask_commit(records[-1:] or None)
        return records

    def _finish_snapshot(self) -> None:
        reader, self._snapshot_reader = self._snapshot_reader, None
        self._snapshot_rows = None
        if reader is not None:
            reader.rollback()
            reader.close()
        self._emitted = Position(
            self._consistent_point, "last", resumed=list(self._parts), tables=self._tables_json
        )
        log.info("snapshot done; streaming from %s", self._consistent_point)

    def _ask_commit(self, records: list[SourceRecord] | None) -> None:
        transactions = self.context.transaction_context
        if transactions is not None and records:
            transactions.commit_transaction(records[-1])

    def _poll_stream(self) -> list[SourceRecord]:
        records: list[SourceRecord] = []
        while True:
            records.extend(self._records_of_buffer(self._batch - len(records)))
            if len(records) >= self._batch:
                break
            idle = not records and self._nothing_in_flight()
            flushed = db.flushed_lsn(self._connection) if idle else 0
            asked = self._behind + self._peek_rows
            rows, decoded = db.peek_changes(
                self._connection, self._slot, self._publication, asked, self._cursor
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
                    self._idle_lsn = max(self._idle_lsn, flushed)
                    self._advance_past_idle()
                if not records and self._heartbeats.due(_now_us() // 1000):
                    records.append(self._heartbeat(max(self._cursor, flushed)))
                break
            if self._peek_rows >= MAX_PEEK_ROWS:
                break
            self._peek_rows *= 2  # the slot's position moved less than thought: read further
        if records:
            self._number(records)
        return records

    def _heartbeat(self, read_to: int) -> SourceRecord:
        """A heartbeat whose offset says every transaction ending at or before `read_to` was
        read and emitted (all of them: the slot read found nothing more)."""
        if self._heartbeat_query:
            self._connection.execute(self._heartbeat_query)
        now_ms = _now_us() // 1000
        record = SourceRecord(
            self._source_partition,
            Position(read_to, tables=self._tables_json).offset(),
            self._heartbeats.topic,
            self._heartbeats.value(now_ms),
            key=self._heartbeats.key(),
            timestamp=now_ms,
            key_schema=HEARTBEAT_KEY_SCHEMA,
            value_schema=HEARTBEAT_VALUE_SCHEMA,
        )
        self._ask_commit([record])
        return record

    def _nothing_in_flight(self) -> bool:
        """Whether Kafka committed every record polled so far."""
        return self._committed == self._polled

    def _number(self, records: list[SourceRecord]) -> None:
        for record in records:
            self._polled += 1
            self._numbers[id(record)] = self._polled

    def _advance_past_idle(self) -> None:
        """Move the slot past transactions that gave no record (other tables, changes the
        snapshot already held), or it would keep their WAL forever. Only called when every
        record before them is committed: nothing of theirs can be lost."""
        if self._idle_lsn > self._slot_lsn:
            db.advance_slot(self._connection, self._slot, self._idle_lsn)
            self._slot_lsn = self._idle_lsn

    def _records_of_buffer(self, wanted: int) -> list[SourceRecord]:
        """Up to `wanted` records of the read transactions not turned into records yet, in
        commit order; a transaction larger than that continues in the next poll."""
        records: list[SourceRecord] = []
        while len(records) < wanted:
            if self._open is None and not self._open_next_transaction():
                break
            assert self._open is not None
            records.extend(self._open.take(wanted - len(records)))
            if self._open.done:
                self._close_transaction(self._open)
        if self._open is None and self._buffered >= len(self._buffer):
            self._buffer, self._buffered = [], 0
        return records

    def _open_next_transaction(self) -> bool:
        """Start on the next transaction of the buffer (Relation messages before it are
        applied); False when the buffer holds no more."""
        rows = self._buffer
        while self._buffered < len(rows):
            message = decode(rows[self._buffered][1])
            self._buffered += 1
            if isinstance(message, Relation):
                self._relations[message.relation_id] = self._relation_schemas(message)
            elif isinstance(message, Begin):
                end = self._buffered
                while rows[end][1][0] != _COMMIT:  # a read holds whole transactions
                    end += 1
                commit = decode(rows[end][1])
                assert isinstance(commit, Commit)
                skip = skip_count(self._emitted, commit.end_lsn)
                if skip is None:  # Kafka holds all of it: only its Relation messages count
                    self._apply_relations(self._buffered, end)
                    self._buffered = end + 1
                    continue
                self._open = _OpenTransaction(self, message, commit, self._buffered, end, skip)
                return True
        return False

    def _apply_relations(self, start: int, end: int) -> None:
        for data in (row[1] for row in self._buffer[start:end]):
            if data[0] == _RELATION:
                message = decode(data)
                assert isinstance(message, Relation)
                self._relations[message.relation_id] = self._relation_schemas(message)

    def _close_transaction(self, done: _OpenTransaction) -> None:
        self._open = None
        self._buffered = done.end + 1
        commit, begin = done.commit, done.begin
        if done.last is not None:
            self._emitted = parse_offset(done.last.source_offset)
            self._idle_lsn = 0
            self._ask_commit([done.last])
        else:
            self._emitted = Position(
                commit.end_lsn, xid=begin.xid, records=done.made, complete=True
            )
            if done.made == 0:
                self._idle_lsn = commit.end_lsn

    def _changes(self, begin: Begin, commit: Commit, start: int, end: int) -> Iterator[ChangeEvent]:
        """The events of the transaction whose messages are `_buffer[start:end]`, made as
        they are asked for (Relation messages inside it applied in order)."""
        commit_us = begin.commit_ts_us + POSTGRES_EPOCH_US
        source = SourceInfo(
            self._prefix, self._settings.dbname, commit_us, begin.xid, commit.commit_lsn
        )
        now = _now_us()
        check_parts = bool(self._parts) and commit.commit_lsn < self._parts_until
        metadata = None
        if self._transaction_topic is not None:
            metadata = TransactionMetadata(self._transaction_topic, begin.xid, commit_us // 1000)
        rows = self._buffer
        for at in range(start, end):
            change = decode(rows[at][1])
            if isinstance(change, Relation):
                self._relations[change.relation_id] = self._relation_schemas(change)
                continue
            if not isinstance(change, Insert | Update | Delete):
                continue
            schemas = self._relations.get(change.relation_id)
            if schemas is None:
                continue
            if check_parts and self._in_snapshot_part(schemas, change, begin, commit):
                continue
            try:
                events = self._events(schemas, change, source, now)
            except DataError as error:
                raise DataError(
                    f"{error} (transaction {begin.xid}, commit LSN "
                    f"{format_lsn(commit.commit_lsn)}); nothing of it or after it is emitted: "
                    "fix the value or leave the table or column out of the capture"
                ) from error
            if metadata is not None:
                if events and metadata.total == 0:
                    yield metadata.begin()
                for event in events:
                    if event.value is not None:
                        metadata.mark(event, schemas.table.qualified)
            yield from events
        if metadata is not None and metadata.total:
            yield metadata.end()

    def _in_snapshot_part(
        self, schemas: TableSchemas, change: Insert | Update | Delete, begin: Begin, commit: Commit
    ) -> bool:
        """Whether a resumed snapshot part already holds this change."""
        table = schemas.table
        index = self._index.get(table.qualified)
        values = change.old if isinstance(change, Delete) else change.new
        return index is not None and skips_change(
            self._parts,
            index,
            self._key_text(table, values),
            begin.xid,
            commit.commit_lsn,
            self._sortable,
        )

    def _relation_schemas(self, relation: Relation) -> TableSchemas | None:
        """The schemas of the table a Relation message describes, in the shape it had when
        its next changes were made (None for a table not captured). pgoutput sends one before
        a table's first change in each slot read and after each change of its shape."""
        shape = tuple((c.name, c.type_oid, c.type_modifier) for c in relation.columns)
        seen = (relation.namespace, relation.name, shape)
        if seen in self._shapes:
            return self._shapes[seen]
        found: TableSchemas | None = None
        qualified = f"{relation.namespace}.{relation.name}"
        if self._capture.captures_table(relation.namespace, relation.name):
            known = self._schemas.get(qualified)
            if known is not None and _shape(known.table) == shape:
                found = known
            else:
                table = db.describe_relation(
                    self._connection, self._capture, relation.namespace, relation.name, shape
                )
                found = self._register(table) if known is None else self._table_schemas(table)
                log.info(
                    "%s %s: columns %s, key %s",
                    "new shape of" if known is not None else "capturing table",
                    qualified,
                    ", ".join(c.name for c in table.columns),
                    ", ".join(table.key) or "none (null keys)",
                )
        self._shapes[seen] = found
        return found

    @staticmethod
    def _key_text(table: TableInfo, values: Sequence[Any]) -> tuple[Any, ...]:
        by_name = {c.name: values[i] for i, c in enumerate(table.columns)}
        return tuple(by_name[name] for name in table.key)

    def _sortable(self, index: int, key: tuple[Any, ...]) -> tuple[Any, ...]:
        table = self._tables[index]
        columns = {c.name: c for c in table.columns}
        return tuple(
            parse_value(columns[name], None if text is None else str(text))
            for name, text in zip(table.key, key, strict=True)
        )

    def _events(
        self, schemas: TableSchemas, change: Any, source: SourceInfo, now: int
    ) -> list[ChangeEvent]:
        if isinstance(change, Insert):
            if "c" in self._skipped:
                return []
            return [schemas.event("c", None, schemas.row(change.new), source, now)]
        if isinstance(change, Update):
            if "u" in self._skipped:
                return []
            new = change.new
            if change.old is not None and not change.old_is_key:  # REPLICA IDENTITY FULL
                new = _filled(new, change.old)
            after = schemas.row(new)
            before = None if change.old is None else schemas.row(change.old)
            if before is not None and schemas.key(before) != schemas.key(after):
                deleted = schemas.event("d", before, None, source, now)
                events = [deleted]
                if self._tombstones:
                    events.append(schemas.tombstone(deleted))
                return [*events, schemas.event("c", None, after, source, now)]
            return [
                schemas.event("u", before if not change.old_is_key else None, after, source, now)
            ]
        if "d" in self._skipped:
            return []
        deleted = schemas.event("d", schemas.row(change.old), None, source, now)
        return [deleted, schemas.tombstone(deleted)] if self._tombstones else [deleted]

    # -- commits ----------------------------------------------------------------------------

    def commit_record(self, record: SourceRecord, metadata: RecordMetadata | None) -> None:
        """Remember the position of the latest record Kafka committed. Records are
        acknowledged per topic partition, not in poll order: the one polled last counts."""
        number = self._numbers.pop(id(record), 0)
        if number > self._committed:
            self._committed = number
            self._committed_offset = record.source_offset

    def commit(self) -> None:
        """Advance the slot to the end of the last database transaction Kafka fully holds."""
        committed = parse_offset(self._committed_offset)
        target = None if committed is None else committed.slot_lsn()
        if self._connection is None:
            return
        if target is not None and target > self._slot_lsn:
            db.advance_slot(self._connection, self._slot, target)
            self._slot_lsn = target
        if self._nothing_in_flight() and self._snapshot_rows is None:
            self._advance_past_idle()

    def stop(self) -> None:
        """Close the connections (the slot stays, where Kafka's offsets put it)."""
        for connection in (self._snapshot_reader, self._connection):
            if connection is not None:
                try:
                    connection.close()
                except Exception as error:  # closing anyway
                    log.debug("closing a PostgreSQL connection failed: %s", error)
        self._snapshot_reader = self._connection = None
