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

A table captured for the first time at a start (its name is not among the committed offsets'
`"tables"`) gets a snapshot from a fresh database snapshot in the same way, unless
`snapshot.mode` is `no_data`/`never`; `always` takes a fresh snapshot of every table at each
start.

The snapshot side is `snapshot_reader`, the streaming side `change_stream`; this task decides
where to start, numbers the records it hands out and moves the slot. The slot is advanced
(`pg_replication_slot_advance`) only in `commit()`, after Kafka committed the transaction that
held the last record of a database transaction; a crash anywhere re-reads from the slot and the
offsets skip what Kafka already has. With `transaction.boundary=connector` the task ends a
Kafka transaction after each database transaction's last record (and after each snapshot
batch).
"""

from __future__ import annotations

import logging
import time
from typing import Any

from spark_eos_connect.api.source import RecordMetadata, SourceRecord, SourceTask
from spark_eos_connect.connectors.postgres.cdc import config as options
from spark_eos_connect.connectors.postgres.cdc import database as db
from spark_eos_connect.connectors.postgres.cdc.captured_tables import CapturedTables
from spark_eos_connect.connectors.postgres.cdc.change_stream import (
    ChangeStream,
    Made,
    Slot,
    StreamSettings,
)
from spark_eos_connect.connectors.postgres.cdc.envelope import SourceInfo
from spark_eos_connect.connectors.postgres.cdc.heartbeat import Heartbeats
from spark_eos_connect.connectors.postgres.cdc.positions import (
    SERVER_FIELD,
    Position,
    SnapshotPart,
    Visibility,
    parse_offset,
)
from spark_eos_connect.connectors.postgres.cdc.snapshot_reader import SnapshotReader
from spark_eos_connect.connectors.postgres.cdc.value_options import ValueSettings

__all__ = ["PostgresCdcSourceTask"]

log = logging.getLogger(__name__)

_STREAM_ONLY = (options.SNAPSHOT_NO_DATA, options.SNAPSHOT_NEVER)


class PostgresCdcSourceTask(SourceTask):
    """Emits a snapshot of the captured tables, then their changes, from one logical slot."""

    def __init__(self) -> None:
        self._connection: Any = None
        self._snapshot: SnapshotReader | None = None
        self._stream: ChangeStream | None = None
        self._streams = True
        self._point = 0
        """The slot's consistent point the snapshot's rows stand at."""
        self._parts: list[SnapshotPart] = []
        self._committed_offset: dict[str, Any] | None = None
        self._polled = 0
        """How many records were polled so far."""
        self._committed = 0
        """How many of the first polled records Kafka committed (commit_record)."""
        self._numbers: dict[int, int] = {}
        """Polled record (by identity) -> its number, until Kafka committed it."""

    def version(self) -> str:
        """The Debezium release whose events this task's follow."""
        from spark_eos_connect.connectors.postgres.cdc.envelope import CONNECTOR_VERSION

        return CONNECTOR_VERSION

    # -- start-up ---------------------------------------------------------------------------

    def start(self, props: dict[str, str]) -> None:
        """Check the database, create or check the publication and slot, plan the snapshot."""
        config = options.CONFIG_DEF.parse(props)
        self._settings = options.connection_settings(config)
        self._prefix: str = config[options.TOPIC_PREFIX]
        self._source_partition = {SERVER_FIELD: self._prefix}
        """Every record's source partition: one object, so the runtime keeps one offset per
        poll."""
        self._batch: int = config[options.MAX_BATCH_SIZE]
        self._fetch: int = config[options.SNAPSHOT_FETCH_SIZE]
        mode: str = config[options.SNAPSHOT_MODE]
        self._streams = mode != options.SNAPSHOT_INITIAL_ONLY
        via_root: bool = config[options.PUBLISH_VIA_PARTITION_ROOT]
        publication: str = config[options.PUBLICATION_NAME]
        slot_name: str = config[options.SLOT_NAME]
        self._connection = db.connect(self._settings)
        db.check_server(self._connection)
        committed = parse_offset(self.context.offset_storage_reader.offset(self._source_partition))
        self._tables = CapturedTables(
            self._prefix,
            options.capture_filter(config),
            ValueSettings.from_config(config),
            self._connection,
        )
        current = db.list_tables(self._connection, options.capture_filter(config), via_root)
        known = None if committed is None else committed.table_names()
        new = self._tables.number(current, known, committed)
        db.ensure_publication(
            self._connection,
            publication,
            config[options.PUBLICATION_AUTOCREATE_MODE],
            current,
            via_root,
        )
        self._tables.check_published(publication)
        state = db.slot_state(self._connection, slot_name)
        if committed is None or (state is None and mode == options.SNAPSHOT_WHEN_NEEDED):
            if committed is not None:
                log.warning(
                    "replication slot %s is gone although offsets were committed for it: "
                    "snapshot.mode=when_needed takes a new snapshot",
                    slot_name,
                )
            slot = self._start_over(slot_name, state, mode)
            committed = None
        else:
            slot = self._resume(slot_name, state, committed, mode, new)
        self._stream = ChangeStream(
            self._connection,
            slot,
            self._tables,
            self._stream_settings(config, publication),
            committed,
            self._parts,
        )

    def _stream_settings(self, config: dict[str, Any], publication: str) -> StreamSettings:
        topic = None
        if config[options.PROVIDE_TRANSACTION_METADATA]:
            topic = f"{self._prefix}.{config[options.TRANSACTION_TOPIC]}"
        heartbeats = Heartbeats(  # the first one an interval after the start
            config[options.HEARTBEAT_INTERVAL_MS],
            f"{config[options.HEARTBEAT_TOPIC_PREFIX]}.{self._prefix}",
            self._prefix,
            time.time_ns() // 1_000_000,
        )
        return StreamSettings(
            self._prefix,
            self._settings.dbname,
            publication,
            self._batch,
            options.skipped_operations(config),
            config[options.TOMBSTONES_ON_DELETE],
            topic,
            heartbeats,
            config[options.HEARTBEAT_ACTION_QUERY],
        )

    def _start_over(self, name: str, state: db.SlotState | None, mode: str) -> Slot:
        """No committed offsets: stream from an existing slot (`no_data`), or create the slot
        with the snapshot its consistent point stands for."""
        if state is not None and mode in _STREAM_ONLY:
            state = db.check_slot(state, name, self._settings.dbname)
            log.info("no committed offsets: streaming from slot %s where it stands", name)
            return Slot(self._connection, name, state.confirmed_flush_lsn or 0)
        if state is not None:
            db.check_slot(state, name, self._settings.dbname)
            log.info("no committed offsets: dropping slot %s to start over", name)
            db.drop_slot(self._connection, name)
        point, reader = db.create_slot_with_snapshot(self._settings, name)
        self._point = point
        if mode in _STREAM_ONLY:
            reader.close()
        else:
            self._snapshot = SnapshotReader(
                reader, self._tables, 0, None, self._fetch, self._source(), self._parts, False
            )
        return Slot(self._connection, name, point)

    def _resume(
        self,
        name: str,
        state: db.SlotState | None,
        committed: Position,
        mode: str,
        new: list[str],
    ) -> Slot:
        """Continue from committed offsets: the unfinished snapshot, or the stream after a
        snapshot of the tables captured for the first time (of all with `always`)."""
        state = db.check_slot(state, name, self._settings.dbname)
        slot = Slot(self._connection, name, state.confirmed_flush_lsn or 0)
        self._parts = list(committed.resumed)
        self._point = committed.lsn
        if committed.in_snapshot:
            self._resume_snapshot(committed.table, committed.key)
            return slot
        target = committed.slot_lsn()
        if target is not None:
            slot.advance(target)
        if mode in _STREAM_ONLY:
            if new:
                log.warning(
                    "tables captured for the first time are streamed without a snapshot "
                    "(snapshot.mode=%s): %s",
                    mode,
                    ", ".join(new),
                )
        elif mode == options.SNAPSHOT_ALWAYS:
            self._resume_snapshot(0, None)
        elif new:
            log.info("tables captured for the first time get a snapshot: %s", ", ".join(new))
            first = self._tables.index(new[0])
            self._resume_snapshot(0 if first is None else first, None)
        return slot

    def _resume_snapshot(self, table: int, after: tuple[Any, ...] | None) -> None:
        """Read table number `table` on (after key `after` in it) from a fresh database
        snapshot; the slot's changes that snapshot saw of the rows it reads are skipped."""
        visibility, until, reader = db.open_snapshot(self._settings)
        self._parts.append(SnapshotPart(table, after, Visibility.parse(visibility), until))
        log.info(
            "resuming the snapshot at table %d after key %s with snapshot %s",
            table,
            after,
            visibility,
        )
        self._snapshot = SnapshotReader(
            reader, self._tables, table, after, self._fetch, self._source(), self._parts, True
        )

    def _source(self) -> SourceInfo:
        """The `source` block the snapshot's rows share."""
        return SourceInfo(self._prefix, self._settings.dbname, 0, None, self._point)

    # -- polling ----------------------------------------------------------------------------

    def poll(self) -> list[SourceRecord] | None:
        """Up to `max.batch.size` snapshot rows while the snapshot lasts, then the slot's
        changes (a large database transaction continues over several polls)."""
        assert self._stream is not None
        if self._snapshot is not None:
            records = self._records(self._snapshot.poll(self._batch))
            if self._snapshot.done:
                self._snapshot = None
                self._stream.emitted = Position(
                    self._point, "last", resumed=list(self._parts), tables=self._tables.names_json
                )
            self._ask_commit(records[-1:])
            return records
        if not self._streams:  # snapshot.mode=initial_only
            return []
        made = self._stream.poll(self._nothing_in_flight())
        records = self._records(made)
        for record, (_, position) in zip(records, made, strict=True):
            if position.complete:  # a database transaction's last record, or a heartbeat
                self._ask_commit([record])
        return records

    def _records(self, made: list[Made]) -> list[SourceRecord]:
        records = [
            SourceRecord(
                self._source_partition,
                position.offset(),
                event.topic,
                event.value,
                key=event.key,
                timestamp=event.timestamp_ms,
                key_schema=event.key_schema,
                value_schema=event.value_schema,
            )
            for event, position in made
        ]
        for record in records:
            self._polled += 1
            self._numbers[id(record)] = self._polled
        return records

    def _ask_commit(self, records: list[SourceRecord]) -> None:
        transactions = self.context.transaction_context
        if transactions is not None and records:
            transactions.commit_transaction(records[-1])

    def _nothing_in_flight(self) -> bool:
        """Whether Kafka committed every record polled so far."""
        return self._committed == self._polled

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
        if self._connection is None or self._stream is None:
            return
        committed = parse_offset(self._committed_offset)
        target = None if committed is None else committed.slot_lsn()
        if target is not None:
            self._stream.slot.advance(target)
        if self._nothing_in_flight() and self._snapshot is None:
            self._stream.advance_past_idle()

    def stop(self) -> None:
        """Close the connections (the slot stays, where Kafka's offsets put it)."""
        if self._snapshot is not None:
            self._snapshot.close()
            self._snapshot = None
        connection, self._connection = self._connection, None
        if connection is not None:
            try:
                connection.close()
            except Exception as error:  # closing anyway
                log.debug("closing a PostgreSQL connection failed: %s", error)
