"""The root cause of a failed job or query, named in one line (no I/O).

A failed query's error text holds Spark's wrappers ("Job aborted", "An error occurred while
calling o152.save", the foreachBatch and Python data source wrappers), the Python worker's
traceback and the JVM's `Caused by:` chain. `root_cause(text)` picks what the user has to act
on: the last error raised in Python code that is not a wrapper, else the JVM's first real
error with its deepest cause.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_RAISED = re.compile(
    r"^(?P<prefix>Caused by: |: )?(?P<name>(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?:Error|Exception))"
    r": (?P<message>.+)$",
    re.M,
)
JVM_PACKAGES = ("org.", "java.", "javax.", "scala.", "io.delta.", "py4j.Py4JException")
WRAPPERS = (
    "An error occurred while calling",
    "An exception was raised by the Python Proxy",
    "An error occurred in the user provided function",
    "Job aborted",
    "[STREAM_FAILED]",
    "[FOREACH_BATCH_USER_FUNCTION_ERROR]",
    "[PYTHON_STREAMING_DATA_SOURCE_RUNTIME_ERROR]",
    "[PYTHON_DATA_SOURCE_ERROR]",
    "Writing job aborted",
)
"""How Spark's and Py4J's wrappers begin their messages: never the root cause."""


@dataclass(frozen=True)
class Raised:
    """One `module.SomeError: message` line of an error text."""

    name: str
    message: str

    @property
    def jvm(self) -> bool:
        """Raised in the JVM (its class is in a Java package)."""
        return self.name.startswith(JVM_PACKAGES)

    @property
    def wrapper(self) -> bool:
        """Spark's or Py4J's wrapper around the real error."""
        return self.message.startswith(WRAPPERS)

    def __str__(self) -> str:
        return f"{self.name.rsplit('.', 1)[-1]}: {self.message.strip()}"


def raised_lines(text: str) -> list[Raised]:
    """Every error line of `text`, in order (Python's, Py4J's `: x.Y: ...` and `Caused by:`)."""
    return [Raised(m["name"], m["message"]) for m in _RAISED.finditer(text)]


def root_cause(text: str) -> str:
    """The error to act on in a failed query's or job's error text: the last Python error
    that is not a wrapper; else the first JVM error that is not one, followed by its deepest
    cause when that differs; all of `text` when it names no error."""
    raised = raised_lines(text)
    if not raised:
        return text
    real = [r for r in raised if not r.wrapper] or raised
    python = [r for r in real if not r.jvm]
    if python:
        return str(python[-1])
    first, deepest = real[0], real[-1]
    if str(first) == str(deepest):
        return str(first)
    return f"{first} (caused by {deepest})"


def error_text(error: BaseException) -> str:
    """`error`'s text and its causes' (`__cause__`, else `__context__`), outermost first; a
    Py4J or PySpark error's text holds the JVM's trace with its `Caused by:` lines."""
    parts: list[str] = []
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        parts.append(f"{type(current).__module__}.{type(current).__qualname__}: {current}")
        current = current.__cause__ or current.__context__
    return "\n".join(parts)


def root_cause_of(error: BaseException) -> str:
    """`root_cause` of `error` and its causes."""
    return root_cause(error_text(error))
