"""Naming options a user may have mistyped: unknown names with a did-you-mean (no I/O).

Connect passes options nobody defines to the connector, which ignores them; the framework only
warns. When a config has problems anyway (a required option missing, say), the unknown names are
the likeliest cause, so they head the error: `fiel` next to "Missing required configuration
"file"" says what happened.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

CUTOFF = 0.6
"""difflib's similarity ratio a known name needs to be suggested."""


def quoted(name: str) -> str:
    """An option name as messages show it: `"name"`."""
    return f'"{name}"'


def closest(name: str, known: Iterable[str]) -> str | None:
    """The known option name `name` is most likely a typo of, or None."""
    candidates = sorted({k for k in known if k != name})
    found = difflib.get_close_matches(name, candidates, n=1, cutoff=CUTOFF)
    if found:
        return found[0]
    lowered = {k.lower(): k for k in candidates}
    found = difflib.get_close_matches(name.lower(), list(lowered), n=1, cutoff=CUTOFF)
    return lowered[found[0]] if found else None


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """`' (did you mean "file"?)'` for a close known name, else `""`."""
    match = closest(name, known)
    return f" (did you mean {quoted(match)}?)" if match else ""


def unknown_option_message(name: str, owner: str, known: Iterable[str]) -> str:
    """The error line for an option defined neither by the framework nor by `owner`."""
    return (
        f"Unknown option {quoted(name)}: defined neither by the framework nor by {owner}"
        f"{did_you_mean(name, known)}"
    )
