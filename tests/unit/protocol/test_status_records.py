"""Kafka Connect's status-topic records and the status replay."""

from __future__ import annotations

import pytest

from spark_eos_connect.errors import EosConnectError
from spark_eos_connect.protocol.status_records import (
    StatusKey,
    StatusKind,
    StatusRecord,
    StatusRecordError,
    StatusSnapshot,
    StatusState,
    connector_status_key,
    decode_connector_status,
    decode_task_status,
    encode_connector_status,
    encode_task_status,
    parse_status_key,
    task_status_key,
)

# Golden values written by hand: fields in schema order, trace written as null when absent.
RUNNING = b'{"state":"RUNNING","trace":null,"worker_id":"10.0.0.1:8083","generation":5}'
FAILED = (
    b'{"state":"FAILED","trace":"org.example.Boom: bad\\n\\tat X.y(X.java:1)",'
    b'"worker_id":"w:8083","generation":7}'
)


# --- keys ------------------------------------------------------------------------------------


def test_key_builders() -> None:
    assert connector_status_key("my-conn") == "status-connector-my-conn"
    assert task_status_key("my-conn", 2) == "status-task-my-conn-2"
    with pytest.raises(StatusRecordError):
        connector_status_key("")
    with pytest.raises(StatusRecordError):
        task_status_key("c", -1)


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("status-connector-my-conn", StatusKey(StatusKind.CONNECTOR, "my-conn")),
        ("status-task-my-conn-2", StatusKey(StatusKind.TASK, "my-conn", 2)),
        ("status-task-a-b-c-10", StatusKey(StatusKind.TASK, "a-b-c", 10)),
        ("status-task-x-0", StatusKey(StatusKind.TASK, "x", 0)),
    ],
)
def test_parse_status_key(key: str, expected: StatusKey) -> None:
    parsed = parse_status_key(key)
    assert parsed == expected
    assert parsed.encode() == key


def test_parse_task_key_drops_trailing_empty_parts_like_java_split() -> None:
    assert parse_status_key("status-task-foo-4-") == StatusKey(StatusKind.TASK, "foo", 4)
    assert parse_status_key("status-task-foo--4") == StatusKey(StatusKind.TASK, "foo-", 4)


@pytest.mark.parametrize(
    "key",
    [
        "status-connector-",
        "status-task-foo",
        "status-task-foo-x",
        "status-task-foo-",
        "status-task-foo-99999999999",
        "status-topic-t:connector-c",
        "something-else",
    ],
)
def test_parse_status_key_rejects(key: str) -> None:
    with pytest.raises(StatusRecordError):
        parse_status_key(key)


def test_error_hierarchy() -> None:
    assert issubclass(StatusRecordError, EosConnectError)


# --- values ----------------------------------------------------------------------------------


def test_encode_golden_values() -> None:
    running = StatusRecord(StatusState.RUNNING, "10.0.0.1:8083", 5)
    assert encode_connector_status(running) == RUNNING
    assert encode_task_status(running) == RUNNING
    failed = StatusRecord(
        StatusState.FAILED, "w:8083", 7, trace="org.example.Boom: bad\n\tat X.y(X.java:1)"
    )
    assert encode_task_status(failed) == FAILED


def test_decode_golden_values() -> None:
    assert decode_connector_status(RUNNING) == StatusRecord(
        StatusState.RUNNING, "10.0.0.1:8083", 5, None
    )
    record = decode_task_status(FAILED)
    assert record.state is StatusState.FAILED
    assert record.trace == "org.example.Boom: bad\n\tat X.y(X.java:1)"
    assert record.generation == 7


def test_decode_tolerates_missing_trace_and_field_order() -> None:
    raw = b'{"generation":1,"worker_id":"w","state":"PAUSED"}'
    assert decode_connector_status(raw) == StatusRecord(StatusState.PAUSED, "w", 1)


@pytest.mark.parametrize("state", [s for s in StatusState if s is not StatusState.STOPPED])
def test_all_task_states_round_trip(state: StatusState) -> None:
    record = StatusRecord(state, "w", 0)
    assert decode_task_status(encode_task_status(record)) == record


def test_stopped_is_for_connectors_only() -> None:
    stopped = StatusRecord(StatusState.STOPPED, "w", 3)
    raw = encode_connector_status(stopped)
    assert raw == b'{"state":"STOPPED","trace":null,"worker_id":"w","generation":3}'
    assert decode_connector_status(raw) == stopped
    with pytest.raises(StatusRecordError, match="STOPPED"):
        encode_task_status(stopped)
    with pytest.raises(StatusRecordError, match="STOPPED"):
        decode_task_status(raw)


