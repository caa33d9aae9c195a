"""Connect's built-in predicates: TopicNameMatches, HasHeaderKey, RecordIsTombstone."""

from __future__ import annotations

import re
from typing import Any

from spark_eos_connect.api.config import ConfigDef, ConfigType, NonEmptyString
from spark_eos_connect.transforms._jregex import compile_java_regex
from spark_eos_connect.transforms.base import Predicate
from spark_eos_connect.transforms.options import JavaRegex
from spark_eos_connect.transforms.record import ConnectRecord

__all__ = ["HasHeaderKey", "RecordIsTombstone", "TopicNameMatches"]

_PACKAGE = "org.apache.kafka.connect.transforms.predicates."


class _BothChecks:
    """Runs several validators in order (Connect's `CompositeValidator`)."""

    def __init__(self, *checks: Any) -> None:
        self._checks = checks

    def __call__(self, name: str, value: Any) -> None:
        for check in self._checks:
            check(name, value)

    def __str__(self) -> str:
        return ", ".join(str(c) for c in self._checks)


class TopicNameMatches(Predicate):
    """True for records whose topic matches the Java regular expression `pattern` (whole name)."""

    CONNECT_CLASS = _PACKAGE + "TopicNameMatches"
    OVERVIEW = "True for records whose topic name matches the configured regular expression."
    CONFIG_DEF = ConfigDef().define(
        "pattern",
        ConfigType.STRING,
        validator=_BothChecks(NonEmptyString(), JavaRegex()),
        importance="medium",
        doc="A Java regular expression for matching against the name of a record's topic.",
    )
    _CACHE_LIMIT = 4096

    def setup(self, values: dict[str, Any]) -> None:
        self._pattern: re.Pattern[str] = compile_java_regex(values["pattern"])
        self._seen: dict[str, bool] = {}

    def test(self, record: ConnectRecord) -> bool:
        topic = record.topic
        if topic is None:
            return False
        found = self._seen.get(topic)
        if found is None:
            found = self._pattern.fullmatch(topic) is not None
            if len(self._seen) < self._CACHE_LIMIT:
                self._seen[topic] = found
        return found

    def matches_topic(self, topic: str) -> bool:
        """The predicate on a bare topic name (used by the Arrow batch path)."""
        return self._pattern.fullmatch(topic) is not None


class HasHeaderKey(Predicate):
    """True for records with at least one header called `name`."""

    CONNECT_CLASS = _PACKAGE + "HasHeaderKey"
    OVERVIEW = "True for records with at least one header with the configured name."
    CONFIG_DEF = ConfigDef().define(
        "name",
        ConfigType.STRING,
        validator=NonEmptyString(),
        importance="medium",
        doc="The header name.",
    )

    def setup(self, values: dict[str, Any]) -> None:
        self._name: str = values["name"]

    def test(self, record: ConnectRecord) -> bool:
        return any(header.key == self._name for header in record.headers)


class RecordIsTombstone(Predicate):
    """True for records whose value is null."""

    CONNECT_CLASS = _PACKAGE + "RecordIsTombstone"
    OVERVIEW = "True for records which are tombstones (their value is null)."

    def test(self, record: ConnectRecord) -> bool:
        return record.value is None
