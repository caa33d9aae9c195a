"""The tables a PostgreSQL CDC task captures, numbered, with their schemas in each shape seen.

Offsets number the tables (a snapshot's `table`, a resumed part's `table`) and name them in
that order (`"tables"`): the tables of the committed offsets keep their numbers, tables captured
for the first time come after them, and a table the stream meets for the first time (created
while the task runs) is appended. A Relation message gives a table's shape when its next
changes were made; each shape's schemas are built once.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import Any

from spark_eos_connect.connectors.postgres.cdc import database as db
from spark_eos_connect.connectors.postgres.cdc.envelope import TableSchemas
from spark_eos_connect.connectors.postgres.cdc.filters import CaptureFilter
from spark_eos_connect.connectors.postgres.cdc.pgoutput import Relation
from spark_eos_connect.connectors.postgres.cdc.positions import Position
from spark_eos_connect.connectors.postgres.cdc.schemas import TableInfo, captured, parse_value
from spark_eos_connect.connectors.postgres.cdc.value_options import ValueSettings

__all__ = ["CapturedTables", "key_positions", "key_text"]

log = logging.getLogger(__name__)

Shape = tuple[tuple[str, int, int], ...]


def shape_of(table: TableInfo) -> Shape:
    """A table's columns as a Relation message lists them: name, type, modifier."""
    return tuple((c.name, c.type_oid, c.type_modifier) for c in table.columns)


def key_positions(table: TableInfo) -> tuple[int, ...]:
    """Where a row (all the table's columns, in order) holds each key column, in key order."""
    names = [c.name for c in table.columns]
    return tuple(names.index(name) for name in table.key)


def key_text(table: TableInfo, values: Sequence[Any]) -> tuple[Any, ...]:
    """The key columns' values of a row (all the table's columns, in order)."""
    return tuple(values[i] for i in key_positions(table))


class CapturedTables:
    """The captured tables in their numbering, and the schemas of each."""

    def __init__(
        self, prefix: str, capture: CaptureFilter, values: ValueSettings, connection: Any
    ) -> None:
        self._prefix, self._capture, self._values = prefix, capture, values
        self._connection = connection
        self.tables: list[TableInfo] = []
        self._index: dict[str, int] = {}
        self._schemas: dict[str, TableSchemas] = {}
        self._shapes: dict[tuple[Any, ...], TableSchemas | None] = {}
        self.names_json = "[]"
        """The tables' names in their numbering, as every offset holds them."""

    def number(
        self, current: list[TableInfo], known: list[str] | None, committed: Position | None
    ) -> list[str]:
        """Number `current`: tables the committed offsets named (`known`) keep their order,
        tables captured for the first time come after them; returns the latter's names (none
        when the offsets name no tables)."""
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
        self.tables, self._index, self._schemas = [], {}, {}
        for name in [*order, *(n for n in by_name if n not in order)]:
            self.register(by_name[name])
        return new

    def register(self, table: TableInfo) -> TableSchemas:
        """Capture `table` from now on, numbered after the others; its schemas."""
        self._index[table.qualified] = len(self.tables)
        self.tables.append(table)
        schemas = self._schemas[table.qualified] = self._table_schemas(table)
        self.names_json = json.dumps([t.qualified for t in self.tables])
        return schemas

    def index(self, qualified: str) -> int | None:
        """The number of table `schema.table`, None when it has none."""
        return self._index.get(qualified)

    def schemas(self, index: int) -> TableSchemas:
        """The schemas of table number `index` as it was numbered."""
        return self._schemas[self.tables[index].qualified]

    def _table_schemas(self, table: TableInfo) -> TableSchemas:
        excluded = frozenset(
            c.name
            for c in table.columns
            if not self._capture.captures_column(table.schema, table.name, c.name)
        )
        unmapped = [c.name for c in table.columns if not captured(c, self._values)]
        if unmapped:
            log.warning(
                "%s: columns %s are left out of the events: Debezium has no schema for their "
                "types (include.unknown.datatypes=false)",
                table.qualified,
                ", ".join(unmapped),
            )
        return TableSchemas(self._prefix, table, excluded, self._values)

    def of_relation(self, relation: Relation) -> TableSchemas | None:
        """The schemas of the table a Relation message describes, in the shape it had when
        its next changes were made; None for a table not captured."""
        shape = tuple((c.name, c.type_oid, c.type_modifier) for c in relation.columns)
        seen = (relation.namespace, relation.name, shape)
        if seen in self._shapes:
            return self._shapes[seen]
        found: TableSchemas | None = None
        qualified = f"{relation.namespace}.{relation.name}"
        if self._capture.captures_table(relation.namespace, relation.name):
            known = self._schemas.get(qualified)
            if known is not None and shape_of(known.table) == shape:
                found = known
            else:
                table = db.describe_relation(
                    self._connection, self._capture, relation.namespace, relation.name, shape
                )
                found = self.register(table) if known is None else self._table_schemas(table)
                log.info(
                    "%s %s: columns %s, key %s",
                    "new shape of" if known is not None else "capturing table",
                    qualified,
                    ", ".join(c.name for c in table.columns),
                    ", ".join(table.key) or "none (null keys)",
                )
        self._shapes[seen] = found
        return found

    def sortable(self, index: int, key: tuple[Any, ...]) -> tuple[Any, ...]:
        """Key values of table number `index` as Python orders them like PostgreSQL."""
        table = self.tables[index]
        columns = {c.name: c for c in table.columns}
        return tuple(
            parse_value(columns[name], None if text is None else str(text))
            for name, text in zip(table.key, key, strict=True)
        )

    def check_published(self, publication: str) -> None:
        """Fail unless `publication` publishes every captured table: a table it leaves out
        would give no change at all."""
        published = db.publication_tables(self._connection, publication)
        missing = [t.qualified for t in self.tables if t.qualified not in published]
        if missing:
            raise db.CdcSetupError(
                f"publication {publication!r} does not publish the captured tables "
                f"{', '.join(missing)}: their changes would never arrive; add them "
                f"(ALTER PUBLICATION {publication} ADD TABLE ...), use "
                "publication.autocreate.mode=filtered, or narrow the table filters"
            )