@pytest.mark.parametrize(
    "raw",
    [
        b'{"state":"DESTROYED","trace":null,"worker_id":"w","generation":1}',
        b'{"state":"running","trace":null,"worker_id":"w","generation":1}',
        b'{"trace":null,"worker_id":"w","generation":1}',
        b'{"state":"RUNNING","trace":5,"worker_id":"w","generation":1}',
        b'{"state":"RUNNING","trace":null,"worker_id":null,"generation":1}',
        b'{"state":"RUNNING","trace":null,"worker_id":"w"}',
        b'{"state":"RUNNING","trace":null,"worker_id":"w","generation":1.5}',
        b'{"state":"RUNNING","trace":null,"worker_id":"w","generation":true}',
        b'{"state":"RUNNING","trace":null,"worker_id":"w","generation":4294967296}',
        b"[]",
        b"nope",
    ],
)
def test_decode_rejects_malformed(raw: bytes) -> None:
    with pytest.raises(StatusRecordError):
        decode_connector_status(raw)


def test_encode_rejects_bad_records() -> None:
    with pytest.raises(StatusRecordError):
        encode_connector_status(StatusRecord("BOGUS", "w", 1))  # type: ignore[arg-type]
    with pytest.raises(StatusRecordError):
        encode_connector_status(StatusRecord(StatusState.RUNNING, "w", 2**31))
    with pytest.raises(StatusRecordError):
        encode_connector_status(StatusRecord(StatusState.RUNNING, None, 1))  # type: ignore[arg-type]


def test_encode_accepts_state_strings() -> None:
    record = StatusRecord("UNASSIGNED", "w", 0)  # type: ignore[arg-type]
    assert encode_connector_status(record).startswith(b'{"state":"UNASSIGNED"')


# --- StatusSnapshot --------------------------------------------------------------------------


def _status(state: StatusState, generation: int = 1) -> bytes:
    return encode_connector_status(StatusRecord(state, "w:8083", generation))


def test_snapshot_tracks_latest_statuses() -> None:
    snap = StatusSnapshot()
    snap.apply("status-connector-c", _status(StatusState.UNASSIGNED))
    snap.apply("status-connector-c", _status(StatusState.RUNNING, 2))
    snap.apply("status-task-c-1", _status(StatusState.RUNNING))
    snap.apply("status-task-c-0", _status(StatusState.FAILED))
    snap.apply("status-connector-d", _status(StatusState.PAUSED))
    assert snap.connectors() == ["c", "d"]
    connector = snap.connector_status("c")
    assert connector is not None
    assert connector.state is StatusState.RUNNING
    assert connector.generation == 2
    assert list(snap.task_statuses("c")) == [0, 1]
    task0 = snap.task_status("c", 0)
    assert task0 is not None
    assert task0.state is StatusState.FAILED
    assert snap.task_status("c", 5) is None
    assert snap.task_statuses("d") == {}
    assert snap.skipped == 0


def test_snapshot_task_tombstone_removes_one_task() -> None:
    snap = StatusSnapshot()
    snap.apply("status-task-c-0", _status(StatusState.RUNNING))
    snap.apply("status-task-c-1", _status(StatusState.RUNNING))
    snap.apply("status-task-c-1", None)
    assert list(snap.task_statuses("c")) == [0]
    snap.apply("status-task-c-0", None)
    snap.apply("status-task-c-7", None)  # nothing to remove
    assert snap.task_statuses("c") == {}


def test_snapshot_connector_tombstone_removes_its_tasks_too() -> None:
    snap = StatusSnapshot()
    snap.apply("status-connector-c", _status(StatusState.RUNNING))
    snap.apply("status-task-c-0", _status(StatusState.RUNNING))
    snap.apply("status-task-c-1", _status(StatusState.RUNNING))
    snap.apply("status-task-other-0", _status(StatusState.RUNNING))
    snap.apply("status-connector-c", None)
    assert snap.connector_status("c") is None
    assert snap.task_statuses("c") == {}
    assert list(snap.task_statuses("other")) == [0]


def test_snapshot_skips_malformed_and_ignores_topic_records() -> None:
    snap = StatusSnapshot()
    snap.apply("status-task-c-0", _status(StatusState.RUNNING))
    snap.apply("status-task-c-0", _status(StatusState.STOPPED))  # not a task state
    snap.apply("status-task-c-x", _status(StatusState.RUNNING))
    snap.apply("status-connector-", _status(StatusState.RUNNING))
    snap.apply("status-connector-c", b"{}")
    snap.apply("garbage", b"{}")
    snap.apply(
        "status-topic-orders:connector-c",
        b'{"topic":{"name":"orders","connector":"c","task":0,"discoverTimestamp":1}}',
    )
    snap.apply("status-topic-orders:connector-c", None)
    assert snap.skipped == 5
    assert snap.ignored == 2
    task0 = snap.task_status("c", 0)
    assert task0 is not None
    assert task0.state is StatusState.RUNNING
    assert snap.connectors() == []
