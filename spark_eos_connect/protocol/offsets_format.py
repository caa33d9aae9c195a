"""Kafka Connect's offsets-topic records: keys, values, validation and an in-memory replay.

Connect writes offsets with its internal JsonConverter (schemas disabled): the key is the compact
JSON array ``["<connector>",{<source partition>}]`` and the value the compact JSON object of the
source offset, or null (a tombstone) to reset it. Workers find offsets by the *raw key bytes*, so
partition maps are written in Java ``HashMap`` iteration order (see `java_hashmap`).
Partition and offset maps hold string keys and primitive values only.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TypeAlias

from spark_eos_connect.errors import EosConnectError
from spark_eos_connect.protocol import _json
from spark_eos_connect.protocol.java_hashmap import hashmap_order

Primitive: TypeAlias = str | int | float | bool | None
OffsetMap: TypeAlias = dict[str, Primitive]

SOURCE_PARTITION = "source partition"
SOURCE_OFFSET = "source offset"


class OffsetFormatError(EosConnectError, ValueError):
    """An offsets-topic key or value, or a partition/offset map, is not in Connect's format."""


def validate_offset_map(m: object, what: str) -> None:
    """Check that `m` is a map of string keys to primitive values, as Connect requires.

    `what` names the map in the error ("source partition" or "source offset"). Integers must fit
    in a Java long and floats must be finite, as both have to round-trip through Connect.
    """
    if not isinstance(m, Mapping):
        raise OffsetFormatError(f"{what} must be a map, got {_json.type_name(m)}")
    for key, value in m.items():
        if not isinstance(key, str):
            raise OffsetFormatError(f"{what} keys must be strings, got key {key!r}")
        if value is None or isinstance(value, str | bool):
            continue
        if isinstance(value, int):
            if not _json.INT64_MIN <= value <= _json.INT64_MAX:
                raise OffsetFormatError(
                    f"{what} field {key!r} holds {value}, which does not fit in a 64-bit integer"
                )
            continue
        if isinstance(value, float):
            if not math.isfinite(value):
                raise OffsetFormatError(f"{what} field {key!r} holds non-finite number {value!r}")
            continue
        raise OffsetFormatError(
            f"{what} field {key!r} holds {value!r} ({type(value).__name__}); only strings, "
            "numbers, booleans and null are allowed"
        )


def _hashmap_ordered(m: Mapping[str, Primitive]) -> dict[str, Primitive]:
    return {key: m[key] for key in hashmap_order(list(m))}


def _dumps(value: object) -> bytes:
    try:
        return _json.dumps_bytes(value)
    except ValueError as exc:
        raise OffsetFormatError(str(exc)) from exc


def encode_offset_key(connector: str, partition: Mapping[str, Primitive]) -> bytes:
    """The offsets-topic key ``["<connector>",{...}]`` with the partition in HashMap order."""
    if not isinstance(connector, str):
        raise OffsetFormatError(f"connector name must be a string, got {connector!r}")
    validate_offset_map(partition, SOURCE_PARTITION)
    return _dumps([connector, _hashmap_ordered(partition)])


def encode_offset_value(offset: Mapping[str, Primitive] | None) -> bytes | None:
    """The offsets-topic value for `offset` (HashMap key order); None gives a tombstone."""
    if offset is None:
        return None
    validate_offset_map(offset, SOURCE_OFFSET)
    return _dumps(_hashmap_ordered(offset))


def _loads(raw: object, what: str) -> object:
    if not isinstance(raw, bytes | bytearray | memoryview):
        raise OffsetFormatError(f"{what} must be bytes, got {type(raw).__name__}")
    try:
        return _json.loads(bytes(raw))
    except ValueError as exc:
        raise OffsetFormatError(f"{what} is not JSON: {exc}") from exc


