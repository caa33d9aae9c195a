"""Debezium's change event envelope for PostgreSQL tables, with Connect schemas.

A change of table `schema.table` goes to topic `<topic.prefix>.<schema>.<table>`; its key is a
struct of the primary key columns (`<topic>.Key`), its value the envelope `<topic>.Envelope`
(version 2): `before` and `after` (`<topic>.Value` structs, null where there is no row), `source`
(`io.debezium.connector.postgresql.Source`, version 1: connector, server name, database, schema,
table, transaction id, LSN, commit time, whether it is a snapshot), `transaction` (null: transaction
metadata is not emitted), `op` (`r` snapshot read, `c` create, `u` update, `d` delete) and the
time the event was made (`ts_ms`, `ts_us`, `ts_ns`). A delete may be followed by a tombstone
(the key with a null value) so that compaction can drop the row. Pure; no I/O.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from spark_eos_connect.api.data import Schema, SchemaBuilder, Struct
from spark_eos_connect.connectors.postgres.cdc.pgoutput import UNCHANGED_TOAST
from spark_eos_connect.connectors.postgres.cdc.schemas import (
    TableInfo,
    captured,
    column_schema,
    parse_value,
    text_parser,
)
from spark_eos_connect.connectors.postgres.cdc.unavailable import missing_value, unavailable_value
from spark_eos_connect.connectors.postgres.cdc.value_options import DEFAULT_SETTINGS, ValueSettings
from spark_eos_connect.errors import DataError

__all__ = [
    "CONNECTOR_VERSION",
    "SOURCE_SCHEMA",
    "UNAVAILABLE",
    "ChangeEvent",
    "SourceInfo",
    "TableSchemas",
    "snapshot_marker",
    "topic_name",
]

CONNECTOR_VERSION: Final = "3.6.1.Final"
"""The Debezium release whose envelope these events follow (`source.version`)."""

UNAVAILABLE: Final = "__debezium_unavailable_value"
"""What Debezium puts in a text column whose TOASTed value an update did not send."""

_SNAPSHOT_VALUES: Final = (
    "true,first,first_in_data_collection,last_in_data_collection,last,false,incremental"
)

SOURCE_SCHEMA: Final = (
    SchemaBuilder.struct()
    .name("io.debezium.connector.postgresql.Source")
    .field("version", Schema.STRING)
    .field("connector", Schema.STRING)
    .field("name", Schema.STRING)
    .field("ts_ms", Schema.INT64)
    .field(
        "snapshot",
        SchemaBuilder.string()
        .optional()
        .name("io.debezium.data.Enum")
        .version(1)
        .parameter("allowed", _SNAPSHOT_VALUES)
        .default_value("false"),
    )
    .field("db", Schema.STRING)
    .field("sequence", Schema.OPTIONAL_STRING)
    .field("ts_us", Schema.OPTIONAL_INT64)
    .field("ts_ns", Schema.OPTIONAL_INT64)
    .field("schema", Schema.STRING)
    .field("table", Schema.STRING)
    .field("txId", Schema.OPTIONAL_INT64)
    .field("lsn", Schema.OPTIONAL_INT64)
    .field("xmin", Schema.OPTIONAL_INT64)
    .field("origin", Schema.OPTIONAL_STRING)
    .field("origin_lsn", Schema.OPTIONAL_INT64)
    .version(1)
    .build()
)

TRANSACTION_SCHEMA: Final = (
    SchemaBuilder.struct()
    .optional()
    .name("event.block")
    .version(1)
    .field("id", Schema.STRING)
    .field("total_order", Schema.INT64)
    .field("data_collection_order", Schema.INT64)
    .build()
)


def snapshot_marker(
    first_table: bool, last_table: bool, first_in_table: bool, last_in_table: bool
) -> str:
    """`source.snapshot` of a snapshot record, as Debezium marks it: `first` on the snapshot's
    first record, `last` on its last, `first_in_data_collection` and `last_in_data_collection`
    on a table's first and last rows in between, `true` on the others."""
    if last_table and last_in_table:
        return "last"
    if first_table and first_in_table:
        return "first"
    if last_in_table:
        return "last_in_data_collection"
    if first_in_table:
        return "first_in_data_collection"
    return "true"


