"""PostgreSQL column types as Connect schemas, and their text-format values as Connect values.

Both the snapshot (columns read as `::text`) and the stream (pgoutput's text format) hand values
over as PostgreSQL's text output with `DateStyle=ISO` and `TimeZone=UTC`; `parse_value` turns
them into what the schema says, following Debezium's defaults (`decimal.handling.mode=precise`,
`time.precision.mode=adaptive`): `numeric(p,s)` a Connect Decimal, a `numeric` without a
scale Debezium's `io.debezium.data.VariableScaleDecimal` struct, `timestamp` microseconds
(`io.debezium.time.MicroTimestamp`; `timestamp(0)` to `(3)` milliseconds,
`io.debezium.time.Timestamp`), `time` likewise (`MicroTime`, or `Time` in int32 milliseconds),
`timestamptz` an ISO-8601 UTC string with as many
fraction digits as the column's precision (`io.debezium.time.ZonedTimestamp`), `date` days
(`io.debezium.time.Date`), `uuid` and `json` named strings. Any type not listed is its text
form.
"""

from __future__ import annotations

import datetime as dt
import decimal
import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from spark_eos_connect.api.data import Decimal, Schema, SchemaBuilder, Struct
from spark_eos_connect.connectors.postgres.types import PgType
from spark_eos_connect.errors import DataError

__all__ = ["ColumnInfo", "TableInfo", "column_schema", "parse_value", "text_parser"]

BOOL, BYTEA, NAME, INT8, INT2, INT4, TEXT, OID = 16, 17, 19, 20, 21, 23, 25, 26
JSON, FLOAT4, FLOAT8, BPCHAR, VARCHAR, DATE, TIME = 114, 700, 701, 1042, 1043, 1082, 1083
TIMESTAMP, TIMESTAMPTZ, NUMERIC, UUID, JSONB = 1114, 1184, 1700, 2950, 3802

VARIABLE_SCALE_DECIMAL: Final = "io.debezium.data.VariableScaleDecimal"
_EPOCH_DATE: Final = dt.date(1970, 1, 1)
_EPOCH: Final = dt.datetime(1970, 1, 1)


@dataclass(frozen=True, slots=True)
class ColumnInfo:
    """A captured column: its name, type and whether it may be null."""

    name: str
    type_oid: int
    type_modifier: int = -1
    optional: bool = True
    pg_type: PgType | None = None
    """The catalog's description of the type (enums, domains, arrays, extension types);
    None for a builtin type known by its oid alone."""


@dataclass(frozen=True, slots=True)
class TableInfo:
    """A captured table: its columns in order and its primary key columns."""

    schema: str
    name: str
    columns: tuple[ColumnInfo, ...]
    key: tuple[str, ...]

    @property
    def qualified(self) -> str:
        """`schema.table`, as topics and `table.include.list` name it."""
        return f"{self.schema}.{self.name}"


def _named(builder: SchemaBuilder, name: str, optional: bool) -> Schema:
    builder = builder.name(name).version(1)
    return (builder.optional() if optional else builder).build()


def _in_millis(column: ColumnInfo) -> bool:
    """Whether a `time(p)` or `timestamp(p)` column is in milliseconds (`p` up to 3), as
    `time.precision.mode=adaptive` has it; microseconds otherwise (no `p` means 6)."""
    return 0 <= column.type_modifier <= 3


def _variable_scale_schema(optional: bool) -> Schema:
    """Debezium's `VariableScaleDecimal`: a `numeric` without a scale as its scale and its
    unscaled value (big-endian two's complement, as Java's `BigInteger.toByteArray`)."""
    builder = (
        SchemaBuilder.struct()
        .name(VARIABLE_SCALE_DECIMAL)
        .version(1)
        .doc("Variable scaled decimal")
        .field("scale", Schema.INT32)
        .field("value", Schema.BYTES)
    )
    return (builder.optional() if optional else builder).build()


def column_schema(column: ColumnInfo) -> Schema:
    """The Connect schema of a column (optional when the column is nullable)."""
    oid, optional = column.type_oid, column.optional
    simple: dict[int, Callable[[], SchemaBuilder]] = {
        BOOL: SchemaBuilder.boolean,
        INT2: SchemaBuilder.int16,
        INT4: SchemaBuilder.int32,
        INT8: SchemaBuilder.int64,
        OID: SchemaBuilder.int64,
        FLOAT4: SchemaBuilder.float32,
        FLOAT8: SchemaBuilder.float64,
        BYTEA: SchemaBuilder.bytes,
    }
    if oid in simple:
        builder = simple[oid]()
        return (builder.optional() if optional else builder).build()
    if oid == NUMERIC and column.type_modifier >= 4:
        precision = ((column.type_modifier - 4) >> 16) & 0xFFFF
        builder = Decimal.builder((column.type_modifier - 4) & 0xFFFF).parameter(
            "connect.decimal.precision", str(precision)
        )
        return (builder.optional() if optional else builder).build()
    if oid == NUMERIC:
        return _variable_scale_schema(optional)
    if oid == DATE:
        return _named(SchemaBuilder.int32(), "io.debezium.time.Date", optional)
    if oid == TIME:
        if _in_millis(column):
            return _named(SchemaBuilder.int32(), "io.debezium.time.Time", optional)
        return _named(SchemaBuilder.int64(), "io.debezium.time.MicroTime", optional)
    if oid == TIMESTAMP:
        if _in_millis(column):
            return _named(SchemaBuilder.int64(), "io.debezium.time.Timestamp", optional)
        return _named(SchemaBuilder.int64(), "io.debezium.time.MicroTimestamp", optional)
    if oid == TIMESTAMPTZ:
        return _named(SchemaBuilder.string(), "io.debezium.time.ZonedTimestamp", optional)
    if oid == UUID:
        return _named(SchemaBuilder.string(), "io.debezium.data.Uuid", optional)
    if oid in (JSON, JSONB):
        return _named(SchemaBuilder.string(), "io.debezium.data.Json", optional)
    return Schema.OPTIONAL_STRING if optional else Schema.STRING


