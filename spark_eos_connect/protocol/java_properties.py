"""Java's `.properties` format as `java.util.Properties.load` reads it (what Connect's
FileConfigProvider reads): `key=value`, `key: value` or `key value`; `#` and `!` comment lines;
a line ending in an odd number of backslashes continues on the next one (its leading blanks
dropped); escapes `\\t \\n \\r \\f \\uXXXX`, and a backslash before any other character keeps that
character. The last of duplicate keys wins.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from spark_eos_connect.errors import ConfigError

BLANKS = " \t\f"
SEPARATORS = "=:"
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_ESCAPED = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def _continues(line: str) -> bool:
    """Whether `line` ends in an odd number of backslashes."""
    return (len(line) - len(line.rstrip("\\"))) % 2 == 1


def logical_lines(text: str) -> Iterator[tuple[int, str]]:
    """(number of the first natural line, logical line) of every entry, comments and blanks
    skipped, continuations joined."""
    lines = _LINE_BREAK.split(text)
    index = 0
    while index < len(lines):
        number, line = index + 1, lines[index].lstrip(BLANKS)
        index += 1
        if not line or line[0] in "#!":
            continue
        while _continues(line):
            line = line[:-1]
            if index >= len(lines):
                break
            line += lines[index].lstrip(BLANKS)
            index += 1
        yield number, line


def split_entry(line: str) -> tuple[str, str]:
    """The raw (still escaped) key and value of a logical line."""
    position, size = 0, len(line)
    while position < size:
        char = line[position]
        if char == "\\":
            position += 2
            continue
        if char in SEPARATORS:
            return line[:position], line[position + 1 :].lstrip(BLANKS)
        if char in BLANKS:
            rest = line[position:].lstrip(BLANKS)
            if rest[:1] and rest[0] in SEPARATORS:
                rest = rest[1:]
            return line[:position], rest.lstrip(BLANKS)
        position += 1
    return line, ""


def unescape(text: str, where: str = "") -> str:
    """`text` with Java's escapes replaced; raises ConfigError on a malformed `\\uXXXX`."""
    if "\\" not in text:
        return text
    out: list[str] = []
    position = 0
    while position < len(text):
        char = text[position]
        position += 1
        if char != "\\":
            out.append(char)
            continue
        if position >= len(text):
            break
        escaped = text[position]
        position += 1
        if escaped == "u":
            digits = text[position : position + 4]
            if len(digits) != 4 or not all(c in "0123456789abcdefABCDEF" for c in digits):
                raise ConfigError(f"Malformed \\uxxxx encoding{where}")
            out.append(chr(int(digits, 16)))
            position += 4
        else:
            out.append(_ESCAPED.get(escaped, escaped))
    return "".join(out)


def parse_properties(text: str, source: str = "") -> dict[str, str]:
    """The entries of a properties text; `source` names it in errors (which never quote it)."""
    entries: dict[str, str] = {}
    for number, line in logical_lines(text):
        key, value = split_entry(line)
        where = f" in {source} line {number}" if source else f" on line {number}"
        entries[unescape(key, where)] = unescape(value, where)
    return entries
