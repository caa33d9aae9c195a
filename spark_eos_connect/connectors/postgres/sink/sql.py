"""The SQL `PostgresSink` runs, as text (pure; values always travel as parameters or COPY data).

Every identifier is quoted (`quote`), so column and table names keep their case and may hold any
character. `TableName.parse` reads `table` or `schema.table`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from spark_eos_connect.errors import ConfigError

__all__ = [
    "TableName",
    "add_column_sql",
    "copy_sql",
    "create_stage_sql",
    "create_table_sql",
    "delete_sql",
    "quote",
    "update_from_sql",
    "upsert_from_sql",
]


def quote(name: str) -> str:
    """`name` as a quoted SQL identifier."""
    if not name or "\x00" in name:
        raise ConfigError(f"{name!r} cannot be a PostgreSQL identifier")
    return '"' + name.replace('"', '""') + '"'


def _names(columns: Sequence[str]) -> str:
    return ", ".join(map(quote, columns))


@dataclass(frozen=True)
class TableName:
    """A table, in a schema or on the search path."""

    table: str
    schema: str | None = None

    @classmethod
    def parse(cls, name: str) -> TableName:
        """`table` or `schema.table`; more dots are a `ConfigError` (a topic with dots needs a
        `table.name.format` or a RegexRouter transform that names one table)."""
        parts = name.split(".")
        if len(parts) > 2 or not all(parts):
            raise ConfigError(
                f"Table name {name!r} must be 'table' or 'schema.table'; for topics with dots "
                "set table.name.format or rename the topic with a RegexRouter transform"
            )
        return cls(parts[-1], parts[0] if len(parts) == 2 else None)

    @property
    def sql(self) -> str:
        """The quoted, possibly schema-qualified name."""
        return (
            quote(self.table)
            if self.schema is None
            else f"{quote(self.schema)}.{quote(self.table)}"
        )

    def __str__(self) -> str:
        return self.table if self.schema is None else f"{self.schema}.{self.table}"


def create_table_sql(
    table: TableName, columns: Sequence[tuple[str, str, bool]], keys: Sequence[str]
) -> str:
    """CREATE TABLE with `(name, type, nullable)` columns and the primary key `keys` (if any)."""
    parts = [f"{quote(n)} {t}" + ("" if nullable else " NOT NULL") for n, t, nullable in columns]
    if keys:
        parts.append(f"PRIMARY KEY ({_names(keys)})")
    return f"CREATE TABLE {table.sql} ({', '.join(parts)})"


def add_column_sql(table: TableName, name: str, sql_type: str) -> str:
    """ALTER TABLE adding a nullable column."""
    return f"ALTER TABLE {table.sql} ADD COLUMN {quote(name)} {sql_type}"


def copy_sql(table: str, columns: Sequence[str]) -> str:
    """COPY `columns` of `table` (an SQL name) from the client."""
    return f"COPY {table} ({_names(columns)}) FROM STDIN"


def create_stage_sql(stage: str, table: TableName, columns: Sequence[str]) -> str:
    """A session temp table with `columns` of `table`'s types and no constraints, emptied at
    every commit."""
    return (
        f"CREATE TEMP TABLE {quote(stage)} ON COMMIT DELETE ROWS AS "
        f"SELECT {_names(columns)} FROM {table.sql} WITH NO DATA"
    )


def upsert_from_sql(
    table: TableName, stage: str, columns: Sequence[str], keys: Sequence[str]
) -> str:
    """INSERT the stage's rows, updating the non-key columns of rows whose key exists."""
    others = [c for c in columns if c not in keys]
    action = (
        "DO UPDATE SET " + ", ".join(f"{quote(c)} = EXCLUDED.{quote(c)}" for c in others)
        if others
        else "DO NOTHING"
    )
    return (
        f"INSERT INTO {table.sql} ({_names(columns)}) SELECT {_names(columns)} FROM {quote(stage)} "
        f"ON CONFLICT ({_names(keys)}) {action}"
    )


def update_from_sql(
    table: TableName, stage: str, columns: Sequence[str], keys: Sequence[str]
) -> str | None:
    """UPDATE the rows whose key is in the stage (None when every column is a key)."""
    others = [c for c in columns if c not in keys]
    if not others:
        return None
    sets = ", ".join(f"{quote(c)} = s.{quote(c)}" for c in others)
    match = " AND ".join(f"t.{quote(k)} = s.{quote(k)}" for k in keys)
    return f"UPDATE {table.sql} AS t SET {sets} FROM {quote(stage)} AS s WHERE {match}"


def delete_sql(table: TableName, keys: Sequence[str]) -> str:
    """DELETE the row with one key (parameters: the key values in `keys` order)."""
    match = " AND ".join(f"{quote(k)} = %s" for k in keys)
    return f"DELETE FROM {table.sql} WHERE {match}"
