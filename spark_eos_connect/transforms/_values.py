"""Parts of Connect's `Values` helper the transforms rely on.

`parse_string` reads a literal the way `Values.parseString` does (InsertHeader's
`value.literal`): `null`, booleans, numbers in the smallest type that holds them (INT8 ... INT64,
then FLOAT32/FLOAT64, then Decimal), ISO-8601 dates, times and timestamps, `[...]` arrays and
`{...}` maps (falling back to the plain string when they do not parse), anything else a STRING.
`date_format_for` and `java_date_millis` give the text Connect writes for a date value. Connect
uses the JVM's default time zone in those two places; this module assumes UTC.
"""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any, Final

from spark_eos_connect.api.data import (
    Date,
    Decimal,
    Schema,
    SchemaAndValue,
    SchemaBuilder,
    Time,
    Timestamp,
    Type,
)
from spark_eos_connect.errors import DataError
from spark_eos_connect.transforms._dateformat import JavaDateFormat
from spark_eos_connect.transforms._jnumbers import big_decimal, to_float32

__all__ = ["date_format_for", "format_java_date", "java_date_millis", "parse_string"]

_MS_PER_DAY: Final = 86_400_000
_DATE_PATTERN: Final = "yyyy-MM-dd"
_TIME_PATTERN: Final = "HH:mm:ss.SSS'Z'"
_TIMESTAMP_PATTERN: Final = _DATE_PATTERN + "'T'" + _TIME_PATTERN
_DATE_FORMAT: Final = JavaDateFormat(_DATE_PATTERN)
_TIME_FORMAT: Final = JavaDateFormat(_TIME_PATTERN)
_TIMESTAMP_FORMAT: Final = JavaDateFormat(_TIMESTAMP_PATTERN)
_EPOCH: Final = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_DELIMITERS: Final = frozenset(':,{}[]"')


def java_date_millis(value: dt.date | dt.time) -> int:
    """The milliseconds a `java.util.Date` holds for a Date, Time or Timestamp value."""
    if isinstance(value, dt.datetime):
        aware = value if value.tzinfo is not None else value.replace(tzinfo=dt.UTC)
        return (aware - _EPOCH) // dt.timedelta(milliseconds=1)
    if isinstance(value, dt.date):
        return (value - _EPOCH.date()).days * _MS_PER_DAY
    return ((value.hour * 60 + value.minute) * 60 + value.second) * 1000 + value.microsecond // 1000


def date_format_for(millis: int) -> JavaDateFormat:
    """`Values.dateFormatFor`: a time below one day, a date at midnight, else a timestamp."""
    if millis < _MS_PER_DAY:
        return _TIME_FORMAT
    if millis % _MS_PER_DAY == 0:
        return _DATE_FORMAT
    return _TIMESTAMP_FORMAT


def format_java_date(value: dt.date | dt.time) -> str:
    """The ISO-8601 text Connect writes for a date value (`Values.dateFormatFor(d).format(d)`)."""
    millis = java_date_millis(value)
    return date_format_for(millis).format(millis)


class _NoElementSchema(DataError):
    """An array or map whose elements share no type (empty, all null or mixed): Connect gives it
    a schema without element schema, which the project's schema model cannot hold."""


class _Tokens:
    """Connect's `Values.Parser`: splits on `: , { } [ ] "` unless escaped by a backslash."""

    def __init__(self, original: str) -> None:
        self.original = original
        self.index = 0
        self.pending: str | None = None
        self.previous: str | None = None

    def mark(self) -> int:
        return self.index - (len(self.pending) if self.pending is not None else 0)

    def rewind(self, position: int) -> None:
        self.index = position
        self.pending = None
        self.previous = None

    def _more(self) -> bool:
        return self.index < len(self.original)

    def has_next(self) -> bool:
        return self.pending is not None or self._more()

    def _consume(self) -> str:
        escaped = False
        start = self.index
        text = self.original
        while self.index < len(text):
            c = text[self.index]
            if c == "\\":
                escaped = not escaped
            elif c in _DELIMITERS:
                if not escaped:
                    if start < self.index:
                        return text[start : self.index]
                    self.index += 1
                    return text[start : start + 1]
                escaped = False
            else:
                escaped = False
            self.index += 1
        return text[start : self.index]

    def next(self) -> str:
        if self.pending is not None:
            self.previous, self.pending = self.pending, None
        else:
            self.previous = self._consume()
        return self.previous

    def next_n(self, count: int) -> str | None:
        start = self.mark()
        for _ in range(count):
            if not self.has_next():
                self.rewind(start)
                return None
            self.next()
        return self.original[start : self.index]

    def can_consume(self, expected: str) -> bool:
        if self.pending is None:
            if not self.has_next():
                return False
            self.pending = self._consume()
        while not self.pending.strip() and self._more():
            self.pending = self._consume()
        if self.pending.strip() == expected:
            self.pending = None
            return True
        return False


