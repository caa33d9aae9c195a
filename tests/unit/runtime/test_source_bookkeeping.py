"""Pure bookkeeping of the source runtime: rows as Arrow, the stale-attempt check, manifests,
fault specs and the per-batch summary."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from spark_eos_connect.api.source import SourceRecord
from spark_eos_connect.runtime.faults import armed_batches
from spark_eos_connect.runtime.records import SOURCE_ROW_SCHEMA, records_to_arrow, to_bytes
from spark_eos_connect.runtime.source_plan import (
    MissingManifestError,
    SourceTaskPlan,
    read_manifest,
    write_manifest,
)
from spark_eos_connect.runtime.source_writer import TaskWriteResult, stale_partitions
from spark_eos_connect.spark.source_writer import summarize

PARTITION = {"filename": "/data/in.txt"}


def plan(committed: list[tuple[dict[str, object], dict[str, object]]]) -> SourceTaskPlan:
    return SourceTaskPlan(
        connector="c",
        task=0,
        task_class="x.Y",
        task_config={"topic": "t"},
        transactional_id="eosconnect-c-0",
        exactly_once=True,
        transaction_boundary="poll",
        transaction_interval_ms=60000,
        offsets_topic="eosconnect-offsets",
        offsets_topic_partitions=25,
        mirror_offsets_topic=None,
        mirror_offsets_topic_partitions=25,
        committed=committed,  # type: ignore[arg-type]
        offsets_positions={3: 17},
        max_records=10,
        max_poll_duration_ms=1000,
    )


def test_records_become_one_arrow_row_each_with_json_positions() -> None:
    records = [
        SourceRecord(PARTITION, {"position": 4}, "t", "abc", key=b"k", headers=[("h", b"v")]),
        SourceRecord(PARTITION, {"position": 9}, "t", None, partition=2, timestamp=1000),
    ]

    batch = records_to_arrow(records)

    assert batch.schema == SOURCE_ROW_SCHEMA
    rows = batch.to_pylist()
    assert rows[0]["value"] == b"abc" and rows[0]["key"] == b"k"
    assert rows[0]["headers"] == [{"key": "h", "value": b"v"}]
    assert rows[1]["partition"] == 2 and rows[1]["value"] is None
    assert rows[1]["timestamp"].timestamp() == 1.0
    assert [json.loads(r["source_offset"]) for r in rows] == [{"position": 4}, {"position": 9}]
    assert {r["source_partition"] for r in rows} == {'{"filename":"/data/in.txt"}'}


def test_values_convert_to_kafka_bytes() -> None:
    assert to_bytes("é") == "é".encode()
    assert to_bytes({"a": 1}) == b'{"a":1}'
    assert to_bytes(None) is None


def test_partition_is_stale_when_its_committed_offset_moved_since_planning() -> None:
    planned = plan([(PARTITION, {"position": 4})])
    other = {"filename": "/data/other.txt"}

    assert stale_partitions(planned, [PARTITION], lambda p: {"position": 4}) == []
    assert stale_partitions(planned, [PARTITION], lambda p: {"position": 9}) == [PARTITION]
    assert stale_partitions(planned, [other], lambda p: None) == []
    assert stale_partitions(planned, [other], lambda p: {"position": 1}) == [other]


def test_manifest_round_trips_and_is_consumed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EOSCONNECT_SPOOL_DIR", str(tmp_path))
    original = plan([(PARTITION, {"position": 4})])

    write_manifest("attempt-1", original)

    assert read_manifest("attempt-1") == original
    with pytest.raises(MissingManifestError, match="same Spark stage"):
        read_manifest("attempt-1")


def test_fault_spec_arms_points_per_batch() -> None:
    spec = "poll@1, after_commit@3,before_commit@x"

    assert armed_batches("poll", spec) == {1}
    assert armed_batches("after_commit", spec) == {3}
    assert armed_batches("before_commit", spec) == set()
    assert armed_batches("poll", None) == set()


def test_batch_summary_adds_up_task_results() -> None:
    results = [
        TaskWriteResult("c", 0, records=5, transactions=1, offsets_committed=1),
        TaskWriteResult("c", 1, records=0, stale_rows_skipped=7),
    ]

    assert summarize(4, results) == (
        "batch 4: 5 records, 1 transactions, 1 offsets committed, 7 stale rows skipped "
        "(2 tasks, exactly-once)"
    )


def test_boundary_markers_index_rows_across_the_whole_batch() -> None:
    from spark_eos_connect.api.source import TransactionContext
    from spark_eos_connect.runtime.source_reader import boundary_markers

    records = [SourceRecord(PARTITION, {"position": i}, "t", str(i)) for i in range(5)]
    context = TransactionContext()
    context.commit_transaction(records[1])
    context.abort_transaction(records[3])
    context.commit_transaction()

    assert boundary_markers(records, context, first_row=10) == [
        (11, "commit"),
        (13, "abort"),
        (14, "commit"),
    ]
    assert boundary_markers(records, context, first_row=15) == []


@pytest.mark.parametrize(
    "offset",
    [
        {"position": 12},
        {"a": 1, "b.c": -2},
        {"position": True},
        {"x y": 1},
        {"p": 1.5},
        {"p": 's"q'},
        {"é": 3},
        {"n": None},
    ],
)
def test_offset_json_fast_path_equals_compact_json(offset: dict[str, object]) -> None:
    from spark_eos_connect.runtime.records import offset_json

    assert offset_json(offset) == json.dumps(offset, separators=(",", ":"), ensure_ascii=False)
