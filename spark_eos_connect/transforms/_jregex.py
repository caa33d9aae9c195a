"""Java regular expressions and replacement strings, as RegexRouter and TopicNameMatches use them.

Connect compiles `regex`/`pattern` options with `java.util.regex.Pattern` and rewrites topics
with `Matcher.replaceFirst`. Python's `re` reads most Java patterns the same way; this module
translates the differences that matter for topic names (`(?<name>...)` groups, `\\Q...\\E`
quoting, `\\z`/`\\Z`, the POSIX `\\p{...}` classes, `\\h`), matches ASCII-only like Java's
defaults, and refuses what it cannot translate (class intersections `&&`, other `\\p{...}`
properties) with a message naming it. Replacement strings follow Java's rules: `$n` and
`${name}` refer to groups, a backslash takes the next character literally.
"""

from __future__ import annotations

import re
from typing import Final

from spark_eos_connect.errors import ConfigError

__all__ = ["JavaPatternError", "compile_java_regex", "java_replacement"]

_POSIX: Final[dict[str, str]] = {
    "Lower": "a-z",
    "Upper": "A-Z",
    "ASCII": "\\x00-\\x7f",
    "Alpha": "a-zA-Z",
    "Digit": "0-9",
    "Alnum": "a-zA-Z0-9",
    "Punct": "!-/:-@\\[-`{-~",
    "Graph": "!-~",
    "Print": " -~",
    "Blank": " \\t",
    "Cntrl": "\\x00-\\x1f\\x7f",
    "XDigit": "0-9a-fA-F",
    "Space": " \\t\\n\\x0b\\f\\r",
}
_HORIZONTAL_SPACE: Final = " \\t\\xa0\\u1680\\u180e\\u2000-\\u200a\\u202f\\u205f\\u3000"


class JavaPatternError(ConfigError):
    """A Java regular expression this module cannot compile."""


def _translate(pattern: str) -> str:
    out: list[str] = []
    i = 0
    in_class = 0
    n = len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            nxt = pattern[i + 1]
            if nxt == "Q":
                end = pattern.find("\\E", i + 2)
                literal = pattern[i + 2 :] if end < 0 else pattern[i + 2 : end]
                out.append(re.escape(literal))
                i = n if end < 0 else end + 2
                continue
            if nxt in "pP" and i + 2 < n:
                if pattern[i + 2] == "{":
                    close = pattern.find("}", i + 3)
                    name = pattern[i + 3 : close] if close > 0 else ""
                    i_next = close + 1
                else:
                    name = pattern[i + 2]
                    i_next = i + 3
                name = name.removeprefix("Is")
                if name not in _POSIX:
                    raise JavaPatternError(
                        f"the character class \\{nxt}{{{name}}} is not supported"
                    )
                chars = _POSIX[name]
                negate = nxt == "P"
                if in_class:
                    if negate:
                        raise JavaPatternError(f"\\P{{{name}}} inside [...] is not supported")
                    out.append(chars)
                else:
                    out.append(f"[{'^' if negate else ''}{chars}]")
                i = i_next
                continue
            if nxt == "h":
                out.append(_HORIZONTAL_SPACE if in_class else f"[{_HORIZONTAL_SPACE}]")
                i += 2
                continue
            if nxt == "z" and not in_class:
                out.append("\\Z")
                i += 2
                continue
            if nxt == "Z" and not in_class:
                out.append("(?=\\n?\\Z)")
                i += 2
                continue
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if in_class:
            if c == "[":
                raise JavaPatternError("nested character classes [..[..]..] are not supported")
            if c == "&" and pattern.startswith("&&", i):
                raise JavaPatternError("character class intersections (&&) are not supported")
            if c == "]":
                in_class = 0
            out.append(c)
            i += 1
            continue
        if c == "[":
            in_class = 1
            out.append(c)
            i += 1
            # A ']' right after '[' or '[^' is a literal in both dialects.
            if i < n and pattern[i] == "^":
                out.append("^")
                i += 1
            if i < n and pattern[i] == "]":
                out.append("\\]")
                i += 1
            continue
        if pattern.startswith("(?<", i) and i + 3 < n and pattern[i + 3] not in "=!":
            out.append("(?P<")
            i += 3
            continue
        out.append(c)
        i += 1
    return "".join(out)


def compile_java_regex(pattern: str) -> re.Pattern[str]:
    """Compile a Java regular expression; `JavaPatternError` says what is wrong or unsupported."""
    try:
        return re.compile(_translate(pattern), re.ASCII)
    except re.error as error:
        raise JavaPatternError(str(error)) from None


def java_replacement(replacement: str, pattern: re.Pattern[str]) -> list[str | int]:
    """Parse a `Matcher.replaceFirst` replacement into literal parts and group references.

    A group reference is the group's number (named groups resolved through `pattern`). Raises
    `JavaPatternError` where Java would throw (a trailing backslash, `$` not followed by a group,
    a group the pattern does not have).
    """
    parts: list[str | int] = []
    literal: list[str] = []
    groups = pattern.groups
    i = 0
    n = len(replacement)
    while i < n:
        c = replacement[i]
        if c == "\\":
            i += 1
            if i >= n:
                raise JavaPatternError("character to be escaped is missing")
            literal.append(replacement[i])
            i += 1
            continue
        if c != "$":
            literal.append(c)
            i += 1
            continue
        i += 1
        if i >= n:
            raise JavaPatternError("Illegal group reference: group index is missing")
        if replacement[i] == "{":
            close = replacement.find("}", i)
            if close < 0:
                raise JavaPatternError("named capturing group is missing trailing '}'")
            name = replacement[i + 1 : close]
            if not name or not (name[0].isascii() and name[0].isalpha()):
                raise JavaPatternError(f"named capturing group has an invalid name {name!r}")
            if name not in pattern.groupindex:
                raise JavaPatternError(f"No group with name {{{name}}}")
            number = pattern.groupindex[name]
            i = close + 1
        else:
            if not replacement[i].isdigit() or not replacement[i].isascii():
                raise JavaPatternError("Illegal group reference")
            number = int(replacement[i])
            if number > groups:
                raise JavaPatternError(f"No group {number}")
            i += 1
            # Java takes more digits while the number still names an existing group.
            while i < n and replacement[i].isascii() and replacement[i].isdigit():
                longer = number * 10 + int(replacement[i])
                if longer > groups:
                    break
                number = longer
                i += 1
        if literal:
            parts.append("".join(literal))
            literal = []
        parts.append(number)
    if literal:
        parts.append("".join(literal))
    return parts


def expand(parts: list[str | int], match: re.Match[str]) -> str:
    """The replacement text for one match (an unmatched group adds nothing, as in Java)."""
    return "".join(p if isinstance(p, str) else (match.group(p) or "") for p in parts)