def decode_offset_key(raw: bytes) -> tuple[str, OffsetMap | None]:
    """Parse an offsets-topic key into ``(connector, partition)``.

    The partition is None for a key whose second element is JSON null (Connect ignores those).
    """
    key = _loads(raw, "offsets key")
    if not isinstance(key, list):
        raise OffsetFormatError(f"offsets key must be a JSON array, got {_json.type_name(key)}")
    if len(key) != 2:
        raise OffsetFormatError(f"offsets key must have 2 elements, got {len(key)}")
    connector, partition = key
    if not isinstance(connector, str):
        raise OffsetFormatError(
            f"offsets key must start with the connector name, got {_json.type_name(connector)}"
        )
    if partition is None:
        return connector, None
    if not isinstance(partition, dict):
        raise OffsetFormatError(
            f"offsets key's source partition must be an object or null, "
            f"got {_json.type_name(partition)}"
        )
    validate_offset_map(partition, SOURCE_PARTITION)
    return connector, partition


def decode_offset_value(raw: bytes | None) -> OffsetMap | None:
    """Parse an offsets-topic value; None (a tombstone) or JSON null give None."""
    if raw is None:
        return None
    value = _loads(raw, "offsets value")
    if value is None:
        return None
    if not isinstance(value, dict):
        raise OffsetFormatError(
            f"offsets value must be a JSON object, got {_json.type_name(value)}"
        )
    validate_offset_map(value, SOURCE_OFFSET)
    return value


def partition_key(partition: Mapping[str, Primitive]) -> str:
    """A canonical, hashable identity for a source partition: compact JSON with sorted keys.

    Distinguishes value types the way Java map equality does (1, 1.0 and true differ).
    """
    validate_offset_map(partition, SOURCE_PARTITION)
    return _dumps({key: partition[key] for key in sorted(partition)}).decode("utf-8")


class OffsetsSnapshot:
    """An in-memory replay of an offsets topic, in the order records were read.

    Two views are kept. The raw view maps raw key bytes to the latest raw value, which is how a
    Connect worker stores and looks up offsets. The logical view maps each connector's source
    partitions (by `partition_key`) to the latest offset written for an equal partition map,
    whatever its key order; it is what `offsets_for` and `offset` answer from. The views agree for
    keys written by `encode_offset_key`.

    A tombstone removes the partition. Records with a malformed key, a key whose partition is null,
    or a malformed value are skipped and counted in `skipped`, as Connect logs and skips them; a
    malformed value also removes the partition's logical offset (Connect could not read it either).
    """

    def __init__(self) -> None:
        self._raw: dict[bytes, bytes] = {}
        self._logical: dict[str, dict[str, tuple[OffsetMap, OffsetMap]]] = {}
        self.skipped = 0
        self.applied = 0

    def apply(self, raw_key: bytes | None, raw_value: bytes | None) -> None:
        """Replay one offsets-topic record (a null key is skipped)."""
        if raw_key is None:
            self.skipped += 1
            return
        key_bytes = bytes(raw_key)
        if raw_value is None:
            self._raw.pop(key_bytes, None)
        else:
            self._raw[key_bytes] = bytes(raw_value)
        try:
            connector, partition = decode_offset_key(key_bytes)
        except OffsetFormatError:
            self.skipped += 1
            return
        if partition is None:
            self.skipped += 1
            return
        identity = partition_key(partition)
        partitions = self._logical.setdefault(connector, {})
        try:
            offset = decode_offset_value(raw_value)
        except OffsetFormatError:
            partitions.pop(identity, None)
            self.skipped += 1
            return
        if offset is None:
            partitions.pop(identity, None)
        else:
            partitions[identity] = (partition, offset)
        self.applied += 1

    def connectors(self) -> list[str]:
        """Connectors with at least one stored offset, sorted."""
        return sorted(name for name, parts in self._logical.items() if parts)

    def offsets_for(self, connector: str) -> dict[str, tuple[OffsetMap, OffsetMap]]:
        """``{partition_key: (partition, offset)}`` for every stored partition of `connector`."""
        return {
            identity: (dict(partition), dict(offset))
            for identity, (partition, offset) in self._logical.get(connector, {}).items()
        }

    def offset(self, connector: str, partition: Mapping[str, Primitive]) -> OffsetMap | None:
        """The latest offset stored for `partition` of `connector`, or None."""
        entry = self._logical.get(connector, {}).get(partition_key(partition))
        return dict(entry[1]) if entry is not None else None

    def raw_value(self, raw_key: bytes) -> bytes | None:
        """The latest raw value stored under exactly these key bytes (a worker's lookup)."""
        return self._raw.get(bytes(raw_key))
