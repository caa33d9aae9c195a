"""Java String.hashCode and java.util.HashMap<String, ?> iteration order.

Expected orders are derived by hand from HashMap's rules: for single-character strings the hash is
the character's code (below 65536, so the spread h ^ (h >>> 16) leaves it unchanged), and the bucket
is code & (capacity - 1).
"""

from __future__ import annotations

import itertools
import random

import pytest

from spark_eos_connect.protocol.java_hashmap import hashmap_order, java_string_hash, spread_hash


def _reference_hash(s: str) -> int:
    """s[0]*31^(n-1) + ... + s[n-1] over UTF-16 code units, wrapped to a signed 32-bit int."""
    data = s.encode("utf-16-be", errors="surrogatepass")
    units = [int.from_bytes(data[i : i + 2], "big") for i in range(0, len(data), 2)]
    n = len(units)
    total = sum(u * 31 ** (n - 1 - i) for i, u in enumerate(units)) % 2**32
    return total - 2**32 if total >= 2**31 else total


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", 0),
        ("a", 97),
        ("ab", 31 * 97 + 98),
        ("hello", 99162322),
        # The classic collision: 'A'*31 + 'a' == 'B'*31 + 'B' == 2112.
        ("Aa", 2112),
        ("BB", 2112),
        # A well-known string whose hashCode is Integer.MIN_VALUE.
        ("polygenelubricants", -(2**31)),
        # U+1F600 is the surrogate pair D83D DE00: 31 * 0xD83D + 0xDE00.
        ("\U0001f600", 31 * 0xD83D + 0xDE00),
    ],
)
def test_java_string_hash_known_values(text: str, expected: int) -> None:
    assert java_string_hash(text) == expected


def test_java_string_hash_matches_reference_formula_on_random_strings() -> None:
    rng = random.Random(1234)
    alphabet = "abcxyzABC019-_.:/é€\U0001f600"
    for _ in range(500):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 40)))
        value = java_string_hash(text)
        assert value == _reference_hash(text)
        assert -(2**31) <= value < 2**31


def test_spread_hash_folds_high_bits() -> None:
    # "hello" = 99162322 = 0x05E918D2; 0x05E918D2 ^ 0x05E9 = 0x05E91D3B.
    assert spread_hash("hello") == 0x05E91D3B
    assert spread_hash("a") == 97


def test_empty_and_single_key() -> None:
    assert hashmap_order([]) == []
    assert hashmap_order(["only"]) == ["only"]


def test_order_is_by_bucket_not_insertion_or_sorted() -> None:
    # 'p' = 112 -> bucket 0, 'a' = 97 -> bucket 1, 'z' = 122 -> bucket 10.
    for permutation in itertools.permutations(["a", "p", "z"]):
        assert hashmap_order(list(permutation)) == ["p", "a", "z"]


def test_spread_decides_the_bucket() -> None:
    # "hello" lands in bucket 0x1D3B & 15 = 11 (it would be 0x18D2 & 15 = 2 without the spread);
    # 'e' = 101 lands in bucket 5.
    assert hashmap_order(["hello", "e"]) == ["e", "hello"]


def test_same_bucket_keeps_insertion_order() -> None:
    # 'a' = 97 and 'q' = 113 are both bucket 1 in a 16-slot table.
    assert hashmap_order(["a", "q"]) == ["a", "q"]
    assert hashmap_order(["q", "a"]) == ["q", "a"]


def test_repeated_key_keeps_first_position() -> None:
    assert hashmap_order(["q", "a", "q"]) == ["q", "a"]
    assert hashmap_order(["a", "p", "a"]) == ["p", "a"]


def test_resize_on_thirteenth_key_splits_buckets() -> None:
    fillers = [chr(c) for c in range(ord("b"), ord("l") + 1)]  # codes 98..108: buckets 2..12
    # 12 keys: still 16 slots; bucket 1 holds q then a.
    assert hashmap_order(["q", "a", *fillers[:-1]]) == ["q", "a", *fillers[:-1]]
    # 13 keys exceed the threshold 12: the table doubles to 32; a = 97 & 31 = 1 stays,
    # q = 113 & 31 = 17 moves after the fillers (buckets 2..12).
    assert hashmap_order(["q", "a", *fillers]) == ["a", *fillers, "q"]


def test_long_bucket_resizes_small_table_before_threshold() -> None:
    # Codes 1 + 16k all land in bucket 1 of 16 slots.
    keys = [chr(1 + 16 * k) for k in range(9)]
    # Eight entries in one bucket: no resize, insertion order.
    assert hashmap_order(keys[:8]) == keys[:8]
    # The ninth makes treeifyBin resize the table (16 < 64) to 32 slots: even k stay in
    # bucket 1, odd k move to bucket 17; relative order is kept in both.
    assert hashmap_order(keys) == keys[0::2] + keys[1::2]


def test_long_bucket_resizes_again_at_32_slots() -> None:
    # Codes 1 + 32k share bucket 1 at both 16 and 32 slots. The 9th key resizes 16 -> 32 (no
    # split); the 10th finds 10 entries in the bucket and resizes 32 -> 64: even k stay in bucket
    # 1, odd k move to bucket 33.
    keys = [chr(1 + 32 * k) for k in range(10)]
    assert hashmap_order(keys[:9]) == keys[:9]
    assert hashmap_order(keys) == keys[0::2] + keys[1::2]


def test_initial_capacity_changes_the_order() -> None:
    # a=97, q=113, A=65, Q=81 all share bucket 1 of 16 slots: insertion order.
    keys = ["a", "q", "A", "Q"]
    assert hashmap_order(keys) == keys
    # With 64 slots: A -> 1, Q -> 17, a -> 33, q -> 49.
    assert hashmap_order(keys, initial_capacity=64) == ["A", "Q", "a", "q"]
    # new HashMap<>(40) rounds up to 64 slots.
    assert hashmap_order(keys, initial_capacity=40) == ["A", "Q", "a", "q"]


def test_tiny_initial_capacity_grows() -> None:
    # Capacity 1 (threshold 0): after 'b' the table becomes 2 slots; after 'a' it becomes 4:
    # 'a' = 97 & 3 = 1, 'b' = 98 & 3 = 2.
    assert hashmap_order(["b", "a"], initial_capacity=0) == ["a", "b"]
    assert hashmap_order(["b", "a"], initial_capacity=1) == ["a", "b"]


def test_order_is_a_permutation_of_unique_keys() -> None:
    rng = random.Random(99)
    for size in (0, 1, 5, 12, 13, 25, 100):
        keys = [f"k{rng.randrange(10**6)}" for _ in range(size)]
        result = hashmap_order(keys)
        assert sorted(result) == sorted(set(keys))


def test_rejects_bad_input() -> None:
    with pytest.raises(TypeError):
        hashmap_order(["a", 1])  # type: ignore[list-item]
    with pytest.raises(ValueError):
        hashmap_order(["a"], initial_capacity=-1)
