"""The two plugin kinds of a chain: `Transformation` and `Predicate`, as in Connect.

A transformation is configured once with its options (`configure(configs)`, the keys without
the `transforms.<alias>.` prefix), then `apply(record)` returns a record, or None to drop it;
`close()` ends its life. A predicate has `configure`, `test(record) -> bool` and `close`.
A user's own SMT or predicate is a Python class with these methods (subclassing these bases is
optional); it may expose `config_def()` returning a `ConfigDef` so its options are validated and
documented like the built-in ones.

The built-in classes declare `CONFIG_DEF`, parse their options with it (`check_config`, which
also runs cross-option checks) and `setup` themselves from the typed values.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping
from typing import Any, ClassVar

from spark_eos_connect.api.config import ConfigDef, InvalidConfigError
from spark_eos_connect.api.data import Schema
from spark_eos_connect.transforms.options import parse_options
from spark_eos_connect.transforms.record import ConnectRecord

__all__ = ["KeyOrValueTransformation", "Predicate", "Transformation"]

Problems = dict[str, list[str]]


class _Configurable:
    """Option handling shared by transformations and predicates."""

    CONFIG_DEF: ClassVar[ConfigDef] = ConfigDef()
    CONNECT_CLASS: ClassVar[str | None] = None
    """Connect's class name for a built-in (e.g. `org.apache...InsertField$Value`)."""
    OVERVIEW: ClassVar[str] = ""
    """What the plugin does, in one or two sentences (for the docs)."""

    @classmethod
    def config_def(cls) -> ConfigDef:
        """The plugin's option definitions."""
        return cls.CONFIG_DEF

    @classmethod
    def cross_check(cls, values: Mapping[str, Any], prefix: str) -> list[tuple[str, str]]:
        """Problems that involve several options, as (full key, message); none by default."""
        return []

    @classmethod
    def check_config(
        cls, configs: Mapping[str, Any], prefix: str = ""
    ) -> tuple[dict[str, Any] | None, Problems]:
        """Typed option values (None if invalid) and every problem, keys named `prefix+option`."""
        values, problems = parse_options(cls.config_def(), configs, prefix)
        if values is not None:
            for key, message in cls.cross_check(values, prefix):
                problems.setdefault(key, []).append(message)
            if problems:
                values = None
        return values, problems

    def configure(self, configs: Mapping[str, Any]) -> None:
        """Parse the options (raising `InvalidConfigError` listing every problem), then `setup`."""
        values, problems = self.check_config(configs)
        if values is None:
            raise InvalidConfigError(problems)
        self.setup(values)

    def setup(self, values: dict[str, Any]) -> None:
        """Take the typed option values; built-ins override this."""

    def close(self) -> None:
        """Release whatever the plugin holds; nothing by default."""


class Transformation(_Configurable, abc.ABC):
    """A Single Message Transform: `apply(record)` returns the new record, or None to drop it.

    `apply` must not change the record (it is immutable) nor anything reachable from it (dicts,
    lists): build new values and return `record.new_record(...)`.
    """

    @abc.abstractmethod
    def apply(self, record: ConnectRecord) -> ConnectRecord | None:
        """The transformed record, or None to filter it out."""


class Predicate(_Configurable, abc.ABC):
    """A condition on a record that decides whether a transformation applies to it."""

    @abc.abstractmethod
    def test(self, record: ConnectRecord) -> bool:
        """True when the record matches."""


class KeyOrValueTransformation(Transformation, abc.ABC):
    """A transformation with Connect's `$Key` and `$Value` variants: `SIDE` picks which part."""

    SIDE: ClassVar[str] = "value"

    def operating_schema(self, record: ConnectRecord) -> Schema | None:
        """The schema of the part this variant works on."""
        return record.key_schema if self.SIDE == "key" else record.value_schema

    def operating_value(self, record: ConnectRecord) -> Any:
        """The part this variant works on."""
        return record.key if self.SIDE == "key" else record.value

    def updated(self, record: ConnectRecord, schema: Schema | None, value: Any) -> ConnectRecord:
        """`record` with this variant's part (and its schema) replaced."""
        if self.SIDE == "key":
            return record.new_record(key_schema=schema, key=value)
        return record.new_record(value_schema=schema, value=value)
