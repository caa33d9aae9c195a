"""Where a record goes: RegexRouter and TimestampRouter rename its topic, Filter drops it."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from spark_eos_connect.api.config import ConfigDef, ConfigType
from spark_eos_connect.errors import DataError
from spark_eos_connect.transforms._dateformat import DateFormatError, JavaDateFormat
from spark_eos_connect.transforms._jregex import (
    JavaPatternError,
    compile_java_regex,
    expand,
    java_replacement,
)
from spark_eos_connect.transforms.base import Transformation
from spark_eos_connect.transforms.options import JavaRegex, invalid
from spark_eos_connect.transforms.record import ConnectRecord

__all__ = ["Filter", "RegexRouter", "TimestampRouter"]

_PACKAGE = "org.apache.kafka.connect.transforms."


class RegexRouter(Transformation):
    """Renames the topic when the whole name matches `regex`: `replaceFirst(replacement)`.

    The replacement follows Java's syntax (`$1`, `${name}`, `\\$` for a dollar). Unlike Connect,
    a replacement that names a group the regex lacks is refused at configuration time.
    """

    CONNECT_CLASS = _PACKAGE + "RegexRouter"
    OVERVIEW = (
        "Update the record topic using the configured regular expression and replacement string "
        "(Java's Matcher.replaceFirst, applied when the whole topic matches)."
    )
    CONFIG_DEF = (
        ConfigDef()
        .define(
            "regex",
            ConfigType.STRING,
            validator=JavaRegex(),
            importance="high",
            doc="Regular expression to use for matching.",
        )
        .define("replacement", ConfigType.STRING, importance="high", doc="Replacement string.")
    )
    _CACHE_LIMIT = 4096

    @classmethod
    def cross_check(cls, values: Mapping[str, Any], prefix: str) -> list[tuple[str, str]]:
        try:
            java_replacement(values["replacement"], compile_java_regex(values["regex"]))
        except JavaPatternError as error:
            key = prefix + "replacement"
            return [(key, f"Invalid value {values['replacement']!r} for {key}: {error}")]
        return []

    def setup(self, values: dict[str, Any]) -> None:
        self._regex: re.Pattern[str] = compile_java_regex(values["regex"])
        self._parts = java_replacement(values["replacement"], self._regex)
        self._routes: dict[str, str | None] = {}

    def route(self, topic: str) -> str | None:
        """The new topic name, or None when `topic` does not match (remembered per topic)."""
        if topic in self._routes:
            return self._routes[topic]
        routed = None
        if self._regex.fullmatch(topic) is not None:
            routed = self._regex.sub(lambda m: expand(self._parts, m), topic, count=1)
        if len(self._routes) < self._CACHE_LIMIT:
            self._routes[topic] = routed
        return routed

    def apply(self, record: ConnectRecord) -> ConnectRecord | None:
        routed = self.route(record.topic)
        return record if routed is None else record.new_record(topic=routed)


class _DateFormatCheck:
    """The option must be a `SimpleDateFormat` pattern."""

    def __call__(self, name: str, value: Any) -> None:
        try:
            JavaDateFormat(value)
        except DateFormatError as error:
            raise invalid(name, value, f"not a SimpleDateFormat pattern: {error}") from None

    def __str__(self) -> str:
        return "java.text.SimpleDateFormat pattern"


class TimestampRouter(Transformation):
    """Renames the topic from `topic.format`, with `${topic}` and `${timestamp}` filled in."""

    CONNECT_CLASS = _PACKAGE + "TimestampRouter"
    OVERVIEW = (
        "Update the record's topic as a function of the original topic and the record timestamp "
        "(useful for sink connectors that map topics to tables or indexes)."
    )
    CONFIG_DEF = (
        ConfigDef()
        .define(
            "topic.format",
            ConfigType.STRING,
            "${topic}-${timestamp}",
            importance="high",
            doc="Format string which can contain ${topic} and ${timestamp} as placeholders for "
            "the topic and timestamp, respectively.",
        )
        .define(
            "timestamp.format",
            ConfigType.STRING,
            "yyyyMMdd",
            validator=_DateFormatCheck(),
            importance="high",
            doc="Format string for the timestamp that is compatible with "
            "java.text.SimpleDateFormat (in UTC).",
        )
    )

    def setup(self, values: dict[str, Any]) -> None:
        self._topic_format: str = values["topic.format"]
        self._format = JavaDateFormat(values["timestamp.format"])

    def apply(self, record: ConnectRecord) -> ConnectRecord | None:
        if record.timestamp is None:
            raise DataError(f"Timestamp missing on record: {record!r}")
        stamp = self._format.format(record.timestamp)
        topic = self._topic_format.replace("${topic}", record.topic).replace("${timestamp}", stamp)
        return record.new_record(topic=topic)


class Filter(Transformation):
    """Drops every record; meant to be used with a predicate (and maybe `negate`)."""

    CONNECT_CLASS = _PACKAGE + "Filter"
    OVERVIEW = (
        "Drops all records, filtering them from subsequent transformations in the chain; "
        "meant to be used conditionally with a predicate."
    )

    def apply(self, record: ConnectRecord) -> ConnectRecord | None:
        return None
