"""Small Java behaviours that Connect's key parsing relies on."""

from __future__ import annotations

import re

from spark_eos_connect.protocol._json import INT32_MAX, INT32_MIN

_JAVA_INT = re.compile(r"[+-]?\d+")


def parse_int(text: str) -> int | None:
    """``Integer.parseInt``: optional sign, BMP Unicode decimal digits, 32-bit range; else None."""
    if not _JAVA_INT.fullmatch(text) or any(ord(ch) > 0xFFFF for ch in text):
        return None
    value = int(text)
    return value if INT32_MIN <= value <= INT32_MAX else None


def split_dash(text: str) -> list[str]:
    """``text.split("-")`` in Java: like Python's, but trailing empty strings are dropped."""
    parts = text.split("-")
    while parts and parts[-1] == "":
        parts.pop()
    return parts
