"""Text and binary forms of numbers exactly as the JVM writes them (for byte-exact converters).

`float32` rounds a Python float to the nearest single-precision value; `float_to_string` and
`double_to_string` are Java's `Float.toString`/`Double.toString` (shortest digits that read back
to the same value, at least one digit after the point, `E` notation below 1e-3 and from 1e7);
`decimal_to_string` is `BigDecimal.toString`. Non-finite values are `NaN`, `Infinity`, `-Infinity`.
"""

from __future__ import annotations

import decimal
import math
import struct

from spark_eos_connect.protocol._jdouble import (
    closer_two_digits,
    java_double_to_string,
    java_layout,
)

FLOAT32_MAX = struct.unpack(">f", bytes.fromhex("7f7fffff"))[0]


def float32(value: float) -> float:
    """`value` rounded to single precision; OverflowError if it is finite but too large."""
    return float(struct.unpack(">f", struct.pack(">f", value))[0])


def _reads_back(text_value: float, value: float) -> bool:
    """True when the decimal candidate rounds to the single-precision `value`."""
    try:
        return float32(text_value) == value
    except OverflowError:
        return False


def _shortest_float32_digits(value: float) -> tuple[str, int]:
    """The fewest significant digits (and scientific exponent) that read back as `value`."""
    for precision in range(1, 10):
        text = f"{value:.{precision - 1}e}"
        if _reads_back(float(text), value):
            mantissa, _, exp = text.partition("e")
            digits = mantissa.replace(".", "").rstrip("0") or "0"
            return digits, int(exp)
    raise AssertionError(f"no float32 digits for {value!r}")  # pragma: no cover


def float_to_string(value: float) -> str:
    """Java's `Float.toString` of the single-precision `value` (finite or not)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0.0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    digits, exponent = _shortest_float32_digits(abs(value))
    if len(digits) == 1:
        magnitude = abs(value)
        digits, exponent = closer_two_digits(
            magnitude, digits, exponent, lambda candidate: _reads_back(candidate, magnitude)
        )
    return java_layout(value < 0, digits, exponent)


def double_to_string(value: float) -> str:
    """Java's `Double.toString` (finite or not)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return java_double_to_string(value)


def decimal_to_string(value: decimal.Decimal) -> str:
    """Java's `BigDecimal.toString` (the same scientific-string rules; no negative zero)."""
    if value.is_zero() and value.is_signed():
        value = value.copy_negate()
    return str(value)
