"""From Connect records to PostgreSQL rows: the columns a record schema gives (`RecordLayout`,
Confluent's "fields metadata"), their SQL types, and each record's row.

Pure Python. The key columns come first (`pk.mode`), then the value's fields (`fields.whitelist`);
a record that cannot be written (no schema, no key, a value that is not a struct, a field type
PostgreSQL has no column for) raises `RecordError` naming the record and the problem.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any, Final

from spark_eos_connect.api.data import Date, Decimal, Field, Schema, Struct, Time, Timestamp, Type
from spark_eos_connect.api.sink import SinkRecord
from spark_eos_connect.connectors.postgres.sink.config import (
    DEFAULT_KAFKA_PK_FIELDS,
    PkMode,
    PostgresSinkConfig,
)
from spark_eos_connect.errors import EosConnectError

__all__ = [
    "Column",
    "RecordError",
    "RecordLayout",
    "column_mismatch",
    "describe_record",
    "layout_for",
    "sql_type",
]


class RecordError(EosConnectError):
    """A record the sink cannot write; the message names it (`topic-partition@offset`)."""


def describe_record(record: SinkRecord) -> str:
    """`topic-partition@offset`, how errors name a record."""
    return f"{record.topic}-{record.kafka_partition}@{record.kafka_offset}"


def _bad(record: SinkRecord, problem: str) -> RecordError:
    return RecordError(f"PostgresSink cannot write record {describe_record(record)}: {problem}")


_PRIMITIVE_SQL: Final[dict[Type, str]] = {
    Type.INT8: "SMALLINT",
    Type.INT16: "SMALLINT",
    Type.INT32: "INTEGER",
    Type.INT64: "BIGINT",
    Type.FLOAT32: "REAL",
    Type.FLOAT64: "DOUBLE PRECISION",
    Type.BOOLEAN: "BOOLEAN",
    Type.STRING: "TEXT",
    Type.BYTES: "BYTEA",
}
_LOGICAL_SQL: Final[dict[str, str]] = {
    Decimal.LOGICAL_NAME: "NUMERIC",
    Date.LOGICAL_NAME: "DATE",
    Time.LOGICAL_NAME: "TIME",
    Timestamp.LOGICAL_NAME: "TIMESTAMP",
}


def sql_type(schema: Schema) -> str | None:
    """The column type for values of `schema` (Confluent's PostgreSQL mapping), None when there is
    none (MAP, STRUCT, arrays of those)."""
    if schema.name in _LOGICAL_SQL:
        return _LOGICAL_SQL[schema.name]
    if schema.type is Type.ARRAY:
        assert schema.value_schema is not None
        element = sql_type(schema.value_schema)
        return None if element is None or element.endswith("[]") else element + "[]"
    return _PRIMITIVE_SQL.get(schema.type)


# The kinds of column a Connect type may be written to (PostgreSQL's type names as
# `regtype::text` gives them); a column of a type not listed here is not checked.
_KINDS: Final[dict[str, str]] = {
    "smallint": "integer",
    "integer": "integer",
    "bigint": "integer",
    "numeric": "number",
    "real": "number",
    "double precision": "number",
    "boolean": "boolean",
    "bytea": "bytes",
    "text": "text",
    "character varying": "text",
    "character": "text",
    "date": "date",
    "time without time zone": "time",
    "time with time zone": "time",
    "timestamp without time zone": "timestamp",
    "timestamp with time zone": "timestamp",
}
_ACCEPTS: Final[dict[str, frozenset[str]]] = {
    "INTEGER": frozenset({"integer", "number"}),
    "NUMBER": frozenset({"number"}),
    "BOOLEAN": frozenset({"boolean"}),
    "BYTEA": frozenset({"bytes"}),
    "TEXT": frozenset({"text", "date", "time", "timestamp", "array"}),
    "DATE": frozenset({"date", "timestamp"}),
    "TIME": frozenset({"time"}),
    "TIMESTAMP": frozenset({"timestamp"}),
    "ARRAY": frozenset({"array"}),
}
_GROUP: Final[dict[str, str]] = {
    "SMALLINT": "INTEGER",
    "INTEGER": "INTEGER",
    "BIGINT": "INTEGER",
    "REAL": "NUMBER",
    "DOUBLE PRECISION": "NUMBER",
    "NUMERIC": "NUMBER",
}


def column_mismatch(wanted: str, column_type: str) -> bool:
    """Whether values of SQL type `wanted` (`sql_type`'s) cannot go into a column whose type
    PostgreSQL names `column_type`; unknown column types (json, uuid, user types) pass."""
    kind = "array" if column_type.endswith("[]") else _KINDS.get(column_type)
    if kind is None:
        return False
    group = "ARRAY" if wanted.endswith("[]") else _GROUP.get(wanted, wanted)
    return kind not in _ACCEPTS.get(group, frozenset({kind}))


@dataclass(frozen=True)
class Column:
    """One column a record writes: its name, the Connect schema of its values, its SQL type."""

    name: str
    schema: Schema
    type: str
    key: bool

    @property
    def nullable(self) -> bool:
        """Whether the column may hold null (optional schema, not a key)."""
        return self.schema.optional and not self.key


_KAFKA_SCHEMAS: Final = (Schema.STRING, Schema.INT32, Schema.INT64)


@dataclass(frozen=True)
class RecordLayout:
    """The columns records of one (key schema, value schema) pair write, keys first, and how to
    take each record's values."""

    columns: tuple[Column, ...]
    key_count: int
    key_getter: Callable[[SinkRecord], tuple[Any, ...]]
    value_fields: tuple[str, ...]
    """The value's fields written after the key columns, in column order."""
    value_getter: Callable[[Struct], tuple[Any, ...]] = lambda value: ()
    """Those fields' values of a value with the layout's schema."""

    @property
    def key_columns(self) -> tuple[Column, ...]:
        """The primary key's columns."""
        return self.columns[: self.key_count]

    @property
    def names(self) -> tuple[str, ...]:
        """Every column's name."""
        return tuple(c.name for c in self.columns)

    def row(self, record: SinkRecord) -> tuple[Any, ...]:
        """The record's values in column order."""
        return self.key_getter(record) + self.value_getter(record.value)

    def key(self, record: SinkRecord) -> tuple[Any, ...]:
        """The record's primary key values."""
        return self.key_getter(record)


def _column(record: SinkRecord, name: str, schema: Schema, key: bool, where: str) -> Column:
    wanted = sql_type(schema)
    if wanted is None:
        raise _bad(
            record,
            f"{where} {name!r} has schema {schema.type.name}, which has no PostgreSQL column "
            "type (flatten it first, e.g. with the Flatten transform)",
        )
    return Column(name, schema, wanted, key)


def _struct_fields(
    record: SinkRecord, schema: Schema, wanted: Sequence[str], where: str
) -> list[str]:
    names = [f.name for f in schema.fields]
    if not wanted:
        return names
    missing = [n for n in wanted if n not in names]
    if missing:
        raise _bad(
            record,
            f"{where} has no field {', '.join(map(repr, missing))} (fields: {', '.join(names)})",
        )
    return list(wanted)


def _key_part(config: PostgresSinkConfig, record: SinkRecord) -> tuple[list[Column], Any]:
    """The key columns and a getter of their values."""
    mode = config.pk_mode
    if mode is PkMode.NONE:
        return [], lambda r: ()
    if mode is PkMode.KAFKA:
        names = config.pk_fields or DEFAULT_KAFKA_PK_FIELDS
        columns = [
            _column(record, n, s, True, "Kafka coordinate")
            for n, s in zip(names, _KAFKA_SCHEMAS, strict=True)
        ]
        return columns, lambda r: (r.topic, r.kafka_partition, r.kafka_offset)
    if mode is PkMode.RECORD_KEY:
        schema = record.key_schema
        if schema is None:
            raise _bad(record, "pk.mode=record_key needs a key with a schema; the key has none")
        if schema.type is Type.STRUCT:
            fields = _struct_fields(record, schema, config.pk_fields, "the key")
            columns = [_column(record, n, _field(schema, n), True, "key field") for n in fields]
            return columns, lambda r: tuple(map(r.key.get, fields))
        if len(config.pk_fields) != 1:
            raise _bad(
                record,
                f"the key is a {schema.type.name}, so pk.fields must name exactly one column "
                f"for it (pk.fields={','.join(config.pk_fields)})",
            )
        column = _column(record, config.pk_fields[0], schema, True, "the key")
        return [column], lambda r: (r.key,)
    return [], lambda r: ()  # record_value: layout_for reads the key from the value


def _field(schema: Schema, name: str) -> Schema:
    found = schema.field(name)
    assert found is not None
    return found.schema


def layout_for(config: PostgresSinkConfig, record: SinkRecord) -> RecordLayout:
    """The columns of records with `record`'s schemas; `RecordError` if they cannot be written.

    A tombstone (null value) has only key columns: it can be written only as a delete.
    """
    key_columns, key_getter = _key_part(config, record)
    value_schema = record.value_schema
    if record.value is None:
        return RecordLayout(tuple(key_columns), len(key_columns), key_getter, ())
    if value_schema is None:
        raise _bad(
            record,
            "the value has no schema; PostgresSink needs Connect schemas (e.g. JsonConverter "
            "with value.converter.schemas.enable=true)",
        )
    if value_schema.type is not Type.STRUCT:
        raise _bad(
            record, f"the value is a {value_schema.type.name}; PostgresSink needs a struct value"
        )
    fields = _struct_fields(record, value_schema, config.fields, "the value (fields.whitelist)")
    if config.pk_mode is PkMode.RECORD_VALUE:
        key_fields = _struct_fields(record, value_schema, config.pk_fields, "the value (pk.fields)")
        key_columns = [
            _column(record, n, _field(value_schema, n), True, "value field") for n in key_fields
        ]
        key_getter = _value_key(tuple(key_fields))
    taken = {c.name for c in key_columns}
    # a key column's value comes from the key; field.exclude.list drops value columns only
    fields = [n for n in fields if n not in taken and not config.excludes(record.topic, n)]
    value_columns = [
        _column(record, n, _field(value_schema, n), False, "value field") for n in fields
    ]
    return RecordLayout(
        tuple(key_columns + value_columns),
        len(key_columns),
        key_getter,
        tuple(fields),
        _value_getter(value_schema, fields),
    )


def _value_getter(schema: Schema, names: Sequence[str]) -> Callable[[Struct], tuple[Any, ...]]:
    """The named fields' values of a struct of `schema`, in order, defaults applied: taken by
    position from one pass over the struct (no lookup by name per field and row) unless a field
    has a default."""
    found = [_field_of(schema, name) for name in names]
    if not found:
        return lambda value: ()
    if any(f.schema.default_value is not None for f in found):
        return lambda value: tuple(map(value.get, names))
    pick = itemgetter(*(f.index for f in found))
    if len(found) == 1:
        return lambda value: (pick([v for _, v in value]),)
    return lambda value: pick([v for _, v in value])


def _field_of(schema: Schema, name: str) -> Field:
    found = schema.field(name)
    assert found is not None
    return found


def _value_key(names: tuple[str, ...]) -> Callable[[SinkRecord], tuple[Any, ...]]:
    return lambda record: tuple(map(record.value.get, names))
