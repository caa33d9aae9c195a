"""One sink task's writes: each `write` is ONE PostgreSQL transaction holding the rows of the
records it was given and the next offset of every partition they came from.

In the transaction the partitions' rows of the offsets table are locked first (`lock_offsets`);
records below the stored next offset are already in the table and are dropped, so a retried,
speculative or zombie attempt writes nothing twice. Rows reach a table by COPY: straight into it
for `insert.mode=insert`; for upsert and update into a session temp table (the "stage", emptied
at every commit) and from there by one INSERT ... ON CONFLICT or UPDATE ... FROM statement.
Tombstones delete (`delete.enabled`). Anything failing rolls the whole transaction back.
"""

from __future__ import annotations

import itertools
import logging
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import psycopg

from spark_eos_connect.api.data import Schema
from spark_eos_connect.api.sink import SinkRecord, TopicPartition
from spark_eos_connect.connectors.postgres.sink.config import (
    InsertMode,
    PkMode,
    PostgresSinkConfig,
    redacted_url,
    table_name_for,
)
from spark_eos_connect.connectors.postgres.sink.offsets import (
    advance_offsets,
    create_offsets_table_sql,
    delete_offsets,
    lock_offsets,
    read_offsets,
    write_offsets,
)
from spark_eos_connect.connectors.postgres.sink.schema import (
    Column,
    RecordError,
    RecordLayout,
    column_mismatch,
    describe_record,
    layout_for,
)
from spark_eos_connect.connectors.postgres.sink.sql import (
    TableName,
    add_column_sql,
    copy_sql,
    create_stage_sql,
    create_table_sql,
    delete_sql,
    quote,
    update_from_sql,
    upsert_from_sql,
)
from spark_eos_connect.errors import EosConnectError

__all__ = ["PostgresWriter", "WriteRun", "plan_runs"]

log = logging.getLogger(__name__)

_COPY_LINE: Final = re.compile(r"COPY [^,]+, line (\d+)")
_COLUMNS_SQL: Final = (
    "SELECT a.attname, a.atttypid::regtype::text FROM pg_attribute a "
    "WHERE a.attrelid = to_regclass(%s) AND a.attnum > 0 AND NOT a.attisdropped"
)


@dataclass
class WriteRun:
    """Consecutive records of one table with one layout, all rows or all deletes."""

    table: TableName
    layout: RecordLayout
    delete: bool
    records: list[SinkRecord]


def plan_runs(
    config: PostgresSinkConfig, records: Sequence[SinkRecord], layouts: dict[Any, RecordLayout]
) -> list[WriteRun]:
    """The records as runs, in order per table; `RecordError` for the first record that cannot
    be written. `layouts` caches the layout of each (key schema, value schema, tombstone,
    topic: `field.exclude.list` may name a topic's field)."""
    runs: dict[str, list[WriteRun]] = {}
    names: dict[str, TableName] = {}
    last: tuple[Schema | None, Schema | None, bool, str] | None = None
    layout: RecordLayout | None = None
    for record in records:
        tombstone = record.value is None
        if tombstone and not config.delete_enabled:
            raise RecordError(
                f"PostgresSink cannot write record {describe_record(record)}: its value is null "
                "(a tombstone) and delete.enabled=false"
            )
        schemas = (record.key_schema, record.value_schema, tombstone, record.topic)
        if (
            last is None
            or schemas[0] is not last[0]
            or schemas[1] is not last[1]
            or tombstone != last[2]
            or record.topic != last[3]
        ):
            layout = layouts.get(schemas)
            if layout is None:
                layout = layouts[schemas] = layout_for(config, record)
            last = schemas
        assert layout is not None
        if config.pk_mode is PkMode.RECORD_KEY and record.key is None:
            raise RecordError(
                f"PostgresSink cannot write record {describe_record(record)}: its key is null "
                "and pk.mode=record_key"
            )
        name = table_name_for(config.table_format, record.topic)
        if name not in names:
            names[name] = TableName.parse(name)
        table_runs = runs.setdefault(name, [])
        if table_runs and table_runs[-1].layout is layout and table_runs[-1].delete == tombstone:
            table_runs[-1].records.append(record)
        else:
            table_runs.append(WriteRun(names[name], layout, tombstone, [record]))
    return [run for table_runs in runs.values() for run in table_runs]


