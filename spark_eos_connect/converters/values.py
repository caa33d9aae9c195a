"""Connect's `Values` text forms, as `SimpleHeaderConverter` writes and reads header values.

`to_string` writes a value the way `Values.convertToString` does: numbers in Java's forms,
booleans `true`/`false`, strings as they are (quoted, with `\\` and `"` escaped, inside lists,
maps and structs), bytes in base64, lists `[a,b]`, maps and structs `{k:v}`, dates/times in ISO
8601 (UTC). `parse_string` reads such text back with a schema inferred the way
`Values.parseString` infers it: the narrowest integer type, FLOAT32 for fractions, dates and
times by their lengths, lists and maps whose elements share a type, anything else a string.
Lists and maps whose elements have no common type get no schema (Connect's schema there has no
element type, which this data model does not allow).
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import math
import re
from collections.abc import Mapping
from typing import Any

from spark_eos_connect.api.data import (
    MS_PER_DAY,
    Date,
    Decimal,
    Schema,
    SchemaAndValue,
    SchemaBuilder,
    Struct,
    Time,
    Timestamp,
    Type,
)
from spark_eos_connect.converters import _java
from spark_eos_connect.errors import DataError

__all__ = ["parse_string", "to_string"]

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)

# --- writing ------------------------------------------------------------------------------------


def _epoch_ms(value: dt.date | dt.time) -> int:
    if isinstance(value, dt.datetime):
        return Timestamp.from_logical(Timestamp.SCHEMA, value)
    if isinstance(value, dt.date):
        return Date.from_logical(Date.SCHEMA, value) * MS_PER_DAY
    return Time.from_logical(Time.SCHEMA, value)


def _date_text(millis: int) -> str:
    """Java's `Values.dateFormatFor` choice: a time below one day, a date at midnight, else both."""
    moment = _EPOCH + dt.timedelta(milliseconds=millis)
    time = f"{moment:%H:%M:%S}.{moment.microsecond // 1000:03d}Z"
    if millis < MS_PER_DAY:
        return time
    date = f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}"
    return date if millis % MS_PER_DAY == 0 else f"{date}T{time}"


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _number(schema: Schema | None, value: int | float | decimal.Decimal) -> str:
    if isinstance(value, decimal.Decimal):
        return _java.decimal_to_string(value)
    if isinstance(value, int):
        return str(value)
    if schema is not None and schema.type is Type.FLOAT32:
        return _java.float_to_string(_java.float32(value))
    return _java.double_to_string(value)


def _append(out: list[str], schema: Schema | None, value: Any, embedded: bool) -> None:
    if value is None:
        out.append("null")
    elif isinstance(value, bool):
        out.append("true" if value else "false")
    elif isinstance(value, int | float | decimal.Decimal):
        out.append(_number(schema, value))
    elif isinstance(value, str):
        out.append(f'"{_escape(value)}"' if embedded else value)
    elif isinstance(value, bytes | bytearray):
        text = base64.b64encode(bytes(value)).decode("ascii")
        out.append(f'"{text}"' if embedded else text)
    elif isinstance(value, list | tuple):
        element = schema.value_schema if schema is not None else None
        out.append("[")
        for position, item in enumerate(value):
            if position:
                out.append(",")
            _append(out, element, item, True)
        out.append("]")
    elif isinstance(value, Mapping):
        keys = schema.key_schema if schema is not None else None
        values = schema.value_schema if schema is not None else None
        out.append("{")
        for position, (key, item) in enumerate(value.items()):
            if position:
                out.append(",")
            _append(out, keys, key, True)
            out.append(":")
            _append(out, values, item, True)
        out.append("}")
    elif isinstance(value, Struct):
        out.append("{")
        for position, field in enumerate(value.schema.fields):
            if position:
                out.append(",")
            _append(out, None, field.name, True)
            out.append(":")
            _append(out, field.schema, value.get(field.name), True)
        out.append("}")
    elif isinstance(value, dt.date | dt.time):
        out.append(_date_text(_epoch_ms(value)))
    else:
        raise DataError(
            f"Failed to serialize unexpected value type {type(value).__name__}: {value!r}"
        )


