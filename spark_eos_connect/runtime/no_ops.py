"""Why a query would run and do nothing: the mistakes a user does not see (no I/O).

A FileStreamSource whose `file` does not exist reads nothing until it is created (Connect's
task logs that it waits for it); a sink reading a topic that does not exist, or a
`topics.regex` no topic matches, gets nothing either. Each is a warning, said when the job
starts, again while it persists, and as the reason an `--until-idle` job found itself idle.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

FILE_SOURCE_CLASSES = ("FileStreamSourceConnector",)
"""Connector classes (by class name) whose `file` option names the file they read."""


def missing_file_warning(connector_class: str, file: str | None, exists: bool) -> str | None:
    """The warning for a FileStreamSource whose `file` does not exist, else None."""
    if connector_class not in FILE_SOURCE_CLASSES or not file or exists:
        return None
    return (
        f'WARNING: FileStreamSource\'s file "{file}" does not exist: nothing is read until it '
        "is created (check the option file)"
    )


def missing_topic_warnings(
    topics: Sequence[str], regex: str | None, existing: Collection[str]
) -> list[str]:
    """Warnings for the `topics` that do not exist and a `topics.regex` matching none of
    `existing` (internal topics, starting with `__`, are not counted as matches)."""
    warnings = [
        f'WARNING: topic "{topic}" does not exist: nothing is read from it until it is created '
        "(check the option topics)"
        for topic in topics
        if topic not in existing
    ]
    if regex:
        try:
            pattern = re.compile(regex)
        except re.error:
            return warnings  # the reader's own validation names a bad pattern
        matched = [t for t in existing if not t.startswith("__") and pattern.fullmatch(t)]
        if not matched:
            warnings.append(
                f'WARNING: topics.regex "{regex}" matches no topic: nothing is read until a '
                "topic whose whole name matches is created"
            )
    return warnings
