r"""Compact JSON exactly as Kafka Connect's JsonConverter (Jackson) writes it, and a strict reader.

Connect looks records up by their raw bytes, so the writer must reproduce Jackson's output byte for
byte: no whitespace; BMP characters as raw UTF-8, but characters beyond the BMP as two escaped
UTF-16 surrogates (``\uD83D\uDE00``: Jackson's UTF-8 generator default); the short escapes
``\"``, ``\\``, ``\b``, ``\t``, ``\n``, ``\f``, ``\r``; other control characters as
``\u00XX``; hex digits upper-case; doubles in Java's ``Double.toString`` form (``1.0E10``,
``0.001``), with the shortest digits as on JDK 19+ (JDK 17 prints a few values with more digits).
Errors are raised as plain `ValueError`; the public modules wrap them in their own error classes.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from spark_eos_connect.protocol._jdouble import java_double_to_string

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1

_SHORT_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\f": "\\f",
    "\r": "\\r",
}


def _escape_char(ch: str) -> str:
    short = _SHORT_ESCAPES.get(ch)
    if short is not None:
        return short
    code = ord(ch)
    if code < 0x20:
        return f"\\u{code:04X}"
    if 0xD800 <= code <= 0xDFFF:
        raise ValueError(f"string contains a lone surrogate U+{code:04X}")
    if code > 0xFFFF:
        # Jackson's UTF-8 generator escapes each UTF-16 surrogate of a supplementary character.
        code -= 0x10000
        return f"\\u{0xD800 | (code >> 10):04X}\\u{0xDC00 | (code & 0x3FF):04X}"
    return ch


_ESCAPED = re.compile('[\x00-\x1f"\\\\\ud800-\udfff\U00010000-\U0010ffff]')
"""The characters `_escape_char` changes (or rejects); every other one is written as it is."""


def _escape_match(match: re.Match[str]) -> str:
    return _escape_char(match.group())


def quote(text: str) -> str:
    """Return `text` as a JSON string literal, escaped the way Jackson escapes it."""
    if _ESCAPED.search(text) is None:
        return '"' + text + '"'
    return '"' + _ESCAPED.sub(_escape_match, text) + '"'


def dumps(value: Any) -> str:
    """Serialize str/int/float/bool/None, sequences and string-keyed mappings as compact JSON.

    Mapping keys are written in the mapping's own iteration order.
    """
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return quote(value)
    if isinstance(value, int):
        if not INT64_MIN <= value <= INT64_MAX:
            raise ValueError(f"integer {value} does not fit in a Java long")
        return str(int(value))
    if isinstance(value, float):
        return java_double_to_string(value)
    if isinstance(value, Mapping):
        parts = []
        for key, item in value.items():
            if not isinstance(key, str):
                raise ValueError(f"object key {key!r} is not a string")
            parts.append(quote(key) + ":" + dumps(item))
        return "{" + ",".join(parts) + "}"
    if isinstance(value, Sequence) and not isinstance(value, bytes | bytearray):
        return "[" + ",".join(dumps(item) for item in value) + "]"
    raise ValueError(f"value of type {type(value).__name__} cannot be written as JSON")


def dumps_bytes(value: Any) -> bytes:
    """`dumps` encoded as UTF-8."""
    return dumps(value).encode("utf-8")


def _reject_constant(name: str) -> Any:
    raise ValueError(f"non-standard JSON constant {name}")


def _parse_float(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise ValueError(f"number {text} is out of range for a double")
    return number


def loads(raw: bytes) -> Any:
    """Parse UTF-8 JSON strictly (no NaN/Infinity, no overflowing doubles)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"not valid UTF-8: {exc}") from exc
    try:
        return json.loads(text, parse_constant=_reject_constant, parse_float=_parse_float)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON: {exc}") from exc


def is_int(value: object) -> bool:
    """True for a JSON integer (a Python int that is not a bool)."""
    return isinstance(value, int) and not isinstance(value, bool)


def type_name(value: object) -> str:
    """A short JSON-ish name of `value`'s type for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__
