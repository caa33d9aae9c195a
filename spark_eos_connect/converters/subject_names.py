"""Subject name strategies: which Schema Registry subject a key or value schema goes under.

Confluent's three, by class name (`io.confluent.kafka.serializers.subject.TopicNameStrategy`)
or short name: `TopicNameStrategy` (`<topic>-key` / `<topic>-value`, the default),
`RecordNameStrategy` (the record's full name) and `TopicRecordNameStrategy`
(`<topic>-<record full name>`).
"""

from __future__ import annotations

from collections.abc import Callable

from spark_eos_connect.errors import ConfigError

__all__ = ["STRATEGIES", "SubjectNameStrategy", "subject_name_strategy"]

SubjectNameStrategy = Callable[[str, bool, str], str]
"""`(topic, is_key, record_name) -> subject`."""

_PACKAGE = "io.confluent.kafka.serializers.subject."


def topic_name(topic: str, is_key: bool, record_name: str) -> str:
    """`<topic>-key` or `<topic>-value`."""
    return f"{topic}-{'key' if is_key else 'value'}"


def record_name(topic: str, is_key: bool, record_name: str) -> str:
    """The record's full name."""
    return record_name


def topic_record_name(topic: str, is_key: bool, record_name: str) -> str:
    """`<topic>-<record full name>`."""
    return f"{topic}-{record_name}"


STRATEGIES: dict[str, SubjectNameStrategy] = {
    "TopicNameStrategy": topic_name,
    "RecordNameStrategy": record_name,
    "TopicRecordNameStrategy": topic_record_name,
}
"""Short name to strategy."""


def subject_name_strategy(name: str, option: str) -> SubjectNameStrategy:
    """The strategy called `name` (Confluent's class name or the short name)."""
    short = name.strip()
    if short.startswith(_PACKAGE):
        short = short[len(_PACKAGE) :]
    found = STRATEGIES.get(short)
    if found is None:
        raise ConfigError(
            f"Invalid value {name!r} for configuration {option}: known strategies are "
            f"{', '.join(_PACKAGE + s for s in STRATEGIES)} (or their short names)"
        )
    return found
