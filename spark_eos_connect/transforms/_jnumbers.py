"""Java's number semantics where Connect's transforms expose them.

Narrowing conversions (`(byte) someLong`, `(int) someDouble`), float32 rounding, the strict
parsers (`Integer.parseInt`, `Double.parseDouble`, `new BigDecimal(s)`,
`Boolean.parseBoolean`). `Double.toString`/`Float.toString` come from the converters package
(`converters._java`), so an SMT and a converter print a number the same way: the shortest
digits that read back, as JDK 19 and later do (JDK 17 prints a longer form for rare values,
e.g. `1.70000004E12` for the float nearest 1.7e12).
"""

from __future__ import annotations

import decimal
import math
import re
import struct
from typing import Final

from spark_eos_connect.converters._java import double_to_string, float_to_string

__all__ = [
    "Float32",
    "big_decimal",
    "double_to_string",
    "float_to_string",
    "narrow_int",
    "parse_java_boolean",
    "parse_java_double",
    "parse_java_float",
    "parse_java_int",
    "to_float32",
    "truncate_double",
]

_BITS: Final = {"int8": 8, "int16": 16, "int32": 32, "int64": 64}
_INT_TEXT: Final = re.compile(r"[+-]?[0-9]+")
_BIG_DECIMAL: Final = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_JAVA_FLOAT: Final = re.compile(
    r"[+-]?(?:NaN|Infinity|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)[fFdD]?"
)


class Float32(float):
    """A schemaless float that Connect holds as a Java `Float` (Cast to float32 makes them).

    Its value is already rounded to float32; JSON writers should print it as `Float.toString`
    does (`float_to_string`), which is what JsonConverter writes for a `Float` in a map.
    """

    __slots__ = ()

    def __repr__(self) -> str:
        return f"Float32({float_to_string(self)})"


def wrap(value: int, bits: int) -> int:
    """Keep the low `bits` bits of `value` as a signed integer (Java's integer narrowing)."""
    mask = (1 << bits) - 1
    value &= mask
    return value - (1 << bits) if value >> (bits - 1) else value


def truncate_double(value: float, bits: int) -> int:
    """Java's `(int)`/`(long)` of a double: toward zero, NaN to 0, clamped to the range."""
    if math.isnan(value):
        return 0
    low, high = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    if math.isinf(value):
        return high if value > 0 else low
    return max(low, min(high, int(value)))


def narrow_int(value: int | float, bits: int) -> int:
    """`Number.byteValue()` ... `longValue()`: floats go through int (or long), then wrap."""
    if isinstance(value, float):
        return wrap(truncate_double(value, 64 if bits == 64 else 32), bits)
    return wrap(int(value), bits)


def to_float32(value: float) -> float:
    """Round a double to the nearest float32 (overflow gives an infinity, as in Java)."""
    if math.isnan(value) or math.isinf(value):
        return value
    try:
        return float(struct.unpack("f", struct.pack("f", value))[0])
    except OverflowError:
        return math.copysign(math.inf, value)


def parse_java_int(text: str, bits: int) -> int:
    """`Byte.parseByte` ... `Long.parseLong`: ValueError if not an integer in range."""
    if not _INT_TEXT.fullmatch(text):
        raise ValueError(f'For input string: "{text}"')
    value = int(text)
    if not -(1 << (bits - 1)) <= value < (1 << (bits - 1)):
        raise ValueError(f'Value out of range. Value:"{text}"')
    return value


def parse_java_double(text: str) -> float:
    """`Double.parseDouble`: surrounding whitespace ignored, Java's literal syntax only."""
    stripped = text.strip(" \t\n\r\x0b\x0c\x00")
    if not _JAVA_FLOAT.fullmatch(stripped):
        raise ValueError(f'For input string: "{text}"')
    body = stripped.rstrip("fFdD")
    return float(body.replace("Infinity", "inf"))


def parse_java_float(text: str) -> float:
    """`Float.parseFloat`."""
    return to_float32(parse_java_double(text))


def parse_java_boolean(text: str) -> bool:
    """`Boolean.parseBoolean`: true for "true" in any case, false for anything else."""
    return text.lower() == "true"


def big_decimal(text: str) -> decimal.Decimal:
    """`new BigDecimal(text)`: ValueError unless it is a plain decimal literal."""
    if not _BIG_DECIMAL.fullmatch(text):
        raise ValueError(f"Character array is not a valid decimal number: {text!r}")
    return decimal.Decimal(text)


def big_decimal_to_long(value: decimal.Decimal) -> int:
    """`BigDecimal.longValue()`: the integer part, wrapped to 64 bits."""
    return wrap(int(value), 64)
