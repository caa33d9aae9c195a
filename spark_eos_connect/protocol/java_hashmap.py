"""Java's ``String.hashCode`` and the iteration order of a ``java.util.HashMap<String, ?>``.

Connect serializes a source partition map in its iteration order, and finds stored offsets by the
raw key bytes, so a Python writer must order multi-key partitions the way a Java ``HashMap`` would.

The model follows OpenJDK 8+ ``HashMap``: the table is allocated on the first insert with the
initial capacity (default 16, load factor 0.75); a key's bucket is ``spread(hash) & (capacity - 1)``
with ``spread(h) = h ^ (h >>> 16)``; a new key is appended to the tail of its bucket; the table
doubles when the size exceeds the threshold, and also when a bucket reaches 9 entries while the
table is smaller than 64 (``treeifyBin``'s resize); a resize splits each bucket into a low and a
high bucket keeping relative order. Iteration is by bucket index, then bucket order.

Not modelled: treeification (a bucket reaching 9 entries in a table of 64 or more becomes a
red-black tree, whose iteration order differs). That needs 9 keys colliding in the low 6+ bits of
their hashes, which does not happen for the small maps used as source partitions.
"""

from __future__ import annotations

from collections.abc import Sequence

_DEFAULT_CAPACITY = 16
_MAX_CAPACITY = 1 << 30
_TREEIFY_THRESHOLD = 8
_MIN_TREEIFY_CAPACITY = 64


def _to_signed32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - 0x1_0000_0000 if value & 0x8000_0000 else value


def java_string_hash(s: str) -> int:
    """Java's ``String.hashCode()``: ``s[0]*31^(n-1) + ... + s[n-1]`` over UTF-16 code units."""
    encoded = s.encode("utf-16-le", errors="surrogatepass")
    h = 0
    for i in range(0, len(encoded), 2):
        h = (31 * h + (encoded[i] | (encoded[i + 1] << 8))) & 0xFFFFFFFF
    return _to_signed32(h)


def spread_hash(s: str) -> int:
    """``HashMap.hash(key)``: the string hash with its high half folded into the low half."""
    h = java_string_hash(s) & 0xFFFFFFFF
    return h ^ (h >> 16)


def _table_size_for(capacity: int) -> int:
    size = 1
    while size < capacity and size < _MAX_CAPACITY:
        size <<= 1
    return size


def hashmap_order(keys: Sequence[str], *, initial_capacity: int = _DEFAULT_CAPACITY) -> list[str]:
    """Iteration order of a ``HashMap`` after ``put``-ing `keys` one by one, in the given order.

    `initial_capacity` mirrors ``new HashMap<>(n)`` (rounded up to a power of two). A repeated key
    keeps its first position, as ``put`` on an existing key only replaces the value.
    """
    if initial_capacity < 0:
        raise ValueError(f"initial_capacity must not be negative, got {initial_capacity}")
    capacity = _table_size_for(initial_capacity)
    table: list[list[tuple[int, str]]] = [[] for _ in range(capacity)]
    present: set[str] = set()

    def resize() -> None:
        nonlocal capacity, table
        if capacity >= _MAX_CAPACITY:
            return
        old_capacity = capacity
        capacity <<= 1
        new_table: list[list[tuple[int, str]]] = [[] for _ in range(capacity)]
        for index, bucket in enumerate(table):
            for entry in bucket:
                high = entry[0] & old_capacity
                new_table[index + old_capacity if high else index].append(entry)
        table = new_table

    for key in keys:
        if not isinstance(key, str):
            raise TypeError(f"HashMap keys must be strings, got {type(key).__name__}")
        if key in present:
            continue
        present.add(key)
        h = spread_hash(key)
        bucket = table[h & (capacity - 1)]
        bucket.append((h, key))
        if len(bucket) > _TREEIFY_THRESHOLD and capacity < _MIN_TREEIFY_CAPACITY:
            resize()
        if len(present) > (capacity * 3) // 4:
            resize()
    return [key for bucket in table for _, key in bucket]
