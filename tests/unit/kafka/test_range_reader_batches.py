"""The Kafka reader's Arrow batches (`range_reader.records_batch`), from messages made here."""

from __future__ import annotations

import datetime as dt

from confluent_kafka import Message

from spark_eos_connect.kafka.range_reader import (
    KAFKA_ROW_SCHEMA,
    message_columns,
    partition_runs,
    records_batch,
)


def message(offset: int, key: bytes | None = None, millis: int = 1000) -> Message:
    return Message(
        topic="t",
        partition=1,
        offset=offset,
        key=key,
        value=b"v%d" % offset,
        timestamp=(1, millis),
        headers=None,
    )


def test_offsets_without_gaps_and_keys_all_null() -> None:
    batch = records_batch("t", 1, [message(5), message(6), message(7, millis=-1)])

    assert batch.schema == KAFKA_ROW_SCHEMA
    rows = batch.to_pylist()
    assert [r["offset"] for r in rows] == [5, 6, 7]
    assert [r["key"] for r in rows] == [None, None, None]
    assert [r["value"] for r in rows] == [b"v5", b"v6", b"v7"]
    assert rows[0]["timestamp"] == dt.datetime(1970, 1, 1, 0, 0, 1, tzinfo=dt.UTC)
    assert rows[2]["timestamp"] is None
    assert {(r["topic"], r["partition"], r["headers"]) for r in rows} == {("t", 1, None)}


def test_offsets_with_gaps_and_some_keys() -> None:
    batch = records_batch("t", 1, [message(0, b"k"), message(3), message(4, b"")])

    rows = batch.to_pylist()
    assert [r["offset"] for r in rows] == [0, 3, 4]
    assert [r["key"] for r in rows] == [b"k", None, b""]


def test_message_columns_for_sink_tasks_agree_with_the_arrow_rows() -> None:
    messages = [message(0, b"k"), message(3), message(4, b"", millis=-1)]
    messages[1].set_headers([("h", b"1"), ("n", None)])

    columns = message_columns("t", 1, messages)
    rows = records_batch("t", 1, messages).to_pylist()

    assert (columns.topic, columns.partition, len(columns)) == ("t", 1, 3)
    assert columns.offsets == [r["offset"] for r in rows] == [0, 3, 4]
    assert columns.keys.to_pylist() == [r["key"] for r in rows]
    assert columns.values.to_pylist() == [b"v0", b"v3", b"v4"]
    assert columns.timestamps == [1000, 1000, None]
    assert columns.headers == [(), (("h", b"1"), ("n", None)), ()]


def test_partition_runs_cut_where_the_partition_or_topic_changes() -> None:
    def of(topic: str, partition: int, offset: int) -> Message:
        return Message(topic=topic, partition=partition, offset=offset, value=b"")

    one_topic = [of("t", 0, 0), of("t", 0, 1), of("t", 1, 0), of("t", 0, 2), of("t", 0, 3)]
    two_topics = [of("a", 0, 0), of("b", 0, 0), of("b", 0, 1), of("b", 1, 0)]

    def runs(messages: list[Message], one: bool) -> list[tuple[tuple[str, int], list[int]]]:
        return [(tp, [m.offset() for m in run]) for tp, run in partition_runs(messages, one)]

    assert runs(one_topic, True) == [(("t", 0), [0, 1]), (("t", 1), [0]), (("t", 0), [2, 3])]
    assert runs(one_topic[:2], True) == [(("t", 0), [0, 1])]
    assert runs(two_topics, False) == [(("a", 0), [0]), (("b", 0), [0, 1]), (("b", 1), [0])]
    assert runs([], True) == []
