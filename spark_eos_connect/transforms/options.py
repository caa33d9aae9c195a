"""Option validators the transformations share, and parsing under a key prefix.

The validators follow the checks of Connect's `ConfigDef` validators used by the SMTs (lists
without duplicates, a valid regular expression, `old:new` rename pairs); each raises
`ConfigError` naming the option. `parse_options` parses a transformation's options as they sit
in a connector config, so that every message names the full key (`transforms.route.regex`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from spark_eos_connect.api.config import ConfigDef, InvalidConfigError
from spark_eos_connect.errors import ConfigError
from spark_eos_connect.transforms._jregex import JavaPatternError, compile_java_regex

__all__ = [
    "JavaRegex",
    "NonDuplicateList",
    "NonEmptyList",
    "RenameMappings",
    "distinct",
    "invalid",
    "parse_options",
    "parse_rename_mappings",
]


def invalid(name: str, value: Any, reason: str) -> ConfigError:
    """Connect's `ConfigException(name, value, message)` wording."""
    return ConfigError(f"Invalid value {value!r} for configuration {name}: {reason}")


def _shown_list(value: Any) -> str:
    return ",".join(str(v) for v in value) if isinstance(value, list | tuple) else repr(value)


@dataclass(frozen=True)
class NonDuplicateList:
    """A list of non-empty names; `allow_empty` says whether [] is fine.

    Repeated names are not an error: Connect drops the repeats with a warning, and so do the
    transformations here (`distinct`); `transform_config_warnings` reports them.
    """

    allow_empty: bool = True

    def __call__(self, name: str, value: Any) -> None:
        if not isinstance(value, list | tuple):
            raise invalid(name, value, "expected a comma-separated list")
        if not value and not self.allow_empty:
            raise ConfigError(
                f"Invalid value for configuration {name}: must not be empty; "
                "expected a comma-separated list of names"
            )
        if any(v == "" for v in value):
            raise invalid(name, _shown_list(value), "values must not be empty")

    def __str__(self) -> str:
        return "" if self.allow_empty else "non-empty list"


def distinct(values: list[str]) -> list[str]:
    """`values` without repeats, first occurrences kept in order."""
    return list(dict.fromkeys(values))


@dataclass(frozen=True)
class NonEmptyList:
    """A list with at least one entry (Connect's `NonEmptyListValidator`)."""

    def __call__(self, name: str, value: Any) -> None:
        if not value:
            raise invalid(name, _shown_list(value), "Empty list")

    def __str__(self) -> str:
        return "non-empty list"


@dataclass(frozen=True)
class JavaRegex:
    """A Java regular expression this project can run (see `_jregex`)."""

    def __call__(self, name: str, value: Any) -> None:
        try:
            compile_java_regex(value)
        except JavaPatternError as error:
            raise invalid(name, value, f"Invalid regex: {error}") from None

    def __str__(self) -> str:
        return "valid regex"


def parse_rename_mappings(name: str, mappings: list[str]) -> dict[str, str]:
    """`old:new` pairs to a dict; `ConfigError` naming `name` for a malformed pair."""
    result: dict[str, str] = {}
    for mapping in mappings:
        parts = mapping.split(":")
        if len(parts) != 2:
            raise invalid(
                name, _shown_list(mappings), f"Invalid rename mapping: {mapping} (expected old:new)"
            )
        result[parts[0]] = parts[1]
    return result


@dataclass(frozen=True)
class RenameMappings:
    """A list of `old:new` field renames."""

    def __call__(self, name: str, value: Any) -> None:
        parse_rename_mappings(name, value)

    def __str__(self) -> str:
        return "list of colon-delimited pairs, e.g. foo:bar,abc:xyz"


def parse_options(
    definition: ConfigDef, props: Mapping[str, Any], prefix: str = ""
) -> tuple[dict[str, Any] | None, dict[str, list[str]]]:
    """Parse `props` (keys without `prefix`) against `definition`; problems name `prefix+key`.

    Returns the typed values (None when any option is invalid) and the problems by full key.
    """
    if prefix:
        definition = ConfigDef(
            dataclasses.replace(key, name=prefix + key.name) for key in definition.keys.values()
        )
        props = {prefix + name: value for name, value in props.items()}
    try:
        values = definition.parse(props)
    except InvalidConfigError as error:
        return None, error.problems
    return {name[len(prefix) :]: value for name, value in values.items()}, {}
