"""Kafka's murmur2 hash and the default partitioner's choice of partition for keyed records.

Kafka's Java producer (and Connect's offset writer with it) places a keyed record on partition
``toPositive(murmur2(keyBytes)) % numPartitions``. Writing offsets records to the same partition as
a Connect worker would is what makes the offsets topic readable by both.
"""

from __future__ import annotations

_MASK32 = 0xFFFFFFFF
_SEED = 0x9747B28C
_M = 0x5BD1E995
_R = 24


def _to_signed32(value: int) -> int:
    value &= _MASK32
    return value - 0x1_0000_0000 if value & 0x8000_0000 else value


def murmur2(data: bytes | bytearray | memoryview) -> int:
    """Kafka's ``Utils.murmur2``: 32-bit murmur2 (seed 0x9747b28c) as a signed Java int."""
    data = bytes(data)
    length = len(data)
    h = (_SEED ^ length) & _MASK32
    body = length & ~3
    for i in range(0, body, 4):
        k = int.from_bytes(data[i : i + 4], "little")
        k = (k * _M) & _MASK32
        k ^= k >> _R
        k = (k * _M) & _MASK32
        h = (h * _M) & _MASK32
        h ^= k
    tail = length & 3
    if tail == 3:
        h ^= data[body + 2] << 16
    if tail >= 2:
        h ^= data[body + 1] << 8
    if tail >= 1:
        h ^= data[body]
        h = (h * _M) & _MASK32
    h ^= h >> 13
    h = (h * _M) & _MASK32
    h ^= h >> 15
    return _to_signed32(h)


def to_positive(number: int) -> int:
    """Kafka's ``Utils.toPositive``: clear the sign bit of a 32-bit int (not the absolute value)."""
    return number & 0x7FFFFFFF


def default_partition(key_bytes: bytes | bytearray | memoryview, num_partitions: int) -> int:
    """The partition Kafka's default partitioner picks for a record with key `key_bytes`."""
    if isinstance(num_partitions, bool) or not isinstance(num_partitions, int):
        raise TypeError(f"num_partitions must be an int, got {type(num_partitions).__name__}")
    if num_partitions < 1:
        raise ValueError(f"num_partitions must be at least 1, got {num_partitions}")
    return to_positive(murmur2(key_bytes)) % num_partitions
