"""The iteration order Java's `HashMap` gives the maps Connect's transforms build.

Connect's schemaless transforms copy a value into a fresh `java.util.HashMap` and JsonConverter
writes that map in its iteration order, so the JSON bytes depend on it. `JavaHashMap` records the
puts and removals a transform makes and hands back a dict in the order the JVM would iterate it.

The model follows OpenJDK 17: a key's bucket is `spread(hash) & (capacity - 1)`, buckets keep
insertion order, the table doubles past 0.75 load (and when a bucket reaches 9 entries in a table
smaller than 64), and `new HashMap<>(map)` pre-sizes to `tableSizeFor((int)(n / 0.75f + 1))`.
Not modelled: buckets that turn into trees (9 keys colliding in a table of 64 or more).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from spark_eos_connect.protocol.java_hashmap import java_string_hash

_DEFAULT_CAPACITY: Final = 16
_MAX_CAPACITY: Final = 1 << 30
_TREEIFY_THRESHOLD: Final = 8
_MIN_TREEIFY_CAPACITY: Final = 64


def _signed32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value & 0x8000_0000 else value


def java_hash(key: Any) -> int:
    """`key.hashCode()` for the key types schemaless maps hold (str, int as Long, bool)."""
    if isinstance(key, str):
        return java_string_hash(key)
    if isinstance(key, bool):
        return 1231 if key else 1237
    if isinstance(key, int):
        unsigned = key & 0xFFFF_FFFF_FFFF_FFFF
        return _signed32(unsigned ^ (unsigned >> 32))
    if key is None:
        return 0
    return _signed32(hash(key))


def _spread(key: Any) -> int:
    h = java_hash(key) & 0xFFFFFFFF
    return h ^ (h >> 16)


def table_size_for(capacity: int) -> int:
    """`HashMap.tableSizeFor`: the smallest power of two >= `capacity` (at least 1)."""
    size = 1
    while size < capacity and size < _MAX_CAPACITY:
        size <<= 1
    return size


class JavaHashMap:
    """A dict that remembers what a `java.util.HashMap` would iterate first.

    Build it as the Java code does (`JavaHashMap()`, `JavaHashMap.with_capacity(n)`,
    `JavaHashMap.copy_of(mapping)`), then `put`/`remove`, then take `to_dict()`.
    """

    __slots__ = ("_capacity", "_entries")

    def __init__(self, initial_capacity: int = _DEFAULT_CAPACITY) -> None:
        self._capacity = table_size_for(initial_capacity)
        self._entries: dict[Any, Any] = {}

    @classmethod
    def with_capacity(cls, capacity: int) -> JavaHashMap:
        """`new HashMap<>(capacity)`."""
        return cls(capacity)

    @classmethod
    def copy_of(cls, source: Mapping[Any, Any]) -> JavaHashMap:
        """`new HashMap<>(source)`: pre-sized for `source`, then filled in its order."""
        size = len(source)
        result = cls(table_size_for(int(size / 0.75 + 1.0)) if size else _DEFAULT_CAPACITY)
        for key, value in source.items():
            result.put(key, value)
        return result

    def put(self, key: Any, value: Any) -> None:
        """`map.put(key, value)`: a new key goes to the tail of its bucket."""
        if key in self._entries:
            self._entries[key] = value
            return
        self._entries[key] = value
        if self._capacity < _MIN_TREEIFY_CAPACITY:
            mask = self._capacity - 1
            bucket = _spread(key) & mask
            if sum(1 for k in self._entries if _spread(k) & mask == bucket) > _TREEIFY_THRESHOLD:
                self._grow()
        if len(self._entries) > (self._capacity * 3) // 4:
            self._grow()

    def put_all(self, items: Iterable[tuple[Any, Any]]) -> None:
        """Several `put`s in order."""
        for key, value in items:
            self.put(key, value)

    def remove(self, key: Any) -> None:
        """`map.remove(key)`: the table never shrinks."""
        self._entries.pop(key, None)

    def get(self, key: Any) -> Any:
        """`map.get(key)`."""
        return self._entries.get(key)

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def _grow(self) -> None:
        if self._capacity < _MAX_CAPACITY:
            self._capacity <<= 1

    def to_dict(self) -> dict[Any, Any]:
        """The entries in the JVM's iteration order (bucket index, then insertion)."""
        mask = self._capacity - 1
        ordered = sorted(self._entries, key=lambda k: _spread(k) & mask)
        return {key: self._entries[key] for key in ordered}


def java_hashmap(source: Mapping[Any, Any]) -> dict[Any, Any]:
    """`new HashMap<>()` filled with `source` in its order, as a dict in iteration order."""
    result = JavaHashMap()
    result.put_all(source.items())
    return result.to_dict()


def java_hashset_order(items: Iterable[Any]) -> list[Any]:
    """The iteration order of `new HashSet<>(list)` (capacity max(n / .75 + 1, 16))."""
    values = list(items)
    result = JavaHashMap(max(int(len(values) / 0.75) + 1, _DEFAULT_CAPACITY))
    for value in values:
        result.put(value, None)
    return list(result.to_dict())