def _chunks(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


class PostgresWriter:
    """A task's connection, the tables it has checked, and its transactions."""

    def __init__(self, config: PostgresSinkConfig) -> None:
        self._config = config
        self._offsets_table = TableName.parse(config.offsets_table)
        self._connection: psycopg.Connection[Any] | None = None
        self._layouts: dict[Any, RecordLayout] = {}
        self._checked: set[tuple[TableName, tuple[Column, ...]]] = set()
        self._stages: dict[tuple[TableName, tuple[str, ...]], str] = {}
        self._stage_numbers = itertools.count()
        self._staged: set[str] = set()
        """The stages filled in the current transaction."""

    # --- connection -----------------------------------------------------------------------------

    def _connect(self) -> psycopg.Connection[Any]:
        connection = self._connection
        if connection is not None and not connection.closed:
            return connection
        try:
            connection = psycopg.connect(**self._config.connect_kwargs(), autocommit=True)
        except psycopg.Error as error:
            raise EosConnectError(
                f"PostgresSink {self._config.name} cannot connect to "
                f"{redacted_url(self._config.url)}: {error}"
            ) from error
        self._forget()
        self._connection = connection
        with connection.transaction():
            connection.execute(
                "SELECT pg_advisory_xact_lock(hashtext(%s))", (str(self._offsets_table),)
            )
            connection.execute(create_offsets_table_sql(self._offsets_table))
        return connection

    def _forget(self) -> None:
        """After a rollback: what the transaction may have created is gone."""
        self._checked.clear()
        self._stages.clear()

    def close(self) -> None:
        """Close the connection."""
        connection, self._connection = self._connection, None
        if connection is not None:
            connection.close()

    # --- offsets --------------------------------------------------------------------------------

    def stored_offsets(self) -> dict[TopicPartition, int]:
        """The next offset of every partition the table has for the connector."""
        connection = self._connect()
        with connection.cursor() as cursor:
            return read_offsets(cursor, self._offsets_table, self._config.name)

    def advance(self, offsets: Mapping[TopicPartition, int]) -> dict[TopicPartition, int]:
        """Raise the stored offsets to `offsets` (records between were consumed without a row:
        filtered, or failed under errors.tolerance=all); the stored offsets after that."""
        if not offsets:
            return {}
        connection = self._connect()
        with connection.transaction(), connection.cursor() as cursor:
            return advance_offsets(cursor, self._offsets_table, self._config.name, offsets)

    def set_offsets(self, offsets: Mapping[TopicPartition, int | None]) -> None:
        """Replace stored offsets (None: forget the partition), as an offsets alteration asks."""
        connection = self._connect()
        name, table = self._config.name, self._offsets_table
        with connection.transaction(), connection.cursor() as cursor:
            delete_offsets(cursor, table, name, offsets)
            kept = {tp: o for tp, o in offsets.items() if o is not None}
            if kept:
                advance_offsets(cursor, table, name, kept)

    # --- writes ---------------------------------------------------------------------------------

    def write(self, records: Sequence[SinkRecord]) -> dict[TopicPartition, int]:
        """Write the records not yet in PostgreSQL, and their partitions' next offsets, in one
        transaction; the stored next offsets after it. Raises (nothing written) if any fails."""
        if not records:
            return {}
        connection = self._connect()
        try:
            with connection.transaction(), connection.cursor() as cursor:
                return self._write(cursor, records)
        except BaseException:
            self._forget()
            if connection.broken:
                self.close()
            raise

    def _write(self, cursor: Any, records: Sequence[SinkRecord]) -> dict[TopicPartition, int]:
        name, table = self._config.name, self._offsets_table
        self._staged.clear()
        stored = lock_offsets(cursor, table, name, {r.topic_partition for r in records})
        new = dict(stored)
        fresh: list[SinkRecord] = []
        for record in records:
            tp = record.topic_partition
            if record.kafka_offset >= stored[tp]:
                fresh.append(record)
                new[tp] = max(new[tp], record.kafka_offset + 1)
        if len(fresh) < len(records):
            log.info(
                "PostgresSink %s: %d of %d records are already written; dropped",
                name,
                len(records) - len(fresh),
                len(records),
            )
        for run in plan_runs(self._config, fresh, self._layouts):
            if not self._ensure_table(cursor, run):
                continue  # deletes from a table that does not exist
            if run.delete:
                self._delete(cursor, run)
            else:
                self._rows(cursor, run)
        if new != stored:
            write_offsets(cursor, table, name, {tp: o for tp, o in new.items() if o != stored[tp]})
        return new

    def _columns_of(self, cursor: Any, table: TableName) -> dict[str, str] | None:
        cursor.execute("SELECT to_regclass(%s) IS NOT NULL", (table.sql,))
        if not cursor.fetchone()[0]:
            return None
        cursor.execute(_COLUMNS_SQL, (table.sql,))
        return dict(cursor.fetchall())

    def _ensure_table(self, cursor: Any, run: WriteRun) -> bool:
        """Check (creating or evolving under an advisory lock) that the run's table has its
        columns, of types its values fit; False for deletes from a table that does not exist."""
        layout, table, first = run.layout, run.table, run.records[0]
        if (table, layout.columns) in self._checked:
            return True
        columns = self._columns_of(cursor, table)
        if columns is None and run.delete:
            return False
        if columns is None or any(c.name not in columns for c in layout.columns):
            cursor.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (str(table),))
            columns = self._columns_of(cursor, table)
            if columns is None:
                columns = self._create(cursor, run)
            missing = [c for c in layout.columns if c.name not in columns]
            if missing:
                columns = self._evolve(cursor, run, missing)
        for column in layout.columns:
            if column_mismatch(column.type, columns[column.name]):
                raise RecordError(
                    f"PostgresSink cannot write record {describe_record(first)}: field "
                    f"{column.name!r} is {column.schema.type.name} ({column.type}) but column "
                    f"{quote(column.name)} of table {table} is {columns[column.name]}"
                )
        self._checked.add((table, layout.columns))
        return True

    def _create(self, cursor: Any, run: WriteRun) -> dict[str, str]:
        table, layout = run.table, run.layout
        if not self._config.auto_create:
            raise RecordError(
                f"PostgresSink cannot write record {describe_record(run.records[0])}: table "
                f"{table} does not exist and auto.create=false"
            )
        columns = [(c.name, c.type, c.nullable) for c in layout.columns]
        cursor.execute(create_table_sql(table, columns, [c.name for c in layout.key_columns]))
        log.info("PostgresSink %s created table %s", self._config.name, table)
        return self._columns_of(cursor, table) or {}

    def _evolve(self, cursor: Any, run: WriteRun, missing: list[Column]) -> dict[str, str]:
        table, first = run.table, run.records[0]
        names = ", ".join(c.name for c in missing)
        if not self._config.auto_evolve:
            raise RecordError(
                f"PostgresSink cannot write record {describe_record(first)}: table {table} has "
                f"no column {names} and auto.evolve=false"
            )
        for column in missing:
            if column.key:
                raise RecordError(
                    f"PostgresSink cannot write record {describe_record(first)}: table {table} "
                    f"lacks key column {column.name!r}; auto.evolve adds only value columns"
                )
            cursor.execute(add_column_sql(table, column.name, column.type))
        log.info("PostgresSink %s added column(s) %s to table %s", self._config.name, names, table)
        return self._columns_of(cursor, table) or {}

    def _copy(self, cursor: Any, target: str, run: WriteRun, records: Sequence[SinkRecord]) -> None:
        """COPY the records' rows into `target` (an SQL name), `batch.size` rows per COPY; an
        error names the record of the failing line."""
        layout = run.layout
        sql = copy_sql(target, layout.names)
        for chunk in _chunks(records, self._config.batch_size):
            try:
                with cursor.copy(sql) as copy:
                    for record in chunk:
                        copy.write_row(layout.row(record))
            except psycopg.Error as error:
                raise self._failed(run.table, chunk, error) from error

    def _failed(
        self, table: TableName, records: Sequence[SinkRecord], error: psycopg.Error
    ) -> EosConnectError:
        context = getattr(error.diag, "context", None) or ""
        found = _COPY_LINE.search(context)
        if found and 0 < int(found.group(1)) <= len(records):
            record = records[int(found.group(1)) - 1]
            return RecordError(
                f"PostgresSink cannot write record {describe_record(record)} to table {table}: "
                f"{type(error).__name__}: {str(error).strip()}"
            )
        first, last = describe_record(records[0]), describe_record(records[-1])
        return EosConnectError(
            f"PostgresSink could not write {len(records)} record(s) ({first} .. {last}) to table "
            f"{table}: {type(error).__name__}: {str(error).strip()}"
        )

    def _rows(self, cursor: Any, run: WriteRun) -> None:
        mode, layout, table = self._config.insert_mode, run.layout, run.table
        if mode is InsertMode.INSERT:
            self._copy(cursor, table.sql, run, run.records)
            return
        latest = {layout.key(record): record for record in run.records}
        for key, record in latest.items():
            if any(value is None for value in key):
                raise RecordError(
                    f"PostgresSink cannot write record {describe_record(record)}: a primary key "
                    f"field is null ({', '.join(c.name for c in layout.key_columns)})"
                )
        stage = self._stage(cursor, table, layout.names)
        records = list(latest.values())
        self._copy(cursor, quote(stage), run, records)
        keys = [c.name for c in layout.key_columns]
        try:
            if mode is InsertMode.UPSERT:
                cursor.execute(upsert_from_sql(table, stage, layout.names, keys))
            else:
                statement = update_from_sql(table, stage, layout.names, keys)
                if statement is not None:
                    cursor.execute(statement)
        except psycopg.Error as error:
            raise self._failed(table, records, error) from error

    def _stage(self, cursor: Any, table: TableName, names: tuple[str, ...]) -> str:
        """The empty session temp table for these columns (its rows go at each commit; a second
        run of the same transaction deletes the first's)."""
        stage = self._stages.get((table, names))
        if stage is None:
            stage = f"eosconnect_stage_{next(self._stage_numbers)}"
            cursor.execute(create_stage_sql(stage, table, names))
            self._stages[(table, names)] = stage
        elif stage in self._staged:
            cursor.execute(f"DELETE FROM {quote(stage)}")
        self._staged.add(stage)
        return stage

    def _delete(self, cursor: Any, run: WriteRun) -> None:
        keys = [c.name for c in run.layout.key_columns]
        try:
            cursor.executemany(
                delete_sql(run.table, keys), [run.layout.key(r) for r in run.records]
            )
        except psycopg.Error as error:
            raise self._failed(run.table, run.records, error) from error