def to_string(schema: Schema | None, value: Any) -> str | None:
    """`Values.convertToString`: the text form of `value` (None for None)."""
    if value is None:
        return None
    out: list[str] = []
    _append(out, schema, value, False)
    return "".join(out)


# --- reading: tokens ----------------------------------------------------------------------------

_DELIMITERS = frozenset(':,{}[]"')


def _trim(text: str) -> str:
    """Java's `String.trim`: drop leading and trailing characters up to U+0020."""
    start, end = 0, len(text)
    while start < end and text[start] <= " ":
        start += 1
    while end > start and text[end - 1] <= " ":
        end -= 1
    return text[start:end]


def _blank(text: str | None) -> bool:
    return text is None or not _trim(text)


class _Tokens:
    """Splits text at unescaped delimiters; each delimiter is a token of its own."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.index = 0
        self.peeked: str | None = None
        self.previous: str | None = None

    def mark(self) -> int:
        return self.index - (len(self.peeked) if self.peeked is not None else 0)

    def rewind(self, position: int) -> None:
        self.index = position
        self.peeked = None
        self.previous = None

    def has_next(self) -> bool:
        return self.peeked is not None or self.index < len(self.text)

    def _consume(self) -> str:
        text, start = self.text, self.index
        escaped = False
        while self.index < len(text):
            char = text[self.index]
            if char == "\\":
                escaped = not escaped
            elif char in _DELIMITERS:
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
        if self.peeked is not None:
            self.previous, self.peeked = self.peeked, None
        else:
            self.previous = self._consume()
        return self.previous

    def next_n(self, count: int) -> str | None:
        """The text of the next `count` tokens, or None (nothing consumed) if there are fewer."""
        start = self.mark()
        for _ in range(count):
            if not self.has_next():
                self.rewind(start)
                return None
            self.next()
        return self.text[start : self.index]

    def _is_next(self, expected: str) -> bool:
        if self.peeked is None:
            if not self.has_next():
                return False
            self.peeked = self._consume()
        while _blank(self.peeked) and self.index < len(self.text):
            self.peeked = self._consume()
        return _trim(self.peeked) == expected

    def can_consume(self, expected: str) -> bool:
        if self._is_next(expected):
            self.peeked = None
            return True
        return False


# --- reading: values ----------------------------------------------------------------------------

_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1
_INT_SCHEMAS = ((8, Schema.INT8), (16, Schema.INT16), (32, Schema.INT32), (64, Schema.INT64))
_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
_TIME = re.compile(r"([0-9]{2}):([0-9]{2}):([0-9]{2})\.([0-9]{3})Z")


def _parse_number(token: str) -> SchemaAndValue | None:
    if not _NUMBER.fullmatch(token):
        return None
    number = decimal.Decimal(token)
    exponent = number.as_tuple().exponent
    assert isinstance(exponent, int)
    scale = -exponent
    if number == number.to_integral_value():
        integral = int(number)
        if _LONG_MIN <= integral <= _LONG_MAX:
            for bits, schema in _INT_SCHEMAS:
                if -(2 ** (bits - 1)) <= integral < 2 ** (bits - 1):
                    return SchemaAndValue(schema, integral)
    if scale != 0:
        as_double = float(number)
        try:
            single = _java.float32(as_double)
        except OverflowError:
            single = math.inf
        if not math.isinf(single):
            return SchemaAndValue(Schema.FLOAT32, single)
        if not math.isinf(as_double):
            return SchemaAndValue(Schema.FLOAT64, as_double)
    return SchemaAndValue(Decimal.schema(scale), number)


def _lenient_date(year: int, month: int, day: int) -> dt.date:
    """SimpleDateFormat's lenient calendar: months and days past their ends roll over."""
    year += (month - 1) // 12
    month = (month - 1) % 12 + 1
    return dt.date(year, month, 1) + dt.timedelta(days=day - 1)