def _parse_temporal(token: str) -> SchemaAndValue | None:
    token = token.replace("\\:", ":")
    for fmt, length, schema in (
        (_TIME_FORMAT, 13, Time.SCHEMA),
        (_TIMESTAMP_FORMAT, 24, Timestamp.SCHEMA),
        (_DATE_FORMAT, 10, Date.SCHEMA),
    ):
        if len(token) != length:
            continue
        try:
            millis, used = fmt.parse_prefix(token)
        except ValueError:
            return None
        if millis is None or used == 0:
            return None
        if schema is Date.SCHEMA:
            return SchemaAndValue(schema, Date.to_logical(schema, millis // _MS_PER_DAY))
        if schema is Time.SCHEMA:
            return SchemaAndValue(schema, Time.to_logical(schema, millis % _MS_PER_DAY))
        return SchemaAndValue(schema, Timestamp.to_logical(schema, millis))
    return None


def _parse_number(token: str) -> SchemaAndValue:
    value = big_decimal(token)
    exact = _exact_integer(value)
    if exact is not None:
        return exact
    exponent = value.as_tuple().exponent
    assert isinstance(exponent, int)
    scale = -exponent
    as_double = float(value)
    as_float = to_float32(as_double)
    if scale != 0 and as_float not in (float("inf"), float("-inf")):
        return SchemaAndValue(Schema.FLOAT32, as_float)
    if scale != 0 and as_double not in (float("inf"), float("-inf")):
        return SchemaAndValue(Schema.FLOAT64, as_double)
    return SchemaAndValue(Decimal.schema(scale), value)


def _exact_integer(value: decimal.Decimal) -> SchemaAndValue | None:
    magnitude = abs(value)
    if magnitude > decimal.Decimal("1e19") or (0 < magnitude < 1):
        return None
    if value != value.to_integral_value():
        return None
    integral = int(value)
    if not -(2**63) <= integral < 2**63:
        return None
    for schema, bits in ((Schema.INT8, 8), (Schema.INT16, 16), (Schema.INT32, 32)):
        if -(2 ** (bits - 1)) <= integral < 2 ** (bits - 1):
            return SchemaAndValue(schema, integral)
    return SchemaAndValue(Schema.INT64, integral)


_NUMERIC_ORDER: Final = (Type.INT8, Type.INT16, Type.INT32, Type.INT64, Type.FLOAT32, Type.FLOAT64)


def _merge(previous: Schema, new: Schema) -> Schema | None:
    if previous.type is not new.type:
        if previous.type in _NUMERIC_ORDER and new.type in _NUMERIC_ORDER:
            wider = _NUMERIC_ORDER.index(new.type) > _NUMERIC_ORDER.index(previous.type)
            return new if wider else previous
        return None
    if previous.optional == new.optional:
        return previous if previous.optional else new
    return previous if previous == new else None


class _Merger:
    def __init__(self) -> None:
        self.common: Schema | None = None
        self.compatible = True

    def merge(self, latest: SchemaAndValue | None) -> None:
        if latest is None or latest.schema is None or not self.compatible:
            return
        if self.common is None:
            self.common = latest.schema
        else:
            self.common = _merge(self.common, latest.schema)
            self.compatible = self.common is not None


def _align(schema: Schema, value: Any) -> Any:
    if value is None:
        return None
    if schema.type in (Type.FLOAT32, Type.FLOAT64) and isinstance(value, int | float):
        return to_float32(float(value)) if schema.type is Type.FLOAT32 else float(value)
    return value


class _ValueParser:
    def __init__(self, text: str) -> None:
        self.tokens = _Tokens(text)

    def _single_literal(self, embedded: bool, literal: str) -> bool:
        start = self.tokens.mark()
        if self.tokens.can_consume(literal) and (embedded or not self.tokens.has_next()):
            return True
        self.tokens.rewind(start)
        return False

    def parse(self, embedded: bool) -> SchemaAndValue | None:
        tokens = self.tokens
        if not tokens.has_next():
            return None
        if embedded and tokens.can_consume('"'):
            return self._quoted()
        if self._single_literal(embedded, "null"):
            return None
        if self._single_literal(embedded, "true"):
            return SchemaAndValue(Schema.BOOLEAN, True)
        if self._single_literal(embedded, "false"):
            return SchemaAndValue(Schema.BOOLEAN, False)
        start = tokens.mark()
        try:
            if tokens.can_consume("["):
                return self._array()
            if tokens.can_consume("{"):
                return self._map()
        except _NoElementSchema:
            raise
        except DataError:
            tokens.rewind(start)
        token = tokens.next()
        if not token.strip():
            return SchemaAndValue(Schema.STRING, token)
        return self._token(embedded, token.strip())

    def _token(self, embedded: bool, token: str) -> SchemaAndValue:
        first = token[0]
        if first.isdigit():
            temporal = self._multi_token_temporal(token)
            if temporal is not None:
                return temporal
        if first.isdigit() or first in "+-":
            try:
                return _parse_number(token)
            except ValueError:
                pass
        if embedded:
            raise DataError("Failed to parse embedded value")
        return SchemaAndValue(Schema.STRING, self.tokens.original)

    def _multi_token_temporal(self, token: str) -> SchemaAndValue | None:
        position = self.tokens.mark()
        remainder = self.tokens.next_n(4)
        if remainder is not None:
            temporal = _parse_temporal(token + remainder)
            if temporal is not None:
                return temporal
        self.tokens.rewind(position)
        return _parse_temporal(token)

    def _quoted(self) -> SchemaAndValue:
        parts = []
        while self.tokens.has_next():
            if self.tokens.can_consume('"'):
                break
            parts.append(self.tokens.next())
        content = "".join(parts)
        return _parse_temporal(content) or SchemaAndValue(Schema.STRING, content)

    def _array(self) -> SchemaAndValue:
        tokens = self.tokens
        result: list[Any] = []
        merger = _Merger()
        while tokens.has_next():
            if tokens.can_consume("]"):
                if merger.common is not None:
                    schema = SchemaBuilder.array(merger.common).build()
                    return SchemaAndValue(schema, [_align(merger.common, v) for v in result])
                raise _NoElementSchema(
                    f"the array {tokens.original} has no common element type (it is empty, all "
                    "null or mixed)"
                )
            if tokens.can_consume(","):
                raise DataError(f"Unable to parse an empty array element: {tokens.original}")
            element = self.parse(True)
            merger.merge(element)
            result.append(None if element is None else element.value)
            position = tokens.mark()
            if tokens.can_consume("]"):
                tokens.rewind(position)
            elif not tokens.can_consume(","):
                raise DataError("Array elements missing ',' delimiter")
        if tokens.previous == ",":
            raise DataError(f"Array is missing element after ',': {tokens.original}")
        raise DataError(f"Array is missing terminating ']': {tokens.original}")

    def _map(self) -> SchemaAndValue:
        tokens = self.tokens
        result: dict[Any, Any] = {}
        keys, values = _Merger(), _Merger()
        while tokens.has_next():
            if tokens.can_consume("}"):
                if keys.common is not None and values.common is not None:
                    schema = SchemaBuilder.map(keys.common, values.common).build()
                    aligned = {
                        _align(keys.common, k): _align(values.common, v) for k, v in result.items()
                    }
                    return SchemaAndValue(schema, aligned)
                raise _NoElementSchema(
                    f"the map {tokens.original} has no common key and value types (it is empty, "
                    "all null or mixed)"
                )
            if tokens.can_consume(","):
                raise DataError(
                    f"Unable to parse a map entry with no key or value: {tokens.original}"
                )
            key = self.parse(True)
            if key is None or key.value is None:
                raise DataError(f"Map entry may not have a null key: {tokens.original}")
            if not tokens.can_consume(":"):
                raise DataError(f"Map entry is missing ':' in {tokens.original}")
            entry = self.parse(True)
            result[key.value] = None if entry is None else entry.value
            tokens.can_consume(",")
            keys.merge(key)
            values.merge(entry)
        if tokens.previous == ",":
            raise DataError(f"Map is missing element after ',': {tokens.original}")
        raise DataError(f"Map is missing terminating '}}': {tokens.original}")


def parse_string(text: str | None) -> SchemaAndValue:
    """`Values.parseString(text)`: the schema and value a literal stands for."""
    if text is None:
        return SchemaAndValue.NULL
    if text == "":
        return SchemaAndValue(Schema.STRING, text)
    parsed = _ValueParser(text).parse(False)
    return SchemaAndValue.NULL if parsed is None else parsed
