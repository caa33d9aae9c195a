"""Java's `Double.toString`, and the digit rules it shares with `Float.toString`.

Java writes the shortest decimal digits that read back to the same value (JDK 19+), prefers two
digits over one when they are closer to the exact value, and lays them out with at least one
digit after the point, in `E` notation below 1e-3 and from 1e7. `converters._java` builds
`Float.toString` from the same pieces with single-precision read-back.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction


def java_layout(negative: bool, digits: str, exponent: int) -> str:
    """Java's layout of `d1.d2d3... * 10**exponent` (`digits` without leading or trailing
    zeros, `exponent` scientific)."""
    sign = "-" if negative else ""
    point = exponent + 1
    if -3 <= exponent < 7:
        if point <= 0:
            return f"{sign}0.{'0' * -point}{digits}"
        if point >= len(digits):
            return f"{sign}{digits}{'0' * (point - len(digits))}.0"
        return f"{sign}{digits[:point]}.{digits[point:]}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{exponent}"


def closer_two_digits(
    value: float, digit: str, exponent: int, reads_back: Callable[[float], bool]
) -> tuple[str, int]:
    """Java picks a 2-digit decimal over the 1-digit one when it is closer to the exact
    `value` (e.g. 4.9E-324) and `reads_back` (to the same double, or the same float)."""
    exact = Fraction(value)
    best_digits, best_exponent = digit, exponent
    best_distance = abs(int(digit) * Fraction(10) ** exponent - exact)
    for scale_exponent in (exponent - 2, exponent - 1):
        scale = Fraction(10) ** scale_exponent
        two = round(exact / scale)
        candidate = two * scale
        distance = abs(candidate - exact)
        if 10 <= two <= 99 and distance < best_distance and reads_back(float(candidate)):
            best_digits, best_exponent, best_distance = str(two), scale_exponent + 1, distance
    return best_digits.rstrip("0") or "0", best_exponent


def java_double_to_string(value: float) -> str:
    """Format a finite double like Java's ``Double.toString`` (JDK 19+, shortest digits)."""
    if not math.isfinite(value):
        raise ValueError(f"non-finite number {value!r} cannot be written as JSON")
    if value == 0.0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    mantissa, _, exp_text = repr(abs(value)).partition("e")
    whole, _, frac = mantissa.partition(".")
    all_digits = whole + frac
    # The value is 0.<digits> * 10**point once leading and trailing zeros are dropped.
    point = len(whole) + int(exp_text or "0")
    significant = all_digits.lstrip("0")
    point -= len(all_digits) - len(significant)
    digits = significant.rstrip("0")
    exponent = point - 1  # scientific exponent: d.ddd * 10**exponent
    if len(digits) == 1:
        magnitude = abs(value)
        digits, exponent = closer_two_digits(
            magnitude, digits, exponent, lambda candidate: candidate == magnitude
        )
    return java_layout(value < 0, digits, exponent)
