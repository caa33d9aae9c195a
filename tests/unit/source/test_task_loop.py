"""The pure parts of live source tasks: when a kept task may continue, stale partitions,
internal topics, and the rows of committed records."""

from __future__ import annotations

from dataclasses import replace

from spark_eos_connect.source.records import COMMITTED_ROW_SCHEMA, committed_rows, to_bytes
from spark_eos_connect.source.task_loop import (
    BatchResult,
    LiveSourceTask,
    internal_topics,
    same_generation,
    stale_partitions,
)
from spark_eos_connect.storage.memory_log import MemoryLog, MemoryTaskClients
from spark_eos_connect.testing import example_plan as plan

PARTITION = {"filename": "/data/in.txt"}


def test_partition_is_stale_when_its_committed_offset_moved_since_planning() -> None:
    planned = {'{"filename":"/data/in.txt"}': {"position": 4}}
    other = {"filename": "/data/other.txt"}

    assert stale_partitions(planned, [PARTITION], lambda p: {"position": 4}) == []
    assert stale_partitions(planned, [PARTITION], lambda p: {"position": 9}) == [PARTITION]
    assert stale_partitions(planned, [other], lambda p: None) == []
    assert stale_partitions(planned, [other], lambda p: {"position": 1}) == [other]


def test_a_new_generation_or_config_is_not_the_same_task() -> None:
    current = plan([])

    assert same_generation(current, plan([(PARTITION, {"position": 4})], max_records=99))
    assert not same_generation(current, plan([], generation_commit_offset=9))
    assert not same_generation(current, plan([], task_config={"topic": "u"}))
    assert not same_generation(current, plan([], exactly_once=False))


def test_a_kept_task_matches_only_while_its_own_partitions_are_where_it_left_them() -> None:
    log = MemoryLog()
    log.create_topic("eosconnect-offsets", 5)
    stream = {"stream": 0}
    first = plan(
        [],
        task_class="spark_eos_connect.testing.CounterSourceTask",
        task_config={
            "topic": "data",
            "streams": "1",
            "streams.assigned": "0",
            "records.per.poll": "4",
        },
        offsets_positions={},
        offsets_topic_partitions=5,
        config_topic="",
        max_records=4,
    )
    live = LiveSourceTask({}, first, clients=MemoryTaskClients(log))
    for _ in live.run_batch(first, 0, BatchResult()):
        pass
    other = ({"stream": 1}, {"position": 1})

    assert live.matches(replace(first, committed=[(stream, {"position": 4})]))
    assert live.matches(replace(first, committed=[(stream, {"position": 4}), other]))
    assert not live.matches(replace(first, committed=[(stream, {"position": 9})]))  # altered
    assert not live.matches(first)  # reset, or planned before its commit
    live.close()
    assert not live.matches(replace(first, committed=[(stream, {"position": 4})]))


def test_internal_topics_are_the_frameworks_own() -> None:
    dedicated = plan([], offsets_topic="mine", mirror_offsets_topic="eosconnect-offsets")

    assert internal_topics(dedicated) == {
        "mine",
        "eosconnect-offsets",
        "eosconnect-configs",
        "eosconnect-status",
    }


def test_committed_records_become_one_row_each() -> None:
    batch = committed_rows(["t", "t"], [0, 1], [7, 3])

    assert batch.schema == COMMITTED_ROW_SCHEMA
    assert batch.to_pylist() == [
        {"topic": "t", "partition": 0, "offset": 7},
        {"topic": "t", "partition": 1, "offset": 3},
    ]


def test_values_convert_to_kafka_bytes() -> None:
    assert to_bytes("é") == "é".encode()
    assert to_bytes({"a": 1}) == b'{"a":1}'
    assert to_bytes(None) is None
