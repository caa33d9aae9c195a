"""How a live source task hands records to its producer, on the in-memory log: bytes as they
are, the last offset of each source partition submitted, partitions, headers and timestamps
kept, the framework's internal topics refused, a record the producer refuses at once named,
and the chain's dropped records handed on for `commit_record`."""

from __future__ import annotations

from typing import Any

import pytest

from spark_eos_connect.api.data import Schema
from spark_eos_connect.api.source import RecordMetadata, SourceRecord
from spark_eos_connect.errors import EosConnectError
from spark_eos_connect.kafka.producers import ProducerRequestError
from spark_eos_connect.source.conversion import RecordPreparer
from spark_eos_connect.source.plan import RecordConversion
from spark_eos_connect.source.sender import InternalTopicError, RecordSender, internal_topics
from spark_eos_connect.source.submitted import SubmittedOffsets
from spark_eos_connect.storage.memory_log import MemoryLog, MemoryProducer
from spark_eos_connect.testing import example_plan

A, B = {"file": "a"}, {"file": "b"}
PLAN = example_plan([])
DROP_AUDIT = {
    "transforms": "drop",
    "transforms.drop.type": "org.apache.kafka.connect.transforms.Filter",
    "transforms.drop.predicate": "isAudit",
    "predicates": "isAudit",
    "predicates.isAudit.type": "org.apache.kafka.connect.transforms.predicates.TopicNameMatches",
    "predicates.isAudit.pattern": "audit",
}


def sender(
    log: MemoryLog,
    callbacks: bool = False,
    preparer: RecordPreparer | None = None,
    dropped: list[SourceRecord] | None = None,
) -> tuple[RecordSender, SubmittedOffsets, MemoryProducer]:
    submitted = SubmittedOffsets()
    producer = MemoryProducer(log, on_delivery=submitted.delivered)
    sent = RecordSender(
        PLAN,
        producer,
        submitted,
        preparer,
        callbacks,
        (dropped if dropped is not None else []).append,
        lambda error, topic: EosConnectError(f"refused on {topic}: {error}"),
    )
    return sent, submitted, producer


def values(log: MemoryLog, topic: str = "data") -> list[Any]:
    return [(r.key, r.value) for r in log.read_committed(topic)]


def test_records_go_as_bytes_and_the_last_offset_of_each_partition_is_submitted() -> None:
    log = MemoryLog()
    send, submitted, producer = sender(log)

    send.send(
        [
            SourceRecord(A, {"p": 1}, "data", b"x", key=b"k"),
            SourceRecord(B, {"p": 7}, "data", "y"),
            SourceRecord(A, {"p": 2}, "data", {"n": 1}),
            SourceRecord(None, None, "data", None),
        ]
    )
    producer.flush()

    assert values(log) == [(b"k", b"x"), (None, b"y"), (None, b'{"n":1}'), (None, None)]
    assert submitted.pending() == [(B, {"p": 7}), (A, {"p": 2})]  # in order of their last record
    assert submitted.acknowledged_rows() == 4


def test_partition_headers_and_timestamp_are_kept() -> None:
    log = MemoryLog()
    log.create_topic("data", 3)
    send, _, producer = sender(log)

    send.send([SourceRecord(A, {"p": 1}, "data", b"x", 2, headers=[("h", "v")], timestamp=5)])
    producer.flush()

    [record] = log.read_committed("data")
    assert (record.partition, record.headers, record.timestamp) == (2, (("h", b"v"),), 5)


def test_a_task_wanting_commit_record_gets_each_records_metadata() -> None:
    log = MemoryLog()
    send, submitted, producer = sender(log, callbacks=True)
    record = SourceRecord(A, {"p": 1}, "data", b"x")

    send.send([record])
    producer.flush()

    assert submitted.acknowledged() == [(record, RecordMetadata("data", 0, 0))]


def test_the_frameworks_internal_topics_are_refused() -> None:
    send, _, _ = sender(MemoryLog())

    assert "eosconnect-offsets" in internal_topics(PLAN)
    with pytest.raises(InternalTopicError, match="produced a record to 'eosconnect-offsets'"):
        send.send([SourceRecord(A, {"p": 1}, "eosconnect-offsets", b"x")])


class Refusing(MemoryProducer):
    def produce(self, topic: str, value: Any = None, key: Any = None, **extra: Any) -> None:
        raise ProducerRequestError("TOPIC_AUTHORIZATION_FAILED", "Topic authorization failed")


def test_a_record_the_producer_refuses_at_once_is_named_with_its_topic() -> None:
    submitted = SubmittedOffsets()
    send = RecordSender(
        PLAN,
        Refusing(MemoryLog()),
        submitted,
        None,
        False,
        lambda record: None,
        lambda error, topic: EosConnectError(f"refused on {topic}"),
    )

    with pytest.raises(EosConnectError, match="refused on data"):
        send.send([SourceRecord(A, {"p": 1}, "data", b"x")])
    assert submitted.pending() == []  # nothing handed over, no offset moves


def test_a_dropped_record_moves_its_offset_and_is_handed_on_for_commit_record() -> None:
    log = MemoryLog()
    dropped: list[SourceRecord] = []
    preparer = RecordPreparer(RecordConversion(options=DROP_AUDIT), DROP_AUDIT, "c-0")
    send, submitted, producer = sender(log, callbacks=True, preparer=preparer, dropped=dropped)
    kept = SourceRecord(A, {"p": 1}, "data", "x", value_schema=Schema.STRING)
    audit = SourceRecord(A, {"p": 2}, "audit", "y", value_schema=Schema.STRING)

    send.send([kept, audit])
    producer.flush()

    assert values(log) == [(None, b"x")] and values(log, "audit") == []
    assert dropped == [audit]
    assert submitted.pending() == [(A, {"p": 2})]
    assert submitted.acknowledged() == [(kept, RecordMetadata("data", 0, 0))]
    preparer.close()
