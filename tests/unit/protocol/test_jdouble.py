"""Java's Double.toString digits and layout, shared by the JSON writer and the converters."""

from __future__ import annotations

import pytest

from spark_eos_connect.converters._java import float32, float_to_string
from spark_eos_connect.protocol._jdouble import java_double_to_string, java_layout


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1.0, "1.0"),
        (-0.0, "-0.0"),
        (0.001, "0.001"),
        (0.0001, "1.0E-4"),
        (1e7, "1.0E7"),
        (1234567.0, "1234567.0"),
        (5e-324, "4.9E-324"),  # two digits closer to the exact value than one
        (1.7976931348623157e308, "1.7976931348623157E308"),
    ],
)
def test_doubles_are_written_as_java_writes_them(value: float, text: str) -> None:
    assert java_double_to_string(value) == text


def test_floats_read_back_in_single_precision() -> None:
    assert float_to_string(float32(0.1)) == "0.1"
    assert float_to_string(float32(1.4e-45)) == "1.4E-45"  # the two-digit rule, as a float
    assert java_double_to_string(float32(0.1)) == "0.10000000149011612"


def test_layout_switches_to_e_notation_outside_1e_3_to_1e7() -> None:
    assert java_layout(False, "12", 6) == "1200000.0"
    assert java_layout(True, "12", 7) == "-1.2E7"
    assert java_layout(False, "5", -3) == "0.005"
    assert java_layout(False, "5", -4) == "5.0E-4"