def _micros(delta: dt.timedelta) -> int:
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def _timestamp(text: str) -> int:
    return _micros(dt.datetime.fromisoformat(text) - _EPOCH)


def _zoned(text: str, digits: int = 6) -> str:
    """UTC, `digits` fraction digits (none for 0), as Debezium's ZonedTimestamp formats it."""
    moment = dt.datetime.fromisoformat(text).astimezone(dt.UTC).replace(tzinfo=None)
    whole = moment.replace(microsecond=0).isoformat()
    if digits <= 0:
        return f"{whole}Z"
    return f"{whole}.{f'{moment.microsecond:06d}'[:digits]}Z"


def _zoned_parser(column: ColumnInfo) -> Callable[[str], str]:
    """`_zoned` with the column's precision (`timestamptz(p)`; 6 when not given)."""
    digits = column.type_modifier if 0 <= column.type_modifier <= 6 else 6
    return functools.partial(_zoned, digits=digits)


def _time(text: str) -> int:
    if text.startswith("24:00:00"):
        return 86_400_000_000
    moment = dt.time.fromisoformat(text)
    return ((moment.hour * 60 + moment.minute) * 60 + moment.second) * 1_000_000 + (
        moment.microsecond
    )


def _variable_scale_parser(column: ColumnInfo) -> Callable[[str], Struct | None]:
    """A `numeric` without a scale as a `VariableScaleDecimal` struct; NaN and infinities
    (which have none) as null."""
    schema = column_schema(column)

    def parse(text: str) -> Struct | None:
        number = decimal.Decimal(text)
        if not number.is_finite():
            return None
        sign, digits, exponent = number.as_tuple()
        unscaled = int("".join(map(str, digits)) or "0") * (-1 if sign else 1)
        size = (unscaled + (unscaled < 0)).bit_length() // 8 + 1
        return Struct(
            schema,
            {"scale": -int(exponent), "value": unscaled.to_bytes(size, "big", signed=True)},
        )

    return parse


def _bytea(text: str) -> bytes:
    if not text.startswith("\\x"):
        raise DataError(f"bytea value not in hex format: {text[:20]!r}")
    return bytes.fromhex(text[2:])


_TRUE: Final = frozenset(("t", "true"))
"""A boolean's text: `t` from pgoutput, `true` from a snapshot's `::text`."""

_PARSERS: Final[dict[int, Callable[[str], Any]]] = {
    BOOL: lambda text: text in _TRUE,
    INT2: int,
    INT4: int,
    INT8: int,
    OID: int,
    FLOAT4: float,
    FLOAT8: float,
    BYTEA: _bytea,
    DATE: lambda text: (dt.date.fromisoformat(text) - _EPOCH_DATE).days,
    TIME: _time,
    TIMESTAMP: _timestamp,
}


def _parser(column: ColumnInfo) -> Callable[[str], Any] | None:
    if column.type_oid == NUMERIC:
        return decimal.Decimal if column.type_modifier >= 4 else _variable_scale_parser(column)
    if column.type_oid in (TIME, TIMESTAMP) and _in_millis(column):
        micros = _PARSERS[column.type_oid]
        return lambda text: micros(text) // 1000
    if column.type_oid == TIMESTAMPTZ:
        return _zoned_parser(column)
    return _PARSERS.get(column.type_oid)


def parse_value(column: ColumnInfo, text: str | None) -> Any:
    """A column's text-format value as the Connect value its schema describes."""
    if text is None:
        return None
    parser = _parser(column)
    if parser is None:
        return text
    try:
        return parser(text)
    except ValueError as error:
        raise DataError(
            f"column {column.name}: cannot read {text[:40]!r} as type {column.type_oid}: {error}"
        ) from error


def text_parser(column: ColumnInfo) -> Callable[[str], Any] | None:
    """`parse_value` of one column's non-null text with the type looked up once; None when
    the value is its text."""
    parser = _parser(column)
    if parser is None:
        return None
    found = parser

    def parse(text: str) -> Any:
        try:
            return found(text)
        except ValueError as error:
            raise DataError(
                f"column {column.name}: cannot read {text[:40]!r} as type {column.type_oid}: "
                f"{error}"
            ) from error

    return parse
