"""The one write of source offsets (`storage.offsets.OffsetsWriter`), on the in-memory log:
Connect's key and value bytes, Kafka's default partition for the key, tombstones, headers on
the first record only, and delivery reports to the callback given."""

from __future__ import annotations

from typing import Any

from spark_eos_connect.protocol.murmur2 import default_partition
from spark_eos_connect.protocol.offsets_format import encode_offset_key
from spark_eos_connect.storage.memory_log import MemoryLog, MemoryProducer
from spark_eos_connect.storage.offsets import OffsetsWriter

TOPIC = "eosconnect-offsets"
A, B = {"file": "a"}, {"file": "b"}


def test_offsets_become_connects_records_on_the_keys_default_partitions() -> None:
    log = MemoryLog()
    log.create_topic(TOPIC, 5)
    producer = MemoryProducer(log)
    reports: list[Any] = []

    written = OffsetsWriter(TOPIC, 5, "c").write(
        producer,
        [(A, {"position": 3}), (B, None)],
        on_delivery=lambda error, message: reports.append((error, message.topic())),
        first_headers=[("h", b"1")],
    )
    producer.flush()

    assert written == 2 and reports == [(None, TOPIC), (None, TOPIC)]
    records = sorted(log.read_committed(TOPIC), key=lambda r: r.key)
    assert [(r.key, r.value) for r in records] == [
        (b'["c",{"file":"a"}]', b'{"position":3}'),
        (b'["c",{"file":"b"}]', None),
    ]
    for record, partition in zip(records, (A, B), strict=True):
        assert record.partition == default_partition(encode_offset_key("c", partition), 5)
    assert [r.headers for r in records] == [(("h", b"1"),), ()]


def test_in_a_transaction_the_offsets_are_read_committed_only_once_committed() -> None:
    log = MemoryLog()
    log.create_topic(TOPIC, 5)
    producer = MemoryProducer(log, "tx")
    producer.begin_transaction()

    OffsetsWriter(TOPIC, 5, "c").write(producer, [(A, {"position": 1})])

    assert log.read_committed(TOPIC) == []
    producer.commit_transaction()
    assert len(log.read_committed(TOPIC)) == 1