def topic_name(prefix: str, table: TableInfo) -> str:
    """`<prefix>.<schema>.<table>`, Debezium's topic of a table."""
    return f"{prefix}.{table.schema}.{table.name}"


@dataclass(frozen=True, slots=True)
class SourceInfo:
    """Where a change comes from: the `source` block of its event."""

    server: str
    database: str
    commit_ts_us: int
    xid: int | None
    lsn: int | None
    snapshot: str = "false"
    sequence: str | None = None


@dataclass(frozen=True, slots=True)
class ChangeEvent:
    """One change ready to be a record: topic, key, value and their schemas."""

    topic: str
    key: Struct | None
    key_schema: Schema | None
    value: Struct | None
    value_schema: Schema | None
    timestamp_ms: int


class TableSchemas:
    """The key, row and envelope schemas of one table under a topic prefix. A table without
    key columns has null keys; `excluded` columns are left out of its rows."""

    def __init__(
        self,
        prefix: str,
        table: TableInfo,
        excluded: frozenset[str] = frozenset(),
        settings: ValueSettings = DEFAULT_SETTINGS,
    ) -> None:
        self.table = table
        self._settings = settings
        self.topic = topic_name(prefix, table)
        columns = {column.name: column for column in table.columns}
        missing = [name for name in table.key if name not in columns]
        if missing:
            raise DataError(f"table {table.qualified}: key columns {missing} are not captured")
        self._key_columns = [
            (columns[name], i)
            for i, name in enumerate(c.name for c in table.columns)
            if name in table.key
        ]
        self._key_columns.sort(key=lambda pair: table.key.index(pair[0].name))
        self.key_schema: Schema | None = None
        if self._key_columns:
            key = SchemaBuilder.struct().name(f"{self.topic}.Key")
            for column, _ in self._key_columns:
                key = key.field(column.name, column_schema(column, settings))
            self.key_schema = key.build()
        kept = [
            (i, c)
            for i, c in enumerate(table.columns)
            if c.name not in excluded and captured(c, settings)
        ]
        row = SchemaBuilder.struct().optional().name(f"{self.topic}.Value")
        for _, column in kept:
            row = row.field(column.name, column_schema(column, settings))
        self.row_schema = row.build()
        self._width = len(table.columns)
        self._fills = [
            (
                at,
                text_parser(column, settings),
                missing_value(field.schema),
                unavailable_value(column, field.schema, settings),
            )
            for (at, column), field in zip(kept, self.row_schema.fields, strict=True)
        ]
        """Per kept column: its position in a row, text parser (None: the text), value for a
        null, value for an unchanged TOASTed value."""
        key_fields = [self.row_schema.field(column.name) for column, _ in self._key_columns]
        self._key_fields = [
            (field.index, field.schema.default_value) for field in key_fields if field is not None
        ]
        """Per key column: its position in a row struct, and its default."""
        self._key_gap = [
            c.name for (c, _), f in zip(self._key_columns, key_fields, strict=True) if f is None
        ]
        """Key columns left out of the rows (excluded, or of a type without schema)."""
        self.envelope_schema = (
            SchemaBuilder.struct()
            .name(f"{self.topic}.Envelope")
            .version(2)
            .field("before", self.row_schema)
            .field("after", self.row_schema)
            .field("source", SOURCE_SCHEMA)
            .field("transaction", TRANSACTION_SCHEMA)
            .field("op", Schema.STRING)
            .field("ts_ms", Schema.OPTIONAL_INT64)
            .field("ts_us", Schema.OPTIONAL_INT64)
            .field("ts_ns", Schema.OPTIONAL_INT64)
            .build()
        )

    def key_values(self, row: Sequence[str | None]) -> tuple[Any, ...]:
        """The primary key of a row of text values (all columns, in table order)."""
        return tuple(parse_value(column, row[i], self._settings) for column, i in self._key_columns)

    def row(self, values: Sequence[Any]) -> Struct:
        """A `Value` struct of a row of text values (all the table's columns, in order; a
        value may be pre-parsed): a null of a required column takes its placeholder,
        pgoutput's `UNCHANGED_TOAST` Debezium's `__debezium_unavailable_value`."""
        if len(values) != self._width:
            raise DataError(
                f"table {self.table.qualified}: a row of {len(values)} values for "
                f"{self._width} columns ({', '.join(c.name for c in self.table.columns)})"
            )
        filled: list[Any] = []
        append = filled.append
        for at, parse, missing, unchanged in self._fills:
            value = values[at]
            if value.__class__ is str:
                if parse is not None:
                    try:
                        value = parse(value)
                    except DataError as error:
                        raise DataError(f"table {self.table.qualified}: {error}") from error
            elif value is None:
                value = missing
            elif value is UNCHANGED_TOAST:
                value = unchanged
            append(value)
        try:
            return Struct.of_values(self.row_schema, filled)
        except DataError as error:
            raise DataError(f"table {self.table.qualified}: {error}") from error

    def key(self, row: Struct) -> Struct | None:
        """The `Key` struct of a row; None for a table without key columns."""
        if self.key_schema is None:
            return None
        if self._key_gap:
            raise DataError(
                f"table {self.table.qualified}: key columns {self._key_gap} are left out of "
                "its rows (excluded, or of a type Debezium has no schema for)"
            )
        values = row.values()
        return Struct.of_values(
            self.key_schema,
            [default if values[at] is None else values[at] for at, default in self._key_fields],
        )

    def event(
        self,
        op: str,
        before: Struct | None,
        after: Struct | None,
        source: SourceInfo,
        now_us: int,
    ) -> ChangeEvent:
        """The change event of `op` (`r`, `c`, `u`, `d`)."""
        row = after if after is not None else before
        if row is None:
            raise DataError(f"a {op!r} event of {self.table.qualified} needs a row")
        now_ms = now_us // 1000
        envelope = Struct.of_values(
            self.envelope_schema,
            [before, after, self._source(source), None, op, now_ms, now_us, now_us * 1000],
        )
        return ChangeEvent(
            self.topic, self.key(row), self.key_schema, envelope, self.envelope_schema, now_ms
        )

    def tombstone(self, deleted: ChangeEvent) -> ChangeEvent:
        """The tombstone that follows a delete: same key, null value (and no value schema)."""
        return ChangeEvent(
            deleted.topic, deleted.key, self.key_schema, None, None, deleted.timestamp_ms
        )

    def _source(self, info: SourceInfo) -> Struct:
        return _source_struct(
            info.server,
            info.database,
            info.commit_ts_us,
            info.xid,
            info.lsn,
            info.snapshot,
            info.sequence,
            self.table.schema,
            self.table.name,
        )


@functools.lru_cache(maxsize=4096)
def _source_struct(
    server: str,
    database: str,
    commit_ts_us: int,
    xid: int | None,
    lsn: int | None,
    snapshot: str,
    sequence: str | None,
    schema: str,
    table: str,
) -> Struct:
    """The `source` block (shared by the events of a transaction: treat it as read-only)."""
    return Struct(
        SOURCE_SCHEMA,
        {
            "version": CONNECTOR_VERSION,
            "connector": "postgresql",
            "name": server,
            "ts_ms": commit_ts_us // 1000,
            "snapshot": snapshot,
            "db": database,
            "sequence": sequence,
            "ts_us": commit_ts_us,
            "ts_ns": commit_ts_us * 1000,
            "schema": schema,
            "table": table,
            "txId": xid,
            "lsn": lsn,
            "xmin": None,
            "origin": None,
            "origin_lsn": None,
        },
    )