def _time_ms(match: re.Match[str]) -> int:
    hours, minutes, seconds, millis = (int(g) for g in match.groups())
    return ((hours * 60 + minutes) * 60 + seconds) * 1000 + millis


def _parse_temporal(token: str) -> SchemaAndValue | None:
    token = token.replace("\\:", ":")
    try:
        if len(token) == 13 and (time := _TIME.fullmatch(token)):
            millis = _time_ms(time)
            if millis < MS_PER_DAY:
                return SchemaAndValue(Time.SCHEMA, Time.to_logical(Time.SCHEMA, millis))
            return None
        if len(token) == 24 and token[10] == "T":
            date, time = _DATE.fullmatch(token[:10]), _TIME.fullmatch(token[11:])
            if date and time:
                day = _lenient_date(*(int(g) for g in date.groups()))
                moment = dt.datetime(day.year, day.month, day.day, tzinfo=dt.UTC)
                moment += dt.timedelta(milliseconds=_time_ms(time))
                return SchemaAndValue(Timestamp.SCHEMA, moment)
            return None
        if len(token) == 10 and (date := _DATE.fullmatch(token)):
            return SchemaAndValue(Date.SCHEMA, _lenient_date(*(int(g) for g in date.groups())))
    except (ValueError, OverflowError):
        return None
    return None


_WIDER = {
    Type.INT8: (Type.INT16, Type.INT32, Type.INT64, Type.FLOAT32, Type.FLOAT64),
    Type.INT16: (Type.INT32, Type.INT64, Type.FLOAT32, Type.FLOAT64),
    Type.INT32: (Type.INT64, Type.FLOAT32, Type.FLOAT64),
    Type.INT64: (Type.FLOAT32, Type.FLOAT64),
    Type.FLOAT32: (Type.FLOAT64,),
    Type.FLOAT64: (),
}


def _common(previous: Schema, new: Schema) -> Schema | None:
    """The schema both fit, as `Values` merges element schemas (numbers widen)."""
    if previous.type is not new.type:
        if previous.type not in _WIDER:
            return None
        if new.type in _WIDER[previous.type]:
            return new
        if new.type in _WIDER and previous.type in _WIDER[new.type]:
            return previous
        return None
    if previous.optional == new.optional:
        return previous if previous.optional else new
    return previous if previous == new else None


class _Merger:
    def __init__(self) -> None:
        self.schema: Schema | None = None
        self.compatible = True

    def merge(self, latest: SchemaAndValue | None) -> None:
        if latest is None or latest.schema is None or not self.compatible:
            return
        self.schema = latest.schema if self.schema is None else _common(self.schema, latest.schema)
        self.compatible = self.schema is not None


def _align(schema: Schema, value: Any) -> Any:
    """A value converted to the common element schema (numbers only change here); a null
    cannot take the (always required) common schema, which makes the whole list or map text."""
    if value is None:
        raise DataError("Unable to convert a null value to a schema that requires a value")
    if isinstance(value, bool):
        return value
    if schema.type is Type.FLOAT32 and isinstance(value, int | float):
        return _java.float32(float(value))
    if schema.type is Type.FLOAT64 and isinstance(value, int | float):
        return float(value)
    return value


