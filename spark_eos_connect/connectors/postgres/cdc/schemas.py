"""PostgreSQL column types as Connect schemas, and their text-format values as Connect values.

Both the snapshot and the stream (pgoutput) hand values over as PostgreSQL's output-function
text under `database.SESSION_OPTIONS` (`DateStyle=ISO`, `TimeZone=UTC`,
`IntervalStyle=iso_8601`, `bytea_output=hex`, `lc_monetary=C`). Each type maps as Debezium
3.6.1's PostgreSQL connector maps it (`value_options` holds the options that change that):

- `bool` boolean; `int2/int4/int8` int16/32/64; `oid` int64; `float4/float8` float32/64 (NaN
  and infinities kept);
- `numeric(p,s)` a Connect Decimal (precision as `connect.decimal.precision`), `numeric`
  without a scale `io.debezium.data.VariableScaleDecimal`; NaN and infinities are refused in
  `precise` mode, as Debezium refuses them; `money` a Decimal of `money.fraction.digits`;
- `date` `io.debezium.time.Date` days, `time(p)` `Time` (p up to 3) or `MicroTime`,
  `timestamp(p)` `Timestamp` or `MicroTimestamp`, with BC dates, years past 9999 and
  Debezium's numbers for `infinity`; `timestamptz` an ISO-8601 UTC string
  (`ZonedTimestamp`, `infinity` kept as text); `timetz` `ZonedTime`; `interval`
  `MicroDuration` (Debezium's 365.25/12-day months) or an ISO-8601 `Interval` string;
- `bytea` bytes (or base64/hex strings); `bit(1)` boolean, `bit(n)`/`varbit` `Bits` (the
  bit string's number, little-endian, minimal length); `point` the `Point` struct;
- `uuid`, `json(b)`, `xml`, `tsvector`, `ltree` named strings; `hstore` a `Json` string (keys in
  Java HashMap order, Jackson's escaping) or a map; an enum `io.debezium.data.Enum`; a domain
  its base type's mapping with the domain's modifier; text, network, range, `citext`, `isbn`
  types their text;
- one-dimensional arrays of the types Debezium maps, as arrays of the element's schema; their
  elements as Debezium reads them through pgjdbc's `PgArray`: `date`/`timestamp`/`timestamptz`
  elements as `java.sql` values of Java's hybrid Julian/Gregorian calendar (eras dropped,
  Julian dates before 1582-10-15, pgjdbc's infinity dates), a `numeric[]` with a NaN or
  infinite element and an `ltree[]` with a null element null (Debezium fails to convert them,
  a null under its default `event.converting.failure.handling.mode=warn`).

Types Debezium leaves out of its records (geometric types but `point`, `tsquery`, `pg_lsn`,
multiranges, composites, arrays of `money`/`interval`/`xml`/`point`/`varbit`/`name` or of
domains, ...) raise `UncapturedType` (see `captured`); values no Connect value can carry raise
`DataError` naming the column and the value.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import math
import re
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from spark_eos_connect.api.data import (
    Date,
    Decimal,
    Schema,
    SchemaBuilder,
    Struct,
    Time,
    Timestamp,
)
from spark_eos_connect.connectors.postgres.cdc.types import PgType
from spark_eos_connect.connectors.postgres.cdc.value_options import DEFAULT_SETTINGS, ValueSettings
from spark_eos_connect.errors import DataError

__all__ = [
    "ColumnInfo",
    "TableInfo",
    "UncapturedType",
    "captured",
    "column_schema",
    "parse_value",
    "text_parser",
]

BOOL, BYTEA, NAME, INT8, INT2, INT4, TEXT, OID = 16, 17, 19, 20, 21, 23, 25, 26
JSON, FLOAT4, FLOAT8, BPCHAR, VARCHAR, DATE, TIME = 114, 700, 701, 1042, 1043, 1082, 1083
TIMESTAMP, TIMESTAMPTZ, NUMERIC, UUID, JSONB = 1114, 1184, 1700, 2950, 3802

VARIABLE_SCALE_DECIMAL: Final = "io.debezium.data.VariableScaleDecimal"

Parser = Callable[[str], Any]


@dataclass(frozen=True, slots=True)
class _OfSchema:
    """A parser that builds structs of the schema it is finally given (optional or not, as
    Debezium builds them with the field's own schema)."""

    make: Callable[[Schema], Parser]


def _finish(builder: SchemaBuilder, parser: Any, optional: bool) -> tuple[Schema, Parser | None]:
    schema = (builder.optional() if optional else builder).build()
    return schema, parser.make(schema) if isinstance(parser, _OfSchema) else parser


class UncapturedType(DataError):
    """A column of a type Debezium leaves out of its records (it has no schema for it)."""


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


# --- type resolution -----------------------------------------------------------------------------

_BUILTIN_NAMES: Final = {
    16: "bool", 17: "bytea", 18: "char", 19: "name", 20: "int8", 21: "int2", 23: "int4",
    25: "text", 26: "oid", 114: "json", 142: "xml", 600: "point", 601: "lseg", 602: "path",
    603: "box", 604: "polygon", 628: "line", 650: "cidr", 700: "float4", 701: "float8",
    718: "circle", 774: "macaddr8", 790: "money", 829: "macaddr", 869: "inet", 1042: "bpchar",
    1043: "varchar", 1082: "date", 1083: "time", 1114: "timestamp", 1184: "timestamptz",
    1186: "interval", 1266: "timetz", 1560: "bit", 1562: "varbit", 1700: "numeric",
    2950: "uuid", 3220: "pg_lsn", 3614: "tsvector", 3615: "tsquery", 3802: "jsonb",
    3904: "int4range", 3906: "numrange", 3908: "tsrange", 3910: "tstzrange",
    3912: "daterange", 3926: "int8range",
}  # fmt: skip
"""Builtin type oids (fixed across databases) by `pg_type.typname`."""

_BUILTIN_ARRAYS: Final = {
    1000: 16, 1001: 17, 1002: 18, 1003: 19, 1016: 20, 1005: 21, 1007: 23, 1009: 25, 1028: 26,
    199: 114, 143: 142, 1017: 600, 651: 650, 1021: 700, 1022: 701, 775: 774, 791: 790,
    1040: 829, 1041: 869, 1014: 1042, 1015: 1043, 1182: 1082, 1183: 1083, 1115: 1114,
    1185: 1184, 1187: 1186, 1270: 1266, 1561: 1560, 1563: 1562, 1231: 1700, 2951: 2950,
    3643: 3614, 3807: 3802, 3905: 3904, 3907: 3906, 3909: 3908, 3911: 3910, 3913: 3912,
    3927: 3926,
}  # fmt: skip
"""Builtin array type oids by their element's oid."""


@dataclass(frozen=True, slots=True)
class _Type:
    """A column's type as the mapping sees it: a domain resolved to its base."""

    name: str
    modifier: int = -1
    kind: str = "b"
    labels: tuple[str, ...] = ()
    element: _Type | None = None


def _from_catalog(pg_type: PgType, modifier: int) -> _Type:
    if pg_type.kind == "d":
        if pg_type.base is None:
            return _Type(pg_type.name, modifier, "d")
        own = pg_type.base_modifier
        return _from_catalog(pg_type.base, own if own != -1 else modifier)
    element = None
    if pg_type.category == "A" and pg_type.element is not None:
        found = pg_type.element
        element = _Type(found.name, modifier, found.kind, found.labels)
    return _Type(pg_type.name, modifier, pg_type.kind, pg_type.labels, element)


def _builtin(oid: int, modifier: int) -> _Type:
    element_oid = _BUILTIN_ARRAYS.get(oid)
    if element_oid is not None:
        element = _Type(_BUILTIN_NAMES[element_oid], modifier)
        return _Type("_" + element.name, modifier, element=element)
    return _Type(
        _BUILTIN_NAMES.get(oid, f"oid {oid}"), modifier, "b" if oid in _BUILTIN_NAMES else "?"
    )


def _resolve(column: ColumnInfo) -> _Type:
    if column.pg_type is not None:
        return _from_catalog(column.pg_type, column.type_modifier)
    return _builtin(column.type_oid, column.type_modifier)


# --- schemas -------------------------------------------------------------------------------------


def _named(builder: SchemaBuilder, name: str) -> SchemaBuilder:
    return builder.name(name).version(1)


def _variable_scale_builder() -> SchemaBuilder:
    """Debezium's `VariableScaleDecimal`: a `numeric` without a scale as its scale and its
    unscaled value (big-endian two's complement, as Java's `BigInteger.toByteArray`)."""
    return (
        _named(SchemaBuilder.struct(), VARIABLE_SCALE_DECIMAL)
        .doc("Variable scaled decimal")
        .field("scale", Schema.INT32)
        .field("value", Schema.BYTES)
    )


def _point_builder() -> SchemaBuilder:
    return (
        _named(SchemaBuilder.struct(), "io.debezium.data.geometry.Point")
        .doc("Geometry (POINT)")
        .field("x", Schema.FLOAT64)
        .field("y", Schema.FLOAT64)
        .field("wkb", Schema.OPTIONAL_BYTES)
        .field("srid", Schema.OPTIONAL_INT32)
    )


# --- numbers -------------------------------------------------------------------------------------

_SPECIAL_NAMES: Final = {
    "NaN": "NAN",
    "Infinity": "POSITIVE_INFINITY",
    "-Infinity": "NEGATIVE_INFINITY",
}
"""How Debezium's string mode spells numeric special values."""
_WIDE: Final = decimal.Context(prec=decimal.MAX_PREC)


def _numeric_modifier(modifier: int) -> tuple[int, int] | None:
    """`(precision, scale)` of a `numeric(p,s)` modifier; None without one."""
    if modifier < 4:
        return None
    packed = modifier - 4
    scale = packed & 0x7FF
    if scale & 0x400:
        raise ValueError(f"numeric with a negative scale ({scale - 0x800}) is not supported")
    return (packed >> 16) & 0xFFFF, scale


def _finite(text: str) -> decimal.Decimal:
    number = decimal.Decimal(text)
    if not number.is_finite():
        raise ValueError(
            "a special value (NaN/Infinity) has no Decimal form in decimal.handling.mode=precise "
            "(Debezium fails on it too); set decimal.handling.mode=string or double"
        )
    return number


def _scaled(scale: int) -> Parser:
    quantum = decimal.Decimal(1).scaleb(-scale)

    def parse(text: str) -> decimal.Decimal:
        number = _finite(text)
        exponent = number.as_tuple().exponent
        if exponent == -scale:
            return number
        return number.quantize(quantum, context=_WIDE)

    return parse


def _unscaled_bytes(unscaled: int) -> bytes:
    size = (unscaled + (unscaled < 0)).bit_length() // 8 + 1
    return unscaled.to_bytes(size, "big", signed=True)


def _variable_scale(schema: Schema) -> Parser:
    """A `numeric` without a scale as a `VariableScaleDecimal` struct, trailing fraction zeros
    stripped (Java's `stripTrailingZeros`, never below scale 0)."""

    def parse(text: str) -> Struct:
        sign, digits, exponent = _finite(text).as_tuple()
        assert isinstance(exponent, int)
        kept = list(digits)
        while exponent < 0 and len(kept) > 1 and kept[-1] == 0:
            kept.pop()
            exponent += 1
        unscaled = int("".join(map(str, kept)) or "0")
        if unscaled == 0:
            exponent = 0
        if exponent > 0:
            unscaled *= 10**exponent
            exponent = 0
        value = -unscaled if sign else unscaled
        return Struct(schema, {"scale": -exponent, "value": _unscaled_bytes(value)})

    return parse


def _as_double(text: str) -> float:
    return float(decimal.Decimal(text))


def _as_string(text: str) -> str:
    return _SPECIAL_NAMES.get(text, text)


def _numeric(t: _Type, settings: ValueSettings) -> tuple[SchemaBuilder, Any]:
    mode = settings.decimal_mode
    if mode == "double":
        return SchemaBuilder.float64(), _as_double
    if mode == "string":
        return SchemaBuilder.string(), _as_string
    shape = _numeric_modifier(t.modifier)
    if shape is None:
        return _variable_scale_builder(), _OfSchema(_variable_scale)
    precision, scale = shape
    builder = Decimal.builder(scale).parameter("connect.decimal.precision", str(precision))
    return builder, _scaled(scale)


def _money_amount(text: str) -> decimal.Decimal:
    """A `money` text (`$1,234.50`, `-$1,234.50`, `($1,234.50)`) as a number, read as
    Debezium reads it: sign, then without its currency symbol and group separators."""
    negative = text[:1] in ("-", "(")
    body = text.strip("-()")
    if body and not body[0].isdigit() and body[0] != ".":
        body = body[1:]
    number = decimal.Decimal(body.replace(",", ""))
    if not number.is_finite():
        raise ValueError("not a money amount")
    return -number if negative else number


def _money(t: _Type, settings: ValueSettings) -> tuple[SchemaBuilder, Parser | None]:
    mode = settings.decimal_mode
    if mode == "double":
        return SchemaBuilder.float64(), lambda text: float(_money_amount(text))
    if mode == "string":
        return SchemaBuilder.string(), lambda text: format(_money_amount(text), "f")
    digits = settings.money_fraction_digits
    quantum = decimal.Decimal(1).scaleb(-digits)

    def parse(text: str) -> decimal.Decimal:
        return _money_amount(text).quantize(quantum, decimal.ROUND_HALF_UP, _WIDE)

    return Decimal.builder(digits), parse


_TRUE: Final = frozenset(("t", "true"))
"""A boolean's text: `t` from the output function, `true` from a `::text` cast."""


def _simple(builder: Callable[[], SchemaBuilder], parser: Parser | None) -> Any:
    return lambda t, settings: (builder(), parser)


# --- binary and bits -----------------------------------------------------------------------------


def _bytea(text: str) -> bytes:
    if not text.startswith("\\x"):
        raise ValueError("bytea value not in hex format (bytea_output=hex)")
    return bytes.fromhex(text[2:])


_BINARY_MODES: Final[dict[str, Parser]] = {
    "bytes": _bytea,
    "base64": lambda text: base64.b64encode(_bytea(text)).decode(),
    "base64-url-safe": lambda text: base64.urlsafe_b64encode(_bytea(text)).decode(),
    "hex": lambda text: _bytea(text).hex(),
}


def _binary(t: _Type, settings: ValueSettings) -> tuple[SchemaBuilder, Parser | None]:
    mode = settings.binary_mode
    builder = SchemaBuilder.bytes() if mode == "bytes" else SchemaBuilder.string()
    return builder, _BINARY_MODES[mode]


def _bit_flag(text: str) -> bool:
    return int(text, 2) != 0


def _bit_bytes(text: str) -> bytes:
    """The bit string's number as little-endian bytes of minimal length (Java's
    `BitSet.toByteArray` with the last bit as bit 0; no bytes for zero)."""
    number = int(text, 2) if text else 0
    return number.to_bytes((number.bit_length() + 7) // 8, "little")


def _bits(t: _Type, settings: ValueSettings) -> tuple[SchemaBuilder, Parser | None]:
    length = t.modifier
    if t.name == "varbit" and length < 0:
        length = 2**31 - 1
    if length <= 1:
        return SchemaBuilder.boolean(), _bit_flag
    builder = _named(SchemaBuilder.bytes(), "io.debezium.data.Bits")
    return builder.parameter("length", str(length)), _bit_bytes


# --- dates and times -----------------------------------------------------------------------------

_MICROS_PER_DAY: Final = 86_400_000_000
_EPOCH_ORDINAL: Final = dt.date(1970, 1, 1).toordinal()
_EPOCH: Final = dt.datetime(1970, 1, 1)
_EPOCH_UTC: Final = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_INFINITE_DAYS: Final = {"infinity": -2147472692, "-infinity": -2147472691}
"""Debezium's `date` numbers for PostgreSQL's infinities: the epoch days of -5877611-06-21 and
-5877611-06-22, the LocalDates its pgoutput reader substitutes for them."""
_INFINITE_MICROS: Final = {"infinity": 9223372036825200000, "-infinity": -9223372036832400000}
"""Debezium's `timestamp` instants for PostgreSQL's infinities (pgjdbc's infinity constants,
taken as epoch microseconds)."""

_DATE: Final = re.compile(r"(\d+)-(\d\d)-(\d\d)( BC)?")
_TIMESTAMP: Final = re.compile(
    r"(\d+)-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d{1,6}))?"
    r"(?:([+-])(\d\d)(?::(\d\d))?(?::(\d\d))?)?( BC)?"
)
_TIME: Final = re.compile(r"(\d+):(\d\d):(\d\d)(?:\.(\d{1,6}))?")
_TIMETZ: Final = re.compile(r"(\d\d):(\d\d):(\d\d)(?:\.(\d{1,6}))?([+-])(\d\d)(?::(\d\d))?")


def _epoch_day(year: int, month: int, day: int) -> int:
    """Days from 1970-01-01 to a proleptic Gregorian date (astronomical year numbering)."""
    year -= month <= 2
    era = year // 400
    year_of_era = year - era * 400
    day_of_year = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    day_of_era = year_of_era * 365 + year_of_era // 4 - year_of_era // 100 + day_of_year
    return era * 146097 + day_of_era - 719468


def _civil(days: int) -> tuple[int, int, int]:
    """The proleptic Gregorian (year, month, day) `days` after 1970-01-01."""
    days += 719468
    era = days // 146097
    day_of_era = days - era * 146097
    year_of_era = (
        day_of_era - day_of_era // 1460 + day_of_era // 36524 - day_of_era // 146096
    ) // 365
    day_of_year = day_of_era - (365 * year_of_era + year_of_era // 4 - year_of_era // 100)
    shifted = (5 * day_of_year + 2) // 153
    day = day_of_year - (153 * shifted + 2) // 5 + 1
    month = shifted + 3 if shifted < 10 else shifted - 9
    return year_of_era + era * 400 + (month <= 2), month, day


def _year(year: int, era: str | None) -> int:
    return 1 - year if era else year


def _fraction(digits: str | None) -> int:
    return int(digits.ljust(6, "0")) if digits else 0


def _days(text: str) -> int:
    """A `date` as days since the epoch; BC dates and the infinities as Debezium has them."""
    if len(text) == 10:
        return dt.date.fromisoformat(text).toordinal() - _EPOCH_ORDINAL
    if text in _INFINITE_DAYS:
        return _INFINITE_DAYS[text]
    found = _DATE.fullmatch(text)
    if found is None:
        raise ValueError("not an ISO date")
    year, month, day, era = found.groups()
    return _epoch_day(_year(int(year), era), int(month), int(day))


def _instant(text: str) -> int:
    """A `timestamp` or `timestamptz` as epoch microseconds (UTC), any year."""
    if text[4:5] == "-" and not text.endswith("BC"):
        moment = dt.datetime.fromisoformat(text)
        since = moment - (_EPOCH if moment.tzinfo is None else _EPOCH_UTC)
        return (since.days * 86_400 + since.seconds) * 1_000_000 + since.microseconds
    found = _TIMESTAMP.fullmatch(text)
    if found is None:
        raise ValueError("not an ISO timestamp")
    year, month, day, hour, minute, second, fraction, sign, oh, om, os, era = found.groups()
    days = _epoch_day(_year(int(year), era), int(month), int(day))
    seconds = days * 86_400 + (int(hour) * 60 + int(minute)) * 60 + int(second)
    if sign:
        offset = (int(oh) * 60 + int(om or 0)) * 60 + int(os or 0)
        seconds -= offset if sign == "+" else -offset
    return seconds * 1_000_000 + _fraction(fraction)


def _timestamp_micros(text: str) -> int:
    infinite = _INFINITE_MICROS.get(text)
    return _instant(text) if infinite is None else infinite


def _timestamp_millis(text: str) -> int:
    return _timestamp_micros(text) // 1000


def _connect_timestamp(text: str) -> dt.datetime:
    return _EPOCH_UTC + dt.timedelta(milliseconds=_timestamp_millis(text))


def _connect_date(text: str) -> dt.date:
    return dt.date.fromordinal(_days(text) + _EPOCH_ORDINAL)


def _iso_date(days: int) -> str:
    year, month, day = _civil(days)
    shown = f"{year:04d}" if 0 <= year <= 9999 else f"+{year}" if year > 0 else f"-{-year:04d}"
    return f"{shown}-{month:02d}-{day:02d}"


def _clock(micros: int, digits: int) -> str:
    """`HH:MM:SS` and a fraction: `digits` digits when 1 to 9, else the micros' significant
    digits (none for zero), as Java's ISO formatters print them."""
    seconds, fraction = divmod(micros, 1_000_000)
    minutes, second = divmod(seconds, 60)
    hour, minute = divmod(minutes, 60)
    clock = f"{hour:02d}:{minute:02d}:{second:02d}"
    if 0 < digits <= 6:
        return f"{clock}.{f'{fraction:06d}'[:digits]}"
    if fraction:
        return f"{clock}.{f'{fraction:06d}'.rstrip('0')}"
    return clock


def _zoned(digits: int) -> Parser:
    """`timestamptz` as Debezium's ZonedTimestamp: ISO-8601 in UTC (`Z`), `digits` fraction
    digits; the infinities as their text."""

    def parse(text: str) -> str:
        if text in _INFINITE_MICROS:
            return text
        days, micros = divmod(_instant(text), _MICROS_PER_DAY)
        return f"{_iso_date(days)}T{_clock(micros, digits)}Z"

    return parse


def _time_micros(text: str) -> int:
    """A `time` as microseconds since midnight (`24:00:00` is a whole day)."""
    found = _TIME.fullmatch(text)
    if found is None:
        raise ValueError("not an ISO time")
    hour, minute, second, fraction = found.groups()
    return ((int(hour) * 60 + int(minute)) * 60 + int(second)) * 1_000_000 + _fraction(fraction)


def _time_millis(text: str) -> int:
    return _time_micros(text) // 1000


def _connect_time(text: str) -> dt.time:
    millis = _time_millis(text)
    if millis >= 86_400_000:
        raise ValueError("24:00:00 is not a Connect Time")
    seconds, rest = divmod(millis, 1000)
    return dt.time(seconds // 3600, seconds // 60 % 60, seconds % 60, rest * 1000)


def _zoned_time(text: str) -> str:
    """`timetz` as Debezium's ZonedTime: the time of day in UTC, ISO-8601 with `Z`."""
    found = _TIMETZ.fullmatch(text)
    if found is None:
        raise ValueError("not an ISO time with a UTC offset (hours and minutes)")
    hour, minute, second, fraction, sign, oh, om = found.groups()
    micros = ((int(hour) * 60 + int(minute)) * 60 + int(second)) * 1_000_000 + _fraction(fraction)
    offset = (int(oh) * 60 + int(om or 0)) * 60_000_000
    micros = (micros - offset if sign == "+" else micros + offset) % _MICROS_PER_DAY
    return f"{_clock(micros, 0)}Z"


def _precision(t: _Type) -> int:
    """A time or timestamp column's fraction digits (6 when not given)."""
    return t.modifier if 0 <= t.modifier <= 6 else 6


def _date(t: _Type, settings: ValueSettings) -> tuple[SchemaBuilder, Parser | None]:
    if settings.time_precision_mode == "connect":
        return Date.builder(), _connect_date
    return _named(SchemaBuilder.int32(), "io.debezium.time.Date"), _days


def _time(t: _Type, settings: ValueSettings) -> tuple[SchemaBuilder, Parser | None]:
    mode = settings.time_precision_mode
    if mode == "connect":
        return Time.builder(), _connect_time
    if mode == "adaptive" and _precision(t) <= 3:
        return _named(SchemaBuilder.int32(), "io.debezium.time.Time"), _time_millis
    return _named(SchemaBuilder.int64(), "io.debezium.time.MicroTime"), _time_micros


def _timestamp(t: _Type, settings: ValueSettings) -> tuple[SchemaBuilder, Parser | None]:
    mode = settings.time_precision_mode
    if mode == "connect":
        return Timestamp.builder(), _connect_timestamp
    if mode != "microseconds" and _precision(t) <= 3:
        return _named(SchemaBuilder.int64(), "io.debezium.time.Timestamp"), _timestamp_millis
    return _named(SchemaBuilder.int64(), "io.debezium.time.MicroTimestamp"), _timestamp_micros


def _timestamptz(t: _Type, settings: ValueSettings) -> tuple[SchemaBuilder, Parser | None]:
    return _named(SchemaBuilder.string(), "io.debezium.time.ZonedTimestamp"), _zoned(_precision(t))


# --- dates and times in arrays ------------------------------------------------------------------
# Debezium reads an array's elements through pgjdbc's `PgArray` (snapshot and stream alike), so a
# `date`, `timestamp` or `timestamptz` element is a `java.sql` value built in the JVM's hybrid
# Julian/Gregorian calendar (UTC assumed) rather than the scalar columns' proleptic reading.

_JDBC_INFINITE_DAYS: Final = {"infinity": -622191234, "-infinity": -625821272}
"""Debezium's `date[]` numbers for the infinities: pgjdbc's infinity dates (epoch
milliseconds 9223372036825200000 and -9223372036832400000) as `java.sql.Date.toLocalDate`
reads them, their epoch days cast to a Java int."""
_CUTOVER_MICROS: Final = _epoch_day(1582, 10, 15) * _MICROS_PER_DAY
"""The Gregorian calendar's first day in `java.util.GregorianCalendar`: earlier dates are
Julian ones there."""


def _era_dropped(text: str) -> str:
    """A date or timestamp text with the fields `java.sql.Date/Timestamp.toLocalDate(Time)`
    reads back: the era dropped (`0044-03-15 BC` is year 44) and a day in the calendar
    change's gap (1582-10-05 to 1582-10-14, which the hybrid calendar reads as Julian) ten days
    on."""
    if text.endswith(" BC"):
        text = text[:-3]
    if text.startswith("1582-10-") and "05" <= text[8:10] <= "14":
        text = f"1582-10-{int(text[8:10]) + 10}{text[10:]}"
    return text


def _jdbc_days(text: str) -> int:
    """A `date[]` element as Debezium has it (`java.sql.Date.toLocalDate().toEpochDay()`)."""
    infinite = _JDBC_INFINITE_DAYS.get(text)
    return _days(_era_dropped(text)) if infinite is None else infinite


def _julian_epoch_day(year: int, month: int, day: int) -> int:
    """Days from 1970-01-01 to a Julian calendar date (astronomical year numbering)."""
    shift = (14 - month) // 12
    years = year + 4800 - shift
    months = month + 12 * shift - 3
    return day + (153 * months + 2) // 5 + 365 * years + years // 4 - 32083 - 2440588


def _jdbc_micros(text: str) -> int:
    """A `timestamp[]` element as Debezium has it: the instant of `java.sql.Timestamp`,
    whose fields before 1582-10-15 are a Julian date."""
    micros = _timestamp_micros(text)
    if micros >= _CUTOVER_MICROS or text in _INFINITE_MICROS:
        return micros
    days, rest = divmod(micros, _MICROS_PER_DAY)
    return _julian_epoch_day(*_civil(days)) * _MICROS_PER_DAY + rest


def _jdbc_millis(text: str) -> int:
    return _jdbc_micros(text) // 1000


def _jdbc_zoned(digits: int) -> Parser:
    """A `timestamptz[]` element as Debezium has it: `Timestamp.toLocalDateTime`'s fields."""
    zoned = _zoned(digits)
    return lambda text: zoned(_era_dropped(text))


def _jdbc_element(t: _Type, settings: ValueSettings) -> Parser | None:
    """The element parser of an array of dates or timestamps (None for other elements, and
    with `time.precision.mode=connect`)."""
    mode = settings.time_precision_mode
    if mode == "connect":
        return None
    if t.name == "date":
        return _jdbc_days
    if t.name == "timestamptz":
        return _jdbc_zoned(_precision(t))
    if t.name == "timestamp":
        return _jdbc_millis if mode != "microseconds" and _precision(t) <= 3 else _jdbc_micros
    return None


# --- intervals -----------------------------------------------------------------------------------

_INTERVAL: Final = re.compile(
    r"P(?:(-?\d+)Y)?(?:(-?\d+)M)?(?:(-?\d+)D)?"
    r"(?:T(?:(-?\d+)H)?(?:(-?\d+)M)?(?:(-?\d+(?:\.\d+)?)S)?)?"
)
_DAYS_PER_MONTH: Final = 365.25 / 12.0
_INT_LIMIT: Final = 2**31


@dataclass(frozen=True, slots=True)
class _Interval:
    """An interval's fields as pgjdbc's PGInterval holds them (seconds in whole seconds and
    rounded microseconds)."""

    years: int
    months: int
    days: int
    hours: int
    minutes: int
    seconds: float

    @staticmethod
    def parse(text: str) -> _Interval:
        found = _INTERVAL.fullmatch(text)
        if found is None or text in ("P", "PT"):
            raise ValueError("not an ISO-8601 interval (IntervalStyle=iso_8601)")
        *fields, seconds = found.groups()
        numbers = [int(field or 0) for field in fields]
        if any(not -_INT_LIMIT <= number < _INT_LIMIT for number in numbers):
            raise ValueError("an interval field exceeds a 32-bit integer")
        years, months, days, hours, minutes = numbers
        return _Interval(years, months, days, hours, minutes, _pg_seconds(seconds))


def _java_round(value: float) -> int:
    """Java's `Math.round`: the closest integer, ties toward positive infinity."""
    floor = math.floor(value)
    return floor + 1 if value - floor >= 0.5 else floor


def _pg_seconds(text: str | None) -> float:
    """Seconds as pgjdbc keeps them: rounded to whole microseconds, then re-added as a double."""
    if text is None:
        return 0.0
    total = _java_round(float(text) * 1_000_000)
    whole = abs(total) // 1_000_000 * (1 if total >= 0 else -1)
    return whole + (total - whole * 1_000_000) / 1_000_000


def _duration_micros(text: str) -> int:
    """Debezium's MicroDuration: every field in double arithmetic, a month 365.25/12 days."""
    interval = _Interval.parse(text)
    days = (interval.years * 12 + interval.months) * _DAYS_PER_MONTH + interval.days
    seconds = ((days * 24 + interval.hours) * 60 + interval.minutes) * 60 + interval.seconds
    return int(seconds * 1e6)


def _plain_seconds(seconds: float) -> str:
    """Java's `BigDecimal.valueOf(seconds).stripTrailingZeros().toPlainString()`."""
    if seconds == 0:
        return "0"
    number = decimal.Decimal(repr(seconds))
    if -int(number.as_tuple().exponent) > 9:
        number = number.quantize(decimal.Decimal("1e-9"), decimal.ROUND_DOWN)
    return format(number.normalize(_WIDE), "f")


def _iso_interval(text: str) -> str:
    """Debezium's Interval string: every field, seconds in plain decimal."""
    i = _Interval.parse(text)
    seconds = _plain_seconds(i.seconds)
    return f"P{i.years}Y{i.months}M{i.days}DT{i.hours}H{i.minutes}M{seconds}S"


def _interval(t: _Type, settings: ValueSettings) -> tuple[SchemaBuilder, Parser | None]:
    if settings.interval_mode == "string":
        return _named(SchemaBuilder.string(), "io.debezium.time.Interval"), _iso_interval
    return _named(SchemaBuilder.int64(), "io.debezium.time.MicroDuration"), _duration_micros


# --- point and hstore ----------------------------------------------------------------------------


def _point(t: _Type, settings: ValueSettings) -> tuple[SchemaBuilder, Any]:
    return _point_builder(), _OfSchema(_point_parser)


def _point_parser(schema: Schema) -> Parser:
    def parse(text: str) -> Struct:
        if not (text.startswith("(") and text.endswith(")")):
            raise ValueError("not a point")
        x_text, y_text = text[1:-1].split(",")
        x, y = float(x_text), float(y_text)
        wkb = struct.pack("<BIdd", 1, 1, x, y)
        return Struct(schema, {"x": x, "y": y, "wkb": wkb, "srid": None})

    return parse


def _quoted(text: str, start: int) -> tuple[str, int]:
    """The backslash-escaped text inside the quotes opening at `start`, and the index just
    after the closing quote."""
    if text[start] != '"':
        raise ValueError(f"expected a quote at {start}")
    parts: list[str] = []
    position = start + 1
    while True:
        quote = text.index('"', position)
        backslash = text.find("\\", position, quote)
        if backslash < 0:
            parts.append(text[position:quote])
            return "".join(parts), quote + 1
        parts.append(text[position:backslash] + text[backslash + 1])
        position = backslash + 2


def _hstore_pairs(text: str) -> list[tuple[str, str | None]]:
    """An hstore's `"key"=>"value", "key"=>NULL` text as pairs, in order."""
    pairs: list[tuple[str, str | None]] = []
    position = 0
    while position < len(text):
        key, position = _quoted(text, position)
        if not text.startswith("=>", position):
            raise ValueError("not an hstore")
        position += 2
        value: str | None
        if text.startswith("NULL", position):
            value, position = None, position + 4
        else:
            value, position = _quoted(text, position)
        pairs.append((key, value))
        if position < len(text):
            if not text.startswith(", ", position):
                raise ValueError("not an hstore")
            position += 2
    return pairs


def _java_hash(text: str) -> int:
    """Java's `String.hashCode` (over UTF-16 code units), spread as `HashMap.hash` does."""
    code = 0
    units = text.encode("utf-16-be")
    for index in range(0, len(units), 2):
        code = (code * 31 + (units[index] << 8 | units[index + 1])) & 0xFFFFFFFF
    return code ^ (code >> 16)


def _hashmap_order(pairs: list[tuple[str, str | None]]) -> list[tuple[str, str | None]]:
    """The pairs in the order a `java.util.HashMap` filled with them in turn iterates them:
    by bucket of its final table (16 doubling while over 3/4 full), then insertion."""
    capacity = 16
    while len(pairs) > capacity * 3 // 4:
        capacity *= 2
    mask = capacity - 1
    return sorted(pairs, key=lambda pair: _java_hash(pair[0]) & mask)


_JSON_ESCAPES: Final = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\f": "\\f",
    "\r": "\\r",
}
_JSON_NEEDS_ESCAPE: Final = re.compile(r'["\\\x00-\x1f]')


def _json_string(text: str) -> str:
    """A JSON string literal as Jackson writes it (control characters as `\\u00XX`)."""

    def escape(found: re.Match[str]) -> str:
        char = found.group()
        return _JSON_ESCAPES.get(char) or f"\\u{ord(char):04X}"

    return '"' + _JSON_NEEDS_ESCAPE.sub(escape, text) + '"'


def _hstore_json(text: str) -> str:
    """An hstore as Debezium's JSON string: an object in HashMap order, no spaces."""
    members = (
        f"{_json_string(key)}:{'null' if value is None else _json_string(value)}"
        for key, value in _hashmap_order(_hstore_pairs(text))
    )
    return "{" + ",".join(members) + "}"


def _hstore_map(text: str) -> dict[str, str | None]:
    return dict(_hashmap_order(_hstore_pairs(text)))


def _hstore(t: _Type, settings: ValueSettings) -> tuple[SchemaBuilder, Parser | None]:
    if settings.hstore_mode == "map":
        return SchemaBuilder.map(Schema.STRING, Schema.OPTIONAL_STRING), _hstore_map
    return _named(SchemaBuilder.string(), "io.debezium.data.Json"), _hstore_json


# --- the mapping ---------------------------------------------------------------------------------

_Mapper = Callable[[_Type, ValueSettings], tuple[SchemaBuilder, Any]]


def _text_named(name: str) -> _Mapper:
    return lambda t, settings: (_named(SchemaBuilder.string(), name), None)


def _bool(text: str) -> bool:
    return text in _TRUE


_STRINGS: Final = [
    "text",
    "varchar",
    "bpchar",
    "char",
    "name",
    "citext",
    "isbn",
    "inet",
    "cidr",
    "macaddr",
    "macaddr8",
    "int4range",
    "numrange",
    "int8range",
    "tsrange",
    "tstzrange",
    "daterange",
]

_SCALARS: Final[dict[str, _Mapper]] = {
    "bool": _simple(SchemaBuilder.boolean, _bool),
    "int2": _simple(SchemaBuilder.int16, int),
    "int4": _simple(SchemaBuilder.int32, int),
    "int8": _simple(SchemaBuilder.int64, int),
    "oid": _simple(SchemaBuilder.int64, int),
    "float4": _simple(SchemaBuilder.float32, float),
    "float8": _simple(SchemaBuilder.float64, float),
    "numeric": _numeric,
    "money": _money,
    "bytea": _binary,
    "bit": _bits,
    "varbit": _bits,
    "date": _date,
    "time": _time,
    "timetz": lambda t, settings: (
        _named(SchemaBuilder.string(), "io.debezium.time.ZonedTime"),
        _zoned_time,
    ),
    "timestamp": _timestamp,
    "timestamptz": _timestamptz,
    "interval": _interval,
    "uuid": _text_named("io.debezium.data.Uuid"),
    "json": _text_named("io.debezium.data.Json"),
    "jsonb": _text_named("io.debezium.data.Json"),
    "xml": _text_named("io.debezium.data.Xml"),
    "tsvector": _text_named("io.debezium.data.Tsvector"),
    "ltree": _text_named("io.debezium.data.Ltree"),
    "point": _point,
    "hstore": _hstore,
    **{name: _simple(SchemaBuilder.string, None) for name in _STRINGS},
}
"""Each type Debezium maps, by `pg_type.typname`: its schema builder and its text parser
(None when the value is the text itself)."""

_OPTIONAL_ELEMENTS: Final = frozenset(
    [
        "int2",
        "int4",
        "int8",
        "oid",
        "char",
        "varchar",
        "text",
        "bpchar",
        "inet",
        "cidr",
        "macaddr",
        "macaddr8",
        "tsrange",
        "tstzrange",
        "daterange",
        "int4range",
        "numrange",
        "int8range",
        "numeric",
        "float4",
        "float8",
        "bool",
        "date",
        "uuid",
        "json",
        "jsonb",
        "time",
        "timetz",
        "timestamp",
        "timestamptz",
        "bytea",
        "citext",
        "hstore",
        "ltree",
    ]
)
"""Element types of the arrays Debezium maps to arrays of optional elements."""
_REQUIRED_ELEMENTS: Final = frozenset(("tsvector", "isbn"))
"""Element types of the arrays Debezium maps through its generic path: required elements (an
enum's too), so a null element fails the record."""


def _enum(t: _Type) -> tuple[SchemaBuilder, Parser | None]:
    builder = _named(SchemaBuilder.string(), "io.debezium.data.Enum")
    return builder.parameter("allowed", ",".join(t.labels)), None


def _scalar(t: _Type, settings: ValueSettings) -> tuple[SchemaBuilder, Any]:
    if t.kind == "e":
        return _enum(t)
    mapper = _SCALARS.get(t.name) if t.kind in ("b", "r") else None
    if mapper is None:
        raise UncapturedType(
            f"type {t.name} has no Debezium mapping: Debezium 3.6.1 leaves such columns out "
            "of its records (include.unknown.datatypes=false)"
        )
    return mapper(t, settings)


def _array_items(text: str) -> list[str | None]:
    """A one-dimensional array's output text as its elements' texts (None for NULL)."""
    if text.startswith("["):
        text = text[text.index("=") + 1 :]
    if not (text.startswith("{") and text.endswith("}")):
        raise ValueError("not an array")
    body = text[1:-1]
    if body.startswith("{"):
        raise ValueError(
            "multi-dimensional arrays are not supported (Debezium 3.6.1 turns their rows into "
            "nulls or Java object names)"
        )
    if not body:
        return []
    if '"' not in body:
        return [None if item == "NULL" else item for item in body.split(",")]
    items: list[str | None] = []
    position = 0
    while True:
        if body[position] == '"':
            item, position = _quoted(body, position)
            items.append(item)
        else:
            end = body.find(",", position)
            end = len(body) if end < 0 else end
            raw = body[position:end]
            items.append(None if raw == "NULL" else raw)
            position = end
        if position >= len(body):
            return items
        position += 1


def _array(t: _Type, settings: ValueSettings) -> tuple[SchemaBuilder, Parser | None]:
    element = t.element
    assert element is not None
    if element.kind == "e":
        optional = False
    elif element.kind in ("b", "r") and element.name in _OPTIONAL_ELEMENTS:
        optional = True
    elif element.kind == "b" and element.name in _REQUIRED_ELEMENTS:
        optional = False
    elif element.kind == "b" and element.name == "bit":
        raise DataError(
            "bit[] columns are not supported: Debezium 3.6.1 gives them a non-array schema "
            "and fails on their values"
        )
    else:
        raise UncapturedType(
            f"type {element.name}[] has no Debezium mapping: Debezium 3.6.1 leaves such "
            "columns out of its records (include.unknown.datatypes=false)"
        )
    element_schema, parse_item = _finish(*_scalar(element, settings), optional)
    if element.name == "ltree":
        return SchemaBuilder.array(element_schema), _ltree_array
    if element.name == "numeric":
        return SchemaBuilder.array(element_schema), _numeric_array(_array_parser(parse_item))
    parse_item = _jdbc_element(element, settings) or parse_item
    return SchemaBuilder.array(element_schema), _array_parser(parse_item)


def _ltree_array(text: str) -> list[str | None] | None:
    """An `ltree[]` as Debezium has it: null when an element is null (its converter fails on
    the null element, and a conversion failure is a null value under Debezium's default
    `event.converting.failure.handling.mode=warn`)."""
    items = _array_items(text)
    return None if None in items else items


_NUMERIC_SPECIALS: Final = frozenset(("NaN", "Infinity", "-Infinity"))


def _numeric_array(parse: Parser) -> Parser:
    """A `numeric[]` as Debezium has it: null when an element is NaN or infinite, in every
    `decimal.handling.mode` (pgjdbc fails to read such an array as BigDecimals, and a
    conversion failure is a null value under `event.converting.failure.handling.mode=warn`)."""

    def parse_numbers(text: str) -> list[Any] | None:
        if ("N" in text or "I" in text) and not _NUMERIC_SPECIALS.isdisjoint(_array_items(text)):
            return None
        return parse(text)

    return parse_numbers


def _array_parser(parse_item: Parser | None) -> Parser:
    if parse_item is None:
        return _array_items
    item_parser = parse_item

    def parse(text: str) -> list[Any]:
        return [None if item is None else item_parser(item) for item in _array_items(text)]

    return parse


def _mapping(column: ColumnInfo, settings: ValueSettings) -> tuple[Schema, Parser | None]:
    t = _resolve(column)
    try:
        if t.element is not None:
            return _finish(*_array(t, settings), column.optional)
        return _finish(*_scalar(t, settings), column.optional)
    except UncapturedType as error:
        raise UncapturedType(f"column {column.name}: {error}") from None
    except (DataError, ValueError) as error:
        raise DataError(f"column {column.name}: {error}") from None


def captured(column: ColumnInfo, settings: ValueSettings = DEFAULT_SETTINGS) -> bool:
    """Whether Debezium has a schema for the column's type (it leaves the column out if not)."""
    try:
        _mapping(column, settings)
    except UncapturedType:
        return False
    except DataError:
        return True
    return True


def column_schema(column: ColumnInfo, settings: ValueSettings = DEFAULT_SETTINGS) -> Schema:
    """The Connect schema of a column (optional when the column is nullable)."""
    return _mapping(column, settings)[0]


_FAILURES: Final = (ValueError, ArithmeticError, IndexError, OverflowError)


def _failed(column: ColumnInfo, text: str, error: Exception) -> DataError:
    shown = text if len(text) <= 60 else text[:60] + "..."
    return DataError(f"column {column.name}: cannot read {shown!r}: {error}")


def text_parser(
    column: ColumnInfo, settings: ValueSettings = DEFAULT_SETTINGS
) -> Callable[[str], Any] | None:
    """`parse_value` of one column's non-null text with the type looked up once; None when
    the value is its text."""
    _, parser = _mapping(column, settings)
    if parser is None:
        return None
    found = parser

    def parse(text: str) -> Any:
        try:
            return found(text)
        except _FAILURES as error:
            raise _failed(column, text, error) from error

    return parse


def parse_value(
    column: ColumnInfo, text: str | None, settings: ValueSettings = DEFAULT_SETTINGS
) -> Any:
    """A column's text-format value as the Connect value its schema describes."""
    if text is None:
        return None
    parser = text_parser(column, settings)
    return text if parser is None else parser(text)
