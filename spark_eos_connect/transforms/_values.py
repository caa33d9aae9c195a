"""Date text of Connect's `Values` helper, as Cast and TimestampConverter write it.

`date_format_for` and `java_date_millis` give the text Connect writes for a date value. Connect
uses the JVM's default time zone in those two places; this module assumes UTC. (Literals such
as InsertHeader's `value.literal` are read by `converters.values.parse_string`.)
"""

from __future__ import annotations

import datetime as dt
from typing import Final

from spark_eos_connect.api.data import MS_PER_DAY
from spark_eos_connect.transforms._dateformat import JavaDateFormat

__all__ = ["date_format_for", "format_java_date", "java_date_millis"]

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
        return (value - _EPOCH.date()).days * MS_PER_DAY
    return ((value.hour * 60 + value.minute) * 60 + value.second) * 1000 + value.microsecond // 1000


def date_format_for(millis: int) -> JavaDateFormat:
    """`Values.dateFormatFor`: a time below one day, a date at midnight, else a timestamp."""
    if millis < MS_PER_DAY:
        return _TIME_FORMAT
    if millis % MS_PER_DAY == 0:
        return _DATE_FORMAT
    return _TIMESTAMP_FORMAT


def format_java_date(value: dt.date | dt.time) -> str:
    """The ISO-8601 text Connect writes for a date value (`Values.dateFormatFor(d).format(d)`)."""
    millis = java_date_millis(value)
    return date_format_for(millis).format(millis)
