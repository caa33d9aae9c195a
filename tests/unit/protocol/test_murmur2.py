"""Kafka's murmur2 hash and default partitioner."""

from __future__ import annotations

import pytest

from spark_eos_connect.protocol.murmur2 import default_partition, murmur2, to_positive

# Test vectors from Apache Kafka's own tests: UtilsTest.testMurmur2 in apache/kafka,
# clients/src/test/java/org/apache/kafka/common/utils/UtilsTest.java (signed Java ints).
KAFKA_UTILS_TEST_VECTORS = [
    (b"21", -973932308),
    (b"foobar", -790332482),
    (b"a-little-bit-long-string", -985981536),
    (b"a-little-bit-longer-string", -1486304829),
    (b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971),
    (bytes([ord("a"), ord("b"), ord("c")]), 479470107),
]

# Extra vectors covering the empty input and 1- and 3-byte tails, from a Kafka client's tests
# (ciena/afkak, afkak/test/test_partitioner.py, TestPureMurmur2); given there as unsigned ints.
AFKAK_UNSIGNED_VECTORS = [
    (b"", 275646681),
    (b"testing", 2291530147),
    (b"PEACH!", 2546348827),
    (b"Gorz!", 1742407956),
    (b"987654321", 577579727),
    (b"_!!_", 2335345241),
    (b"CRINOID", 3603193626),
]


@pytest.mark.parametrize(("data", "expected"), KAFKA_UTILS_TEST_VECTORS)
def test_murmur2_matches_kafka_utils_test(data: bytes, expected: int) -> None:
    assert murmur2(data) == expected


@pytest.mark.parametrize(("data", "unsigned"), AFKAK_UNSIGNED_VECTORS)
def test_murmur2_matches_client_vectors_as_signed_ints(data: bytes, unsigned: int) -> None:
    signed = unsigned - 2**32 if unsigned >= 2**31 else unsigned
    assert murmur2(data) == signed


def test_murmur2_result_is_a_signed_32_bit_int() -> None:
    for data, _ in KAFKA_UTILS_TEST_VECTORS + AFKAK_UNSIGNED_VECTORS:
        assert -(2**31) <= murmur2(data) < 2**31


def test_murmur2_treats_bytes_as_unsigned() -> None:
    # Java bytes are signed but Kafka masks them with 0xff; high bytes must not sign-extend.
    assert murmur2(bytes([0xFF])) != murmur2(bytes([0x7F]))
    assert murmur2(bytearray(b"foobar")) == -790332482


def test_to_positive_clears_sign_bit_rather_than_negating() -> None:
    assert to_positive(-1) == 0x7FFFFFFF
    assert to_positive(-(2**31)) == 0
    assert to_positive(10) == 10
    assert to_positive(-10) == 0x7FFFFFF6


@pytest.mark.parametrize("num_partitions", [1, 2, 3, 5, 25, 50, 1000])
def test_default_partition_uses_positive_hash_modulo(num_partitions: int) -> None:
    for data, signed in KAFKA_UTILS_TEST_VECTORS:
        expected = (signed & 0x7FFFFFFF) % num_partitions
        assert default_partition(data, num_partitions) == expected


def test_default_partition_worked_examples() -> None:
    # "foobar": -790332482 & 0x7fffffff = 2147483648 - 790332482 = 1357151166.
    assert default_partition(b"foobar", 25) == 1357151166 % 25 == 16
    # "abc": 479470107 is already positive.
    assert default_partition(b"abc", 25) == 479470107 % 25 == 7
    # "": 275646681 (positive).
    assert default_partition(b"", 10) == 1


def test_default_partition_single_partition_is_zero() -> None:
    assert default_partition(b"anything", 1) == 0


@pytest.mark.parametrize("bad", [0, -1])
def test_default_partition_rejects_non_positive_partition_count(bad: int) -> None:
    with pytest.raises(ValueError, match="num_partitions"):
        default_partition(b"k", bad)


def test_default_partition_rejects_non_int_partition_count() -> None:
    with pytest.raises(TypeError):
        default_partition(b"k", 2.0)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        default_partition(b"k", True)
