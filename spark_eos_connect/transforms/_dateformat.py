"""Java's `SimpleDateFormat` in UTC and the English locale, for TimestampConverter and friends.

Connect formats and parses timestamps with `new SimpleDateFormat(pattern)` set to UTC. This
module reads the same patterns (letters `GyYMLwWDdFEuaHkKhmsSzZX`, quoted text with `''` for a
quote, any other character literal; other letters refused as Java does) and formats an epoch
millisecond exactly as the JVM does in an English locale (weeks start on Sunday, the first week
of a year is the one holding 1 January).

Parsing is lenient like Java's default: leading spaces before a field are skipped, numeric fields
take as many digits as there are unless the next field is numeric too (then the pattern's width),
out-of-range values roll over (month 13 is January of the next year), text after the last field
is ignored, a two-digit `yy` year falls within 80 years before and 20 after now. Day names are
matched but do not move the date; the week-based letters (`Y w W F u`) cannot be parsed and are
refused with a message. Dates use the proleptic Gregorian calendar (Java switches to the Julian
calendar before 15 October 1582) within Python's years 1 to 9999.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

from spark_eos_connect.api.data import MS_PER_DAY

__all__ = ["DateFormatError", "JavaDateFormat", "UnparseableDateError"]

_LETTERS: Final = "GyYMLwWDdFEuaHkKhmsSzZX"
_NUMERIC: Final = set("yYwWDdFuHkKhmsS")
_MONTHS: Final = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
_DAYS: Final = ("Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")


class DateFormatError(ValueError):
    """A pattern `SimpleDateFormat` would refuse (Java's `IllegalArgumentException`)."""


class UnparseableDateError(ValueError):
    """Text that does not match the pattern (Java's `ParseException`)."""


@dataclass(frozen=True)
class _Field:
    letter: str
    count: int


_Token = _Field | str


def _compile(pattern: str) -> list[_Token]:
    tokens: list[_Token] = []
    literal: list[str] = []
    i = 0
    n = len(pattern)
    while i < n:
        c = pattern[i]
        if c == "'":
            if i + 1 < n and pattern[i + 1] == "'":
                literal.append("'")
                i += 2
                continue
            end = i + 1
            text: list[str] = []
            while True:
                if end >= n:
                    raise DateFormatError("Unterminated quote")
                if pattern[end] == "'":
                    if end + 1 < n and pattern[end + 1] == "'":
                        text.append("'")
                        end += 2
                        continue
                    break
                text.append(pattern[end])
                end += 1
            literal.extend(text)
            i = end + 1
            continue
        if c.isascii() and c.isalpha():
            if c not in _LETTERS:
                raise DateFormatError(f"Illegal pattern character '{c}'")
            end = i
            while end < n and pattern[end] == c:
                end += 1
            if literal:
                tokens.append("".join(literal))
                literal = []
            tokens.append(_Field(c, end - i))
            i = end
            continue
        literal.append(c)
        i += 1
    if literal:
        tokens.append("".join(literal))
    return tokens


def _pad(value: int, width: int) -> str:
    text = str(abs(value)).rjust(width, "0")
    return "-" + text if value < 0 else text


_GREGORIAN_START: Final = -141427
"""1582-10-15, the first Gregorian day of `GregorianCalendar` (earlier days are Julian)."""


def _days_from_gregorian(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (astronomical year: 0 is 1 BC)."""
    y = year - (month <= 2)
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _gregorian_from_days(days: int) -> tuple[int, int, int]:
    z = days + 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + (3 if mp < 10 else -9)
    return yoe + era * 400 + (month <= 2), month, day


def _days_from_julian(year: int, month: int, day: int) -> int:
    y = year - (month <= 2)
    m = month + (9 if month <= 2 else -3)
    return 365 * y + y // 4 + (153 * m + 2) // 5 + day - 719471


def _julian_from_days(days: int) -> tuple[int, int, int]:
    z = days + 719470
    y = (4 * z + 3) // 1461
    doy = z - (365 * y + y // 4)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + (3 if mp < 10 else -9)
    return y + (month <= 2), month, day


def days_from_date(year: int, month: int, day: int) -> int:
    """Epoch days of a date as `GregorianCalendar` reads it (Julian before 15 October 1582)."""
    days = _days_from_gregorian(year, month, day)
    return days if days >= _GREGORIAN_START else _days_from_julian(year, month, day)


def date_from_days(days: int) -> tuple[int, int, int]:
    """(astronomical year, month, day) of epoch `days` in `GregorianCalendar`'s calendar."""
    return _gregorian_from_days(days) if days >= _GREGORIAN_START else _julian_from_days(days)


def _weekday(days: int) -> int:
    """0 for Sunday ... 6 for Saturday (1970-01-01 was a Thursday)."""
    return (days + 4) % 7


def _week_of_year(days: int, year: int) -> tuple[int, int]:
    """(week-based year, week of year) with Sunday-first weeks, week 1 holding 1 January."""
    start = days - _weekday(days)
    if start + 6 >= days_from_date(year + 1, 1, 1):
        return year + 1, 1
    new_year = days_from_date(year, 1, 1)
    return year, (start - (new_year - _weekday(new_year))) // 7 + 1


class JavaDateFormat:
    """One `SimpleDateFormat` pattern, in UTC; raises `DateFormatError` for a bad pattern."""

    __slots__ = ("_pattern", "_tokens")

    def __init__(self, pattern: str) -> None:
        self._pattern = pattern
        self._tokens = _compile(pattern)

    @property
    def pattern(self) -> str:
        """The pattern as given (Java's `toPattern()`)."""
        return self._pattern

    # --- formatting ---------------------------------------------------------------------------

    def format(self, epoch_ms: int) -> str:
        """The text Java writes for the instant `epoch_ms` (milliseconds since the epoch, UTC)."""
        days, ms_of_day = divmod(epoch_ms, MS_PER_DAY)
        return "".join(
            t if isinstance(t, str) else self._format_field(t, days, ms_of_day)
            for t in self._tokens
        )

    @staticmethod
    def _format_field(field: _Field, days: int, ms_of_day: int) -> str:
        letter, count = field.letter, field.count
        year, month, day = date_from_days(days)
        hour, rest = divmod(ms_of_day, 3_600_000)
        minute, rest = divmod(rest, 60_000)
        second, millis = divmod(rest, 1000)
        if letter == "G":
            return "AD" if year > 0 else "BC"
        if letter in "yY":
            shown = year if letter == "y" else _week_of_year(days, year)[0]
            shown = shown if shown > 0 else 1 - shown
            return _pad(shown % 100, 2) if count == 2 else _pad(shown, count)
        if letter in "ML":
            if count >= 4:
                return _MONTHS[month - 1]
            if count == 3:
                return _MONTHS[month - 1][:3]
            return _pad(month, count)
        if letter == "E":
            name = _DAYS[_weekday(days)]
            return name if count >= 4 else name[:3]
        if letter == "a":
            return "AM" if hour < 12 else "PM"
        if letter in "zZX":
            if letter == "z":
                return "Coordinated Universal Time" if count >= 4 else "UTC"
            return "+0000" if letter == "Z" else "Z"
        number = {
            "w": lambda: _week_of_year(days, year)[1],
            "W": lambda: (day - 1 + _weekday(days - day + 1)) // 7 + 1,
            "D": lambda: days - days_from_date(year, 1, 1) + 1,
            "d": lambda: day,
            "F": lambda: (day - 1) // 7 + 1,
            "u": lambda: (_weekday(days) + 6) % 7 + 1,
            "H": lambda: hour,
            "k": lambda: hour or 24,
            "K": lambda: hour % 12,
            "h": lambda: hour % 12 or 12,
            "m": lambda: minute,
            "s": lambda: second,
            "S": lambda: millis,
        }[letter]()
        return _pad(number, count)

    # --- parsing ------------------------------------------------------------------------------

    def parse(self, text: str) -> int:
        """Epoch milliseconds of `text`; `UnparseableDateError` if it does not match."""
        result, consumed = self.parse_prefix(text)
        if result is None or consumed == 0:
            raise UnparseableDateError(f'Unparseable date: "{text}"')
        return result

    def parse_prefix(self, text: str) -> tuple[int | None, int]:
        """Parse from the start of `text`: (epoch ms or None on failure, characters used)."""
        state = _ParseState()
        pos = 0
        tokens = self._tokens
        for index, token in enumerate(tokens):
            if isinstance(token, str):
                if not text.startswith(token, pos):
                    return None, 0
                pos += len(token)
                continue
            following = tokens[index + 1] if index + 1 < len(tokens) else None
            abutting = isinstance(following, _Field) and (
                following.letter in _NUMERIC or (following.letter in "ML" and following.count < 3)
            )
            new_pos = state.read(token, text, pos, abutting)
            if new_pos is None:
                return None, 0
            pos = new_pos
        return state.epoch_ms(), pos


class _ParseState:
    """The fields read so far and how they combine (lenient, like `GregorianCalendar`)."""

    def __init__(self) -> None:
        self.year = 1970
        self.two_digit_year = False
        self.month = 0
        self.day: int | None = None
        self.day_of_year: int | None = None
        self.hour_of_day: int | None = None
        self.hour12: int | None = None
        self.pm: bool | None = None
        self.minute = 0
        self.second = 0
        self.millis = 0
        self.offset_ms = 0
        self.bc = False

    def read(self, field: _Field, text: str, pos: int, abutting: bool) -> int | None:
        while pos < len(text) and text[pos] in " \t":
            pos += 1
        letter, count = field.letter, field.count
        if letter in "YwWFu":
            raise UnparseableDateError(
                f"pattern letter '{letter}' (week-based fields) is not supported for parsing"
            )
        if letter == "G":
            return self._read_text(text, pos, ("AD", "BC"), self._set_era)
        if letter in "ML" and count >= 3:
            names = [*_MONTHS, *(m[:3] for m in _MONTHS)]
            return self._read_text(text, pos, names, self._set_month_name)
        if letter == "E":
            names = [*_DAYS, *(d[:3] for d in _DAYS)]
            return self._read_text(text, pos, names, lambda _: None)
        if letter == "a":
            return self._read_text(text, pos, ("AM", "PM"), self._set_am_pm)
        if letter in "zZX":
            return self._read_zone(letter, text, pos)
        end = pos
        limit = pos + count if abutting else len(text)
        while end < min(limit, len(text)) and text[end].isascii() and text[end].isdigit():
            end += 1
        if end == pos:
            return None
        value = int(text[pos:end])
        if letter == "y":
            if count <= 2 and end - pos == 2:
                self.two_digit_year = True
            self.year = value
        elif letter in "ML":
            self.month = value - 1
        elif letter == "d":
            self.day = value
        elif letter == "D":
            self.day_of_year = value
        elif letter == "H":
            self.hour_of_day = value
        elif letter == "k":
            self.hour_of_day = 0 if value == 24 else value
        elif letter == "K":
            self.hour12 = value
        elif letter == "h":
            self.hour12 = 0 if value == 12 else value
        elif letter == "m":
            self.minute = value
        elif letter == "s":
            self.second = value
        elif letter == "S":
            self.millis = value
        return end

    @staticmethod
    def _read_text(
        text: str, pos: int, names: Sequence[str], apply: Callable[[str], None]
    ) -> int | None:
        best = ""
        folded = text[pos:].casefold()
        for name in names:
            if folded.startswith(name.casefold()) and len(name) > len(best):
                best = name
        if not best:
            return None
        apply(best)
        return pos + len(best)

    def _set_era(self, name: str) -> None:
        self.bc = name == "BC"

    def _set_month_name(self, name: str) -> None:
        self.month = [m[: len(name)] for m in _MONTHS].index(name)

    def _set_am_pm(self, name: str) -> None:
        self.pm = name == "PM"

    _OFFSET = re.compile(r"([+-])(\d{2}):?(\d{2})?")

    def _read_zone(self, letter: str, text: str, pos: int) -> int | None:
        rest = text[pos:]
        if letter == "X" and rest.startswith("Z"):
            self.offset_ms = 0
            return pos + 1
        for name in ("UTC", "GMT"):
            if letter != "X" and rest.upper().startswith(name):
                pos += len(name)
                rest = text[pos:]
                match = self._OFFSET.match(rest)
                if match is None:
                    self.offset_ms = 0
                    return pos
                return self._apply_offset(match, pos)
        match = self._OFFSET.match(rest)
        if match is None:
            return None
        return self._apply_offset(match, pos)

    def _apply_offset(self, match: re.Match[str], pos: int) -> int:
        sign = -1 if match.group(1) == "-" else 1
        minutes = int(match.group(2)) * 60 + int(match.group(3) or 0)
        self.offset_ms = sign * minutes * 60_000
        return pos + match.end()

    def epoch_ms(self) -> int:
        year = self.year
        if self.two_digit_year:
            start = dt.datetime.now(dt.UTC).year - 80
            year += (start // 100) * 100
            if year < start:
                year += 100
        if self.bc:
            year = 1 - year
        year += self.month // 12
        month = self.month % 12
        if self.day_of_year is not None and self.day is None:
            days = days_from_date(year, 1, 1) + self.day_of_year - 1
        else:
            days = days_from_date(year, month + 1, 1) + (self.day or 1) - 1
        if self.hour_of_day is not None:
            hour = self.hour_of_day
        else:
            hour = (self.hour12 or 0) + (12 if self.pm else 0)
        ms = ((hour * 60 + self.minute) * 60 + self.second) * 1000 + self.millis
        return days * MS_PER_DAY + ms - self.offset_ms
