"""Which tables and columns PostgresCdcSource captures, and which columns key a table's events,
from Debezium's options: `schema.include.list`/`schema.exclude.list`,
`table.include.list`/`table.exclude.list` (regular expressions matching `schema.table` in
full), `column.include.list`/`column.exclude.list` (matching `schema.table.column`) and
`message.key.columns` (`<table regex>:<column>,<column>;...`). An include list and the
exclude list of the same kind are exclusive, as in Debezium. Pure; no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from spark_eos_connect.errors import ConfigError

__all__ = ["CaptureFilter", "parse_key_columns"]


def _compile(option: str, patterns: Sequence[str]) -> tuple[re.Pattern[str], ...]:
    compiled = []
    for pattern in patterns:
        try:
            compiled.append(re.compile(pattern.strip()))
        except re.error as error:
            raise ConfigError(
                f"{option}: {pattern!r} is not a regular expression ({error})"
            ) from error
    return tuple(compiled)


def _exclusive(
    include: str, exclude: str, included: Sequence[str], excluded: Sequence[str]
) -> None:
    if included and excluded:
        raise ConfigError(f"{include} and {exclude} cannot both be set; use one of them")


def _matches(patterns: Sequence[re.Pattern[str]], name: str) -> bool:
    return any(p.fullmatch(name) for p in patterns)


def parse_key_columns(text: str) -> tuple[tuple[re.Pattern[str], tuple[str, ...]], ...]:
    """`message.key.columns`: `<table regex>:<column>,<column>;<table regex>:...` as pairs of a
    compiled table pattern and the key's column names."""
    pairs = []
    for entry in (part.strip() for part in text.split(";")):
        if not entry:
            continue
        table, colon, columns = entry.rpartition(":")
        names = tuple(name.strip() for name in columns.split(",") if name.strip())
        if not colon or not table.strip() or not names:
            raise ConfigError(
                f"message.key.columns: {entry!r} is not '<schema.table regex>:<column>,...'"
            )
        (pattern,) = _compile("message.key.columns", [table])
        pairs.append((pattern, names))
    return tuple(pairs)


@dataclass(frozen=True)
class CaptureFilter:
    """The tables and columns to capture, and the message key overrides."""

    schema_include: tuple[re.Pattern[str], ...] = ()
    schema_exclude: tuple[re.Pattern[str], ...] = ()
    table_include: tuple[re.Pattern[str], ...] = ()
    table_exclude: tuple[re.Pattern[str], ...] = ()
    column_include: tuple[re.Pattern[str], ...] = ()
    column_exclude: tuple[re.Pattern[str], ...] = ()
    key_columns: tuple[tuple[re.Pattern[str], tuple[str, ...]], ...] = field(default=())

    @classmethod
    def from_lists(
        cls,
        *,
        schema_include: Sequence[str] = (),
        schema_exclude: Sequence[str] = (),
        table_include: Sequence[str] = (),
        table_exclude: Sequence[str] = (),
        column_include: Sequence[str] = (),
        column_exclude: Sequence[str] = (),
        key_columns: str = "",
    ) -> CaptureFilter:
        """From the options' values; raises `ConfigError` naming a bad or clashing option."""
        _exclusive("schema.include.list", "schema.exclude.list", schema_include, schema_exclude)
        _exclusive("table.include.list", "table.exclude.list", table_include, table_exclude)
        _exclusive("column.include.list", "column.exclude.list", column_include, column_exclude)
        return cls(
            _compile("schema.include.list", schema_include),
            _compile("schema.exclude.list", schema_exclude),
            _compile("table.include.list", table_include),
            _compile("table.exclude.list", table_exclude),
            _compile("column.include.list", column_include),
            _compile("column.exclude.list", column_exclude),
            parse_key_columns(key_columns),
        )

    def captures_table(self, schema: str, table: str) -> bool:
        """Whether table `schema.table` is captured."""
        if self.schema_include and not _matches(self.schema_include, schema):
            return False
        if _matches(self.schema_exclude, schema):
            return False
        qualified = f"{schema}.{table}"
        if self.table_include and not _matches(self.table_include, qualified):
            return False
        return not _matches(self.table_exclude, qualified)

    def captures_column(self, schema: str, table: str, column: str) -> bool:
        """Whether column `schema.table.column` is in the table's events."""
        qualified = f"{schema}.{table}.{column}"
        if self.column_include and not _matches(self.column_include, qualified):
            return False
        return not _matches(self.column_exclude, qualified)

    def key_override(self, schema: str, table: str) -> tuple[str, ...] | None:
        """The columns `message.key.columns` names for `schema.table`, None when none does."""
        qualified = f"{schema}.{table}"
        for pattern, columns in self.key_columns:
            if pattern.fullmatch(qualified):
                return columns
        return None

    @property
    def narrowed(self) -> bool:
        """Whether any table filter is set (an empty filter captures every table)."""
        return bool(
            self.schema_include or self.schema_exclude or self.table_include or self.table_exclude
        )
