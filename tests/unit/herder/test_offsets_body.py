"""Parsing and rendering Connect's REST offsets bodies (pure)."""

from __future__ import annotations

from typing import Any

import pytest

from spark_eos_connect.api.sink import TopicPartition
from spark_eos_connect.herder.errors import BadRequestError
from spark_eos_connect.herder.offsets_body import (
    parse_sink_offsets,
    parse_source_offsets,
    sink_offsets_body,
    source_offsets_body,
)


def test_source_offsets_keep_values_and_null_means_reset() -> None:
    body = {
        "offsets": [
            {"partition": {"file": "a", "n": 1}, "offset": {"pos": 5, "ok": True}},
            {"partition": {"file": "b"}, "offset": None},
            {"partition": {"file": "c"}},
        ]
    }
    assert parse_source_offsets(body) == [
        ({"file": "a", "n": 1}, {"pos": 5, "ok": True}),
        ({"file": "b"}, None),
        ({"file": "c"}, None),
    ]


def test_a_repeated_source_partition_keeps_its_last_offset() -> None:
    body = {
        "offsets": [
            {"partition": {"a": 1, "b": 2}, "offset": {"p": 1}},
            {"partition": {"b": 2, "a": 1}, "offset": {"p": 2}},
        ]
    }
    assert parse_source_offsets(body) == [({"b": 2, "a": 1}, {"p": 2})]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (None, "must be a JSON object"),
        ({"offsets": None}, "names no offsets"),
        ({"offsets": []}, "names no offsets"),
        ({"offsets": {}}, "'offsets' must be a JSON array"),
        ({"offsets": [7]}, r"offsets\[0\] must be an object"),
        ({"offsets": [{"offset": {}}]}, r"offsets\[0\] has no 'partition'"),
        ({"offsets": [{"partition": None, "offset": {"p": 1}}]}, "cannot be null"),
        (
            {"offsets": [{"partition": {"k": [1]}, "offset": None}]},
            r"offsets\[0\]: source partition",
        ),
        (
            {"offsets": [{"partition": {"k": 1}, "offset": {"p": {"x": 1}}}]},
            "source offset field 'p'",
        ),
        ({"offsets": [{"partition": {"k": 1}, "offset": "5"}]}, "source offset must be a map"),
    ],
)
def test_malformed_source_offsets_name_the_problem(body: Any, message: str) -> None:
    with pytest.raises(BadRequestError, match=message):
        parse_source_offsets(body)


def test_sink_offsets_accept_numeric_strings_and_nulls() -> None:
    body = {
        "offsets": [
            {
                "partition": {"kafka_topic": "t", "kafka_partition": "2"},
                "offset": {"kafka_offset": "9"},
            },
            {"partition": {"kafka_topic": "t", "kafka_partition": 0}, "offset": None},
        ]
    }
    assert parse_sink_offsets(body) == {TopicPartition("t", 2): 9, TopicPartition("t", 0): None}


@pytest.mark.parametrize(
    ("partition", "offset", "message"),
    [
        (None, {"kafka_offset": 1}, "must be an object"),
        ({"kafka_topic": "t"}, {"kafka_offset": 1}, "'kafka_topic' and 'kafka_partition'"),
        ({"kafka_topic": "", "kafka_partition": 0}, {"kafka_offset": 1}, "non-empty string"),
        ({"kafka_topic": "t", "kafka_partition": 1.5}, {"kafka_offset": 1}, "must be an integer"),
        ({"kafka_topic": "t", "kafka_partition": -1}, {"kafka_offset": 1}, "must not be negative"),
        ({"kafka_topic": "t", "kafka_partition": 0}, {"offset": 1}, "null or an object"),
        ({"kafka_topic": "t", "kafka_partition": 0}, {"kafka_offset": "x"}, "must be an integer"),
        ({"kafka_topic": "t", "kafka_partition": 2**31}, {"kafka_offset": 1}, "at most 2147483647"),
        ({"kafka_topic": "t", "kafka_partition": "2147483648"}, None, "int32"),
        ({"kafka_topic": "t", "kafka_partition": 0}, {"kafka_offset": 2**63}, "int64"),
        ({"kafka_topic": "t", "kafka_partition": 0}, {"kafka_offset": str(2**64)}, "at most"),
        ({"kafka_topic": "t", "kafka_partition": 0}, {"kafka_offset": "9" * 5000}, "an integer"),
        ({"kafka_topic": "a/b", "kafka_partition": 0}, None, "not a Kafka topic name"),
        ({"kafka_topic": "..", "kafka_partition": 0}, None, "not a Kafka topic name"),
        ({"kafka_topic": "t" * 250, "kafka_partition": 0}, None, "not a Kafka topic name"),
        ({"kafka_topic": "\u2713", "kafka_partition": 0}, None, "not a Kafka topic name"),
    ],
)
def test_malformed_sink_offsets_name_the_problem(partition: Any, offset: Any, message: str) -> None:
    with pytest.raises(BadRequestError, match=message):
        parse_sink_offsets({"offsets": [{"partition": partition, "offset": offset}]})


def test_sink_offsets_take_the_largest_kafka_numbers() -> None:
    body = {
        "offsets": [
            {
                "partition": {"kafka_topic": "t" * 249, "kafka_partition": 2**31 - 1},
                "offset": {"kafka_offset": str(2**63 - 1)},
            }
        ]
    }
    assert parse_sink_offsets(body) == {TopicPartition("t" * 249, 2**31 - 1): 2**63 - 1}


def test_bodies_are_sorted_and_in_connects_shape() -> None:
    assert source_offsets_body([({"f": "b"}, {"p": 2}), ({"f": "a"}, {"p": 1})]) == {
        "offsets": [
            {"partition": {"f": "a"}, "offset": {"p": 1}},
            {"partition": {"f": "b"}, "offset": {"p": 2}},
        ]
    }
    assert sink_offsets_body({TopicPartition("t", 1): 4, TopicPartition("t", 0): 3}) == {
        "offsets": [
            {
                "partition": {"kafka_topic": "t", "kafka_partition": 0},
                "offset": {"kafka_offset": 3},
            },
            {
                "partition": {"kafka_topic": "t", "kafka_partition": 1},
                "offset": {"kafka_offset": 4},
            },
        ]
    }
