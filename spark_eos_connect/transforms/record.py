"""The record a transformation chain works on, shared by the source and sink sides.

`ConnectRecord` mirrors Connect's `ConnectRecord`: topic, Kafka partition, key and value with
their schemas (None for schemaless data), timestamp and an ordered list of headers. It is
immutable; `new_record(...)` returns a copy with some attributes replaced, as Connect's
`newRecord` does. Sink records also carry their Kafka offset (`kafka_offset`, which
`InsertField`'s `offset.field` needs); source records leave it None. `origin` is an opaque slot
the runtime may use to find its own record again (a source record's partition and offset, say);
transformations carry it along untouched.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from spark_eos_connect.api.data import Schema, SchemaAndValue

__all__ = ["ConnectRecord", "Header"]


@dataclass(frozen=True, slots=True)
class Header:
    """One record header: its name, its value and the value's schema (None: schemaless)."""

    key: str
    value: Any = None
    schema: Schema | None = None

    @property
    def schema_and_value(self) -> SchemaAndValue:
        """The header's value with its schema."""
        return SchemaAndValue(self.schema, self.value)


_UNSET: Any = object()


@dataclass(frozen=True, slots=True)
class ConnectRecord:
    """An immutable Connect record; `new_record` makes modified copies."""

    topic: str
    kafka_partition: int | None = None
    key_schema: Schema | None = None
    key: Any = None
    value_schema: Schema | None = None
    value: Any = None
    timestamp: int | None = None
    headers: tuple[Header, ...] = ()
    kafka_offset: int | None = None
    origin: Any = dataclasses.field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.headers, tuple):
            object.__setattr__(self, "headers", tuple(self.headers))

    @property
    def is_sink_record(self) -> bool:
        """True for a record read from Kafka (it has an offset), False for a source record."""
        return self.kafka_offset is not None

    def new_record(
        self,
        topic: str = _UNSET,
        kafka_partition: int | None = _UNSET,
        key_schema: Schema | None = _UNSET,
        key: Any = _UNSET,
        value_schema: Schema | None = _UNSET,
        value: Any = _UNSET,
        timestamp: int | None = _UNSET,
        headers: Iterable[Header] = _UNSET,
    ) -> ConnectRecord:
        """A copy with the given attributes replaced; offset and origin are kept."""
        changes: dict[str, Any] = {}
        for name, new in (
            ("topic", topic),
            ("kafka_partition", kafka_partition),
            ("key_schema", key_schema),
            ("key", key),
            ("value_schema", value_schema),
            ("value", value),
            ("timestamp", timestamp),
        ):
            if new is not _UNSET:
                changes[name] = new
        if headers is not _UNSET:
            changes["headers"] = tuple(headers)
        return dataclasses.replace(self, **changes) if changes else self

    def headers_named(self, name: str) -> Iterator[Header]:
        """The headers called `name`, in order."""
        return (header for header in self.headers if header.key == name)
