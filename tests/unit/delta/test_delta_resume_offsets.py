"""Where a Delta sink's input resumes after a lost checkpoint: explicit offsets that Spark's
Kafka source accepts (every subscribed partition, no other)."""

from __future__ import annotations

from spark_eos_connect.delta.writer import resume_offsets
from spark_eos_connect.sink.kafka_input import EARLIEST


def test_partitions_the_table_does_not_know_start_at_the_earliest_offset() -> None:
    stored = {("orders", 0): 8}
    subscribed = [("orders", 1), ("orders", 0), ("refunds", 0)]

    assert resume_offsets(stored, subscribed) == {
        ("orders", 0): 8,
        ("orders", 1): EARLIEST,
        ("refunds", 0): EARLIEST,
    }


def test_offsets_of_topics_no_longer_subscribed_are_left_out() -> None:
    stored = {("orders", 0): 8, ("old", 0): 3, ("orders", 9): 1}

    assert resume_offsets(stored, [("orders", 0), ("orders", 1)]) == {
        ("orders", 0): 8,
        ("orders", 1): EARLIEST,
    }


def test_no_offsets_when_the_table_knows_none_of_the_subscribed_partitions() -> None:
    assert resume_offsets({("old", 0): 3}, [("orders", 0)]) == {}
    assert resume_offsets({}, [("orders", 0)]) == {}
    assert resume_offsets({("orders", 0): 3}, []) == {}
