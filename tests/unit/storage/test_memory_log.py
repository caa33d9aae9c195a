"""The in-memory Kafka log and its clients: read_committed visibility up to the last stable
offset, aborted transactions hidden, transactional ids fencing older producers (read by
`kafka.producers` as librdkafka's fencing is), delivery reports served on poll and flush, and the
offsets log catching up incrementally."""

from __future__ import annotations

from typing import Any

import pytest

from spark_eos_connect.kafka.producers import (
    ProducerRequestError,
    commit_transaction,
    is_fenced,
    txn_requires_abort,
)
from spark_eos_connect.kafka.retry import KafkaTimeoutError
from spark_eos_connect.protocol.murmur2 import default_partition
from spark_eos_connect.protocol.offsets_format import encode_offset_key, encode_offset_value
from spark_eos_connect.storage.memory_log import MemoryLog, MemoryOffsetsLog, MemoryProducer


def values(records: list[Any]) -> list[bytes | None]:
    return [record.value for record in records]


def test_a_transaction_is_read_committed_only_once_committed() -> None:
    log = MemoryLog()
    producer = MemoryProducer(log, "tx-1")
    producer.begin_transaction()
    producer.produce("t", b"a", headers=[("h", b"1")])
    producer.produce("t", b"b")

    assert log.read_committed("t") == []
    assert values(log.read_uncommitted("t")) == [b"a", b"b"]
    assert log.last_stable_offset("t", 0) == 0

    producer.commit_transaction()

    assert values(log.read_committed("t")) == [b"a", b"b"]
    assert log.read_committed("t")[0].headers == (("h", b"1"),)
    assert log.high_watermark("t", 0) == 3  # the commit marker takes an offset, as in Kafka


def test_an_open_transaction_holds_back_later_committed_records() -> None:
    log = MemoryLog()
    slow, plain = MemoryProducer(log, "tx-slow"), MemoryProducer(log)
    slow.begin_transaction()
    slow.produce("t", b"open")
    plain.produce("t", b"after")

    assert log.read_committed("t") == []  # read_committed stops at the last stable offset
    slow.abort_transaction()
    assert values(log.read_committed("t")) == [b"after"]
    assert values(log.read_uncommitted("t")) == [b"open", b"after"]


def test_a_newer_producer_fences_the_older_and_aborts_its_open_transaction() -> None:
    log = MemoryLog()
    zombie = MemoryProducer(log, "tx")
    zombie.begin_transaction()
    zombie.produce("t", b"zombie")

    newer = MemoryProducer(log, "tx")

    assert zombie.fenced and not newer.fenced
    with pytest.raises(ProducerRequestError) as raised:
        zombie.commit_transaction()
    assert is_fenced(raised.value)
    with pytest.raises(ProducerRequestError):
        zombie.produce("t", b"more")
    newer.begin_transaction()
    newer.produce("t", b"newer")
    newer.commit_transaction()
    assert values(log.read_committed("t")) == [b"newer"]


def test_delivery_reports_wait_for_poll_or_flush() -> None:
    log = MemoryLog()
    log.create_topic("t", 3)
    reports: list[tuple[Any, str, int, int]] = []
    producer = MemoryProducer(
        log, on_delivery=lambda e, m: reports.append((e, m.topic(), m.partition(), m.offset()))
    )

    keyed = default_partition(b"k", 3)
    producer.produce("t", b"v", b"k")
    producer.produce("t", b"w", partition=(keyed + 1) % 3)
    assert reports == []
    assert producer.poll(0) == 2
    assert reports == [(None, "t", keyed, 0), (None, "t", (keyed + 1) % 3, 0)]


def test_a_refused_record_is_reported_and_its_transaction_must_be_aborted() -> None:
    log = MemoryLog()
    errors: list[Any] = []
    producer = MemoryProducer(log, "tx", on_delivery=lambda e, m: errors.append(e))
    producer.refuse("denied", "TOPIC_AUTHORIZATION_FAILED", "Broker: Topic authorization failed")
    producer.begin_transaction()
    producer.produce("denied", b"x")

    with pytest.raises(ProducerRequestError) as raised:
        commit_transaction(producer, 5)

    assert [e.name for e in errors] == ["TOPIC_AUTHORIZATION_FAILED"]
    assert txn_requires_abort(raised.value) and not is_fenced(raised.value)
    producer.abort_transaction()
    assert log.read_uncommitted("denied") == []


def test_the_offsets_log_catches_up_from_where_it_stopped() -> None:
    log = MemoryLog()
    log.create_topic("offsets", 2)
    writer = MemoryProducer(log, "tx")
    key = encode_offset_key("c", {"s": 1})

    def commit(position: int) -> None:
        writer.begin_transaction()
        writer.produce("offsets", encode_offset_value({"position": position}), key, partition=1)
        writer.commit_transaction()

    view = MemoryOffsetsLog(log, "offsets")
    commit(1)
    assert len(view.read_new()) == 1
    commit(2)
    [record] = view.read_new()

    assert view.snapshot.offset("c", {"s": 1}) == {"position": 2}
    assert record.partition == 1 and view.positions == {1: 4}
    assert view.read_new() == []


def test_the_offsets_log_reads_to_the_last_stable_offset_or_fails_waiting() -> None:
    log = MemoryLog()
    writer = MemoryProducer(log, "tx")
    writer.begin_transaction()
    writer.produce("offsets", encode_offset_value({"p": 1}), encode_offset_key("c", {"s": 1}))
    view = MemoryOffsetsLog(log, "offsets")

    assert view.read_new(wait_for_open_transactions=False) == []
    with pytest.raises(KafkaTimeoutError):
        view.read_new(timeout_s=1)
    writer.commit_transaction()
    assert len(view.read_new()) == 1
