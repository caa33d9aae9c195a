"""The submitted-offsets tracker of a live source task, through its public methods on the
in-memory producer's delivery reports: the last offset of each source partition, the rows of
acknowledged records, refusals, `commit_record` material, and what a commit or an abort leaves."""

from __future__ import annotations

from spark_eos_connect.api.source import RecordMetadata, SourceRecord
from spark_eos_connect.kafka.producers import ProducerRequestError
from spark_eos_connect.source.submitted import SubmittedOffsets
from spark_eos_connect.storage.memory_log import MemoryLog, MemoryProducer

FILE = {"filename": "/data/in.txt"}
OTHER = {"filename": "/data/other.txt"}
KEY = '{"filename":"/data/in.txt"}'


def record(value: str, position: int) -> SourceRecord:
    return SourceRecord(FILE, {"position": position}, "data", value)


def test_the_last_submitted_offset_of_each_partition_is_pending() -> None:
    submitted = SubmittedOffsets()

    submitted.submit(FILE, {"position": 1})
    submitted.submit(OTHER, {"position": 7})
    submitted.submit(FILE, {"position": 2})

    assert submitted.pending() == [(FILE, {"position": 2}), (OTHER, {"position": 7})]


def test_acknowledged_records_become_rows_and_refusals_are_kept_in_order() -> None:
    log = MemoryLog()
    submitted = SubmittedOffsets()
    producer = MemoryProducer(log, on_delivery=submitted.delivered)
    producer.refuse("denied", "TOPIC_AUTHORIZATION_FAILED", "Topic authorization failed")
    producer.produce("data", b"a")
    producer.produce("denied", b"b")
    producer.produce("data", b"c")

    assert submitted.acknowledged_rows() == 0  # reports wait for poll or flush
    producer.flush()

    assert submitted.acknowledged_rows() == 2
    assert submitted.rows().to_pylist() == [
        {"topic": "data", "partition": 0, "offset": 0},
        {"topic": "data", "partition": 0, "offset": 1},
    ]
    [(topic, error)] = submitted.take_refusals()
    assert topic == "denied" and isinstance(error, ProducerRequestError)
    assert submitted.take_refusals() == []


def test_a_commit_returns_the_records_for_commit_record_and_remembers_the_offsets() -> None:
    log = MemoryLog()
    submitted = SubmittedOffsets([(FILE, {"position": 0})])
    producer = MemoryProducer(log)
    a, dropped = record("a", 1), record("b", 2)
    producer.produce("data", b"a", on_delivery=lambda e, m: submitted.delivered_record(a, e, m))
    submitted.dropped(dropped)
    submitted.submit(FILE, {"position": 2})
    producer.flush()

    assert submitted.acknowledged() == [(dropped, None), (a, RecordMetadata("data", 0, 0))]
    acknowledged = submitted.committed(submitted.pending())

    assert acknowledged == [(dropped, None), (a, RecordMetadata("data", 0, 0))]
    assert submitted.pending() == [] and submitted.acknowledged() == []
    assert submitted.rows().num_rows == 0
    assert submitted.left_as({KEY: {"position": 2}})
    assert not submitted.left_as({KEY: {"position": 0}})


def test_only_partitions_this_task_committed_decide_whether_it_continues() -> None:
    submitted = SubmittedOffsets([(FILE, {"position": 4})])

    assert submitted.left_as({})  # planned offsets it never committed do not matter
    submitted.committed([(OTHER, {"position": 1})])

    assert submitted.left_as({'{"filename":"/data/other.txt"}': {"position": 1}, KEY: None})
    assert not submitted.left_as({})  # reset


def test_an_abort_forgets_the_open_transaction_but_not_what_was_committed() -> None:
    log = MemoryLog()
    submitted = SubmittedOffsets()
    submitted.committed([(FILE, {"position": 1})])
    producer = MemoryProducer(log, on_delivery=submitted.delivered)
    producer.refuse("denied", "TOPIC_AUTHORIZATION_FAILED", "Topic authorization failed")
    producer.produce("data", b"a")
    producer.produce("denied", b"b")
    producer.flush()
    submitted.submit(FILE, {"position": 3})
    submitted.dropped(record("c", 3))

    submitted.discard()

    assert submitted.pending() == [] and submitted.acknowledged() == []
    assert submitted.rows().num_rows == 0 and submitted.refusals == []
    assert submitted.left_as({KEY: {"position": 1}})