class _Parser:
    def __init__(self, text: str) -> None:
        self.tokens = _Tokens(text)

    def _literal(self, embedded: bool, literal: str) -> bool:
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
        if self._literal(embedded, "null"):
            return None
        if self._literal(embedded, "true"):
            return SchemaAndValue(Schema.BOOLEAN, True)
        if self._literal(embedded, "false"):
            return SchemaAndValue(Schema.BOOLEAN, False)
        start = tokens.mark()
        try:
            if tokens.can_consume("["):
                return self._array()
            if tokens.can_consume("{"):
                return self._map()
        except DataError:
            tokens.rewind(start)
        token = tokens.next()
        if _blank(token):
            return SchemaAndValue(Schema.STRING, token)
        return self._token(embedded, _trim(token))

    def _token(self, embedded: bool, token: str) -> SchemaAndValue:
        first = token[0]
        if first.isdecimal():
            temporal = self._temporal_tokens(token)
            if temporal is not None:
                return temporal
        if first.isdecimal() or first in "+-":
            number = _parse_number(token)
            if number is not None:
                return number
        if embedded:
            raise DataError("Failed to parse embedded value")
        return SchemaAndValue(Schema.STRING, self.tokens.text)

    def _temporal_tokens(self, token: str) -> SchemaAndValue | None:
        position = self.tokens.mark()
        rest = self.tokens.next_n(4)
        if rest is not None:
            temporal = _parse_temporal(token + rest)
            if temporal is not None:
                return temporal
        self.tokens.rewind(position)
        return _parse_temporal(token)

    def _quoted(self) -> SchemaAndValue:
        parts: list[str] = []
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
                if merger.schema is None:
                    return SchemaAndValue(None, result)
                schema = SchemaBuilder.array(merger.schema).build()
                return SchemaAndValue(schema, [_align(merger.schema, v) for v in result])
            if tokens.can_consume(","):
                raise DataError(f"Unable to parse an empty array element: {tokens.text}")
            element = self.parse(True)
            merger.merge(element)
            result.append(None if element is None else element.value)
            current = tokens.mark()
            if tokens.can_consume("]"):
                tokens.rewind(current)
            elif not tokens.can_consume(","):
                raise DataError("Array elements missing ',' delimiter")
        if tokens.previous == ",":
            raise DataError(f"Array is missing element after ',': {tokens.text}")
        raise DataError(f"Array is missing terminating ']': {tokens.text}")

    def _map(self) -> SchemaAndValue:
        tokens = self.tokens
        result: dict[Any, Any] = {}
        keys, values = _Merger(), _Merger()
        while tokens.has_next():
            if tokens.can_consume("}"):
                if keys.schema is not None and values.schema is not None:
                    schema = SchemaBuilder.map(keys.schema, values.schema).build()
                    aligned = {
                        _align(keys.schema, k): _align(values.schema, v) for k, v in result.items()
                    }
                    return SchemaAndValue(schema, aligned)
                if keys.schema is not None:
                    return SchemaAndValue(
                        None, {_align(keys.schema, k): v for k, v in result.items()}
                    )
                return SchemaAndValue(None, result)
            if tokens.can_consume(","):
                raise DataError(f"Unable to parse a map entry with no key or value: {tokens.text}")
            key = self.parse(True)
            if key is None or key.value is None:
                raise DataError(f"Map entry may not have a null key: {tokens.text}")
            if not tokens.can_consume(":"):
                raise DataError(f"Map entry is missing ':' in {tokens.text}")
            value = self.parse(True)
            try:
                result[key.value] = None if value is None else value.value
            except TypeError:
                raise DataError(f"Map key {key.value!r} cannot be a Python dict key") from None
            tokens.can_consume(",")
            keys.merge(key)
            values.merge(value)
        if tokens.previous == ",":
            raise DataError(f"Map is missing element after ',': {tokens.text}")
        raise DataError(f"Map is missing terminating '}}': {tokens.text}")


def parse_string(text: str | None) -> SchemaAndValue:
    """`Values.parseString`: the value (and inferred schema) the text stands for."""
    if text is None:
        return SchemaAndValue.NULL
    if not text:
        return SchemaAndValue(Schema.STRING, text)
    return _Parser(text).parse(False) or SchemaAndValue.NULL
