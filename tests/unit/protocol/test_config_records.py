"""Kafka Connect's config-topic records and the config replay."""

from __future__ import annotations

import pytest

from spark_eos_connect.errors import EosConnectError
from spark_eos_connect.protocol.config_records import (
    ClusterConfigSnapshot,
    ConfigKey,
    ConfigKind,
    ConfigRecordError,
    RestartRequest,
    TargetState,
    commit_key,
    connector_key,
    decode_commit,
    decode_connector_config,
    decode_restart_request,
    decode_target_state,
    decode_task_config,
    decode_task_count,
    encode_commit,
    encode_connector_config,
    encode_restart_request,
    encode_target_state,
    encode_task_config,
    encode_task_count,
    parse_config_key,
    restart_key,
    target_state_key,
    task_count_key,
    task_key,
)

# Golden values written by hand from the format (compact JSON, schema field order).
CONNECTOR_VALUE = b'{"properties":{"connector.class":"FileStreamSource","tasks.max":"2"}}'
TASK0_VALUE = b'{"properties":{"file":"/tmp/a","topic":"t"}}'
TASK1_VALUE = b'{"properties":{"file":"/tmp/b","topic":"t"}}'
STARTED = b'{"state":"STARTED","state.v2":"STARTED"}'
PAUSED = b'{"state":"PAUSED","state.v2":"PAUSED"}'
STOPPED = b'{"state":"PAUSED","state.v2":"STOPPED"}'


def commit(n: int) -> bytes:
    return b'{"tasks":%d}' % n


def task_count(n: int) -> bytes:
    return b'{"task-count":%d}' % n


# --- keys ------------------------------------------------------------------------------------


def test_key_builders() -> None:
    assert connector_key("my-conn") == "connector-my-conn"
    assert task_key("my-conn", 3) == "task-my-conn-3"
    assert commit_key("my-conn") == "commit-my-conn"
    assert target_state_key("my-conn") == "target-state-my-conn"
    assert task_count_key("my-conn") == "tasks-fencing-my-conn"
    assert restart_key("my-conn") == "restart-connector-my-conn"


def test_key_builders_reject_bad_task_numbers() -> None:
    with pytest.raises(ConfigRecordError):
        task_key("c", -1)
    with pytest.raises(ConfigRecordError):
        task_key("c", True)
    with pytest.raises(ConfigRecordError):
        connector_key(None)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("connector-my-conn", ConfigKey(ConfigKind.CONNECTOR, "my-conn")),
        ("task-my-conn-12", ConfigKey(ConfigKind.TASK, "my-conn", 12)),
        ("task-a-b-c-0", ConfigKey(ConfigKind.TASK, "a-b-c", 0)),
        ("commit-my-conn", ConfigKey(ConfigKind.COMMIT, "my-conn")),
        ("target-state-my-conn", ConfigKey(ConfigKind.TARGET_STATE, "my-conn")),
        ("tasks-fencing-my-conn", ConfigKey(ConfigKind.TASK_COUNT, "my-conn")),
        ("restart-connector-my-conn", ConfigKey(ConfigKind.RESTART, "my-conn")),
        ("session-key", ConfigKey(ConfigKind.SESSION_KEY, "")),
        ("logger-cluster-org.apache", ConfigKey(ConfigKind.LOGGER_LEVEL, "org.apache")),
        # Prefixes are tested in Connect's order; the rest is the connector name.
        ("target-state-connector-x", ConfigKey(ConfigKind.TARGET_STATE, "connector-x")),
        ("connector-", ConfigKey(ConfigKind.CONNECTOR, "")),
    ],
)
def test_parse_config_key(key: str, expected: ConfigKey) -> None:
    parsed = parse_config_key(key)
    assert parsed == expected
    assert parsed.encode() == key


@pytest.mark.parametrize(
    ("key", "name", "task"),
    [
        # Java's split("-") drops trailing empty strings, so trailing dashes are ignored...
        ("task-foo-3-", "foo", 3),
        ("task-foo-3--", "foo", 3),
        # ...but empty parts in the middle stay: a name ending with a dash.
        ("task-foo--1", "foo-", 1),
        ("task--0", "", 0),
        # Integer.parseInt accepts a plus sign and non-ASCII decimal digits.
        ("task-foo-+2", "foo", 2),
        ("task-foo-\u0663", "foo", 3),
    ],
)
def test_parse_task_key_like_java(key: str, name: str, task: int) -> None:
    assert parse_config_key(key) == ConfigKey(ConfigKind.TASK, name, task)


@pytest.mark.parametrize(
    "key",
    ["task-foo", "task-foo-x", "task-foo-", "task-foo-2147483648", "task-", "bogus-x", "", "task"],
)
def test_parse_config_key_rejects(key: str) -> None:
    with pytest.raises(ConfigRecordError):
        parse_config_key(key)


def test_error_hierarchy() -> None:
    assert issubclass(ConfigRecordError, EosConnectError)
    assert issubclass(ConfigRecordError, ValueError)


# --- values ----------------------------------------------------------------------------------


def test_connector_and_task_config_values() -> None:
    props = {"connector.class": "FileStreamSource", "tasks.max": "2"}
    assert encode_connector_config(props) == CONNECTOR_VALUE
    assert decode_connector_config(CONNECTOR_VALUE) == props
    assert encode_task_config({"file": "/tmp/a", "topic": "t"}) == TASK0_VALUE
    assert decode_task_config(TASK0_VALUE) == {"file": "/tmp/a", "topic": "t"}


def test_properties_may_be_null_but_not_other_types() -> None:
    assert encode_connector_config({"a": None}) == b'{"properties":{"a":null}}'
    assert decode_connector_config(b'{"properties":{"a":null}}') == {"a": None}
    with pytest.raises(ConfigRecordError, match="'a'"):
        decode_connector_config(b'{"properties":{"a":1}}')
    with pytest.raises(ConfigRecordError, match="properties"):
        decode_task_config(b'{"properties":[]}')
    with pytest.raises(ConfigRecordError, match="properties"):
        decode_task_config(b"{}")
    with pytest.raises(ConfigRecordError, match="JSON object"):
        decode_connector_config(b'"x"')
    with pytest.raises(ConfigRecordError, match="tombstone"):
        decode_connector_config(None)  # type: ignore[arg-type]
    with pytest.raises(ConfigRecordError, match="not JSON"):
        decode_connector_config(b"{")


def test_commit_and_task_count_values() -> None:
    assert encode_commit(2) == b'{"tasks":2}'
    assert decode_commit(b'{"tasks":2}') == 2
    assert encode_commit(0) == b'{"tasks":0}'
    assert encode_task_count(3) == b'{"task-count":3}'
    assert decode_task_count(b'{"task-count":3}') == 3


@pytest.mark.parametrize("raw", [b'{"tasks":2.0}', b'{"tasks":true}', b'{"tasks":"2"}', b"{}"])
def test_commit_rejects_non_integers(raw: bytes) -> None:
    with pytest.raises(ConfigRecordError, match="tasks"):
        decode_commit(raw)


def test_count_encoders_reject_bad_counts() -> None:
    for bad in (-1, 2**31, 1.0, True):
        with pytest.raises(ConfigRecordError):
            encode_commit(bad)  # type: ignore[arg-type]
        with pytest.raises(ConfigRecordError):
            encode_task_count(bad)  # type: ignore[arg-type]


def test_target_state_values() -> None:
    assert encode_target_state(TargetState.STARTED) == STARTED
    assert encode_target_state("PAUSED") == PAUSED
    # STOPPED is written with state=PAUSED so that older workers pause the connector.
    assert encode_target_state(TargetState.STOPPED) == STOPPED
    assert decode_target_state(STOPPED) is TargetState.STOPPED
    assert decode_target_state(PAUSED) is TargetState.PAUSED
    with pytest.raises(ConfigRecordError, match="target state"):
        encode_target_state("RUNNING")


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (b'{"state":"PAUSED"}', TargetState.PAUSED),  # written by an older worker
        (b'{"state":"STARTED","state.v2":null}', TargetState.STARTED),
        (b'{"state":"PAUSED","state.v2":5}', TargetState.PAUSED),  # unusable v2: fall back
        (b'{"state.v2":"STOPPED"}', TargetState.STOPPED),
    ],
)
def test_target_state_fallbacks(raw: bytes, expected: TargetState) -> None:
    assert decode_target_state(raw) is expected


@pytest.mark.parametrize(
    "raw",
    [
        b'{"state":"PAUSED","state.v2":"BOGUS"}',  # a string v2 is used even if invalid
        b'{"state":"paused"}',
        b"{}",
        b'{"state":1}',
        b'"PAUSED"',
    ],
)
def test_target_state_rejects(raw: bytes) -> None:
    with pytest.raises(ConfigRecordError):
        decode_target_state(raw)


def test_restart_request_values() -> None:
    raw = b'{"include-tasks":true,"only-failed":false}'
    assert encode_restart_request(True, False) == raw
    assert decode_restart_request("c", raw) == RestartRequest("c", True, False)
    # Like Connect, missing or non-boolean flags default to false.
    assert decode_restart_request("c", b'{"only-failed":"yes"}') == RestartRequest("c")
    with pytest.raises(ConfigRecordError):
        decode_restart_request("c", b"[]")
    with pytest.raises(ConfigRecordError):
        encode_restart_request(1, False)  # type: ignore[arg-type]


# --- ClusterConfigSnapshot -------------------------------------------------------------------


class Log:
    """Feeds records to a snapshot with increasing offsets."""

    def __init__(self) -> None:
        self.snap = ClusterConfigSnapshot()
        self.next = 0

    def put(self, key: str, value: bytes | None) -> int:
        offset = self.next
        self.snap.apply(key, value, offset)
        self.next += 1
        return offset


def test_connector_with_committed_tasks() -> None:
    log = Log()
    log.put("connector-fs", CONNECTOR_VALUE)
    log.put("task-fs-0", TASK0_VALUE)
    log.put("task-fs-1", TASK1_VALUE)
    snap = log.snap
    # Task configs are deferred until the commit arrives.
    assert snap.task_configs("fs") == []
    assert snap.generation("fs") == 0
    log.put("commit-fs", commit(2))
    assert snap.connectors() == ["fs"]
    assert snap.contains("fs")
    assert snap.connector_config("fs") == {
        "connector.class": "FileStreamSource",
        "tasks.max": "2",
    }
    assert snap.task_configs("fs") == [
        {"file": "/tmp/a", "topic": "t"},
        {"file": "/tmp/b", "topic": "t"},
    ]
    assert snap.committed_task_count("fs") == 2
    assert snap.generation("fs") == 1
    assert snap.target_state("fs") is TargetState.STARTED
    assert not snap.is_inconsistent("fs")
    assert snap.last_offset == 3
    assert snap.skipped == 0


def test_unknown_connector() -> None:
    snap = ClusterConfigSnapshot()
    assert snap.connector_config("x") is None
    assert snap.task_configs("x") == []
    assert snap.target_state("x") is None
    assert snap.task_count("x") is None
    assert snap.committed_task_count("x") is None
    assert snap.generation("x") == 0
    assert not snap.task_count_record_follows_latest_task_configs("x")
    assert snap.last_offset == -1


def test_incomplete_commit_marks_connector_inconsistent() -> None:
    log = Log()
    log.put("connector-fs", CONNECTOR_VALUE)
    log.put("task-fs-1", TASK1_VALUE)
    log.put("commit-fs", commit(2))  # task 0 missing (compacted away)
    snap = log.snap
    assert snap.is_inconsistent("fs")
    assert snap.task_configs("fs") == []
    assert snap.generation("fs") == 0
    assert snap.committed_task_count("fs") == 2
    # The buffer was cleared: task 1 must be written again before the next commit.
    log.put("task-fs-0", TASK0_VALUE)
    log.put("commit-fs", commit(2))
    assert snap.is_inconsistent("fs")
    log.put("task-fs-0", TASK0_VALUE)
    log.put("task-fs-1", TASK1_VALUE)
    log.put("commit-fs", commit(2))
    assert not snap.is_inconsistent("fs")
    assert len(snap.task_configs("fs")) == 2
    assert snap.generation("fs") == 1


def test_compacted_log_with_extra_task_configs_is_consistent() -> None:
    # From KafkaConfigBackingStore's comment: after shrinking from 2 tasks to 1 and compaction,
    # the log holds a stale task 1 before task 0; only 0..N-1 must be present.
    log = Log()
    log.put("connector-fs", CONNECTOR_VALUE)
    log.put("task-fs-1", TASK1_VALUE)
    log.put("task-fs-0", TASK0_VALUE)
    log.put("commit-fs", commit(1))
    assert not log.snap.is_inconsistent("fs")
    assert log.snap.task_configs("fs") == [{"file": "/tmp/a", "topic": "t"}]


def test_commit_without_task_records_does_not_bump_generation() -> None:
    # Connect bumps the generation only if the connector had task-config records since it was
    # (re)created; once it has, an empty commit (stopping) bumps it.
    log = Log()
    log.put("connector-fs", CONNECTOR_VALUE)
    log.put("commit-fs", commit(0))
    assert log.snap.generation("fs") == 0
    assert not log.snap.is_inconsistent("fs")
    log.put("task-fs-0", TASK0_VALUE)
    log.put("commit-fs", commit(1))
    assert log.snap.generation("fs") == 1
    log.put("commit-fs", commit(0))
    assert log.snap.generation("fs") == 2
    assert log.snap.task_configs("fs") == []


def test_stop_writes_empty_task_set_then_stopped() -> None:
    log = Log()
    log.put("connector-fs", CONNECTOR_VALUE)
    log.put("task-fs-0", TASK0_VALUE)
    log.put("commit-fs", commit(1))
    log.put("commit-fs", commit(0))
    log.put("target-state-fs", STOPPED)
    snap = log.snap
    assert snap.task_configs("fs") == []
    assert snap.committed_task_count("fs") == 0
    assert snap.target_state("fs") is TargetState.STOPPED
    assert snap.generation("fs") == 2


def test_target_state_written_before_connector_config_is_kept() -> None:
    log = Log()
    log.put("target-state-fs", PAUSED)
    assert log.snap.target_state("fs") is TargetState.PAUSED
    log.put("connector-fs", CONNECTOR_VALUE)
    assert log.snap.target_state("fs") is TargetState.PAUSED


def test_target_state_tombstone() -> None:
    log = Log()
    log.put("connector-fs", CONNECTOR_VALUE)
    log.put("target-state-fs", PAUSED)
    # With the connector still configured, the default STARTED comes back.
    log.put("target-state-fs", None)
    assert log.snap.target_state("fs") is TargetState.STARTED
    log.put("target-state-fs", STOPPED)
    log.put("connector-fs", None)
    assert log.snap.target_state("fs") is TargetState.STOPPED  # until its own tombstone
    log.put("target-state-fs", None)
    assert log.snap.target_state("fs") is None


def test_connector_tombstone_deletes_connector_and_tasks() -> None:
    log = Log()
    log.put("connector-fs", CONNECTOR_VALUE)
    log.put("task-fs-0", TASK0_VALUE)
    log.put("commit-fs", commit(1))
    log.put("tasks-fencing-fs", task_count(1))
    log.put("restart-connector-fs", b'{"include-tasks":true,"only-failed":true}')
    log.put("task-fs-0", TASK0_VALUE)  # buffered, then dropped by the tombstone
    log.put("connector-fs", None)
    log.put("target-state-fs", None)
    snap = log.snap
    assert snap.connectors() == []
    assert snap.connector_config("fs") is None
    assert snap.task_configs("fs") == []
    assert snap.committed_task_count("fs") is None
    assert snap.target_state("fs") is None
    assert snap.restart_requests == {}
    # As in Connect, generations and task-count records survive deletion.
    assert snap.generation("fs") == 1
    assert snap.task_count("fs") == 1
    # Re-created: the buffered task config was dropped, so a commit of 1 is inconsistent.
    log.put("connector-fs", CONNECTOR_VALUE)
    log.put("commit-fs", commit(1))
    assert snap.is_inconsistent("fs")


def test_task_count_records_and_fencing() -> None:
    log = Log()
    log.put("connector-fs", CONNECTOR_VALUE)
    log.put("task-fs-0", TASK0_VALUE)
    commit_offset = log.put("commit-fs", commit(1))
    snap = log.snap
    assert snap.latest_commit_offset("fs") == commit_offset
    assert snap.pending_fencing("fs")
    assert not snap.task_count_record_follows_latest_task_configs("fs")
    fencing_offset = log.put("tasks-fencing-fs", task_count(1))
    assert snap.task_count("fs") == 1
    assert snap.latest_task_count_offset("fs") == fencing_offset
    assert not snap.pending_fencing("fs")
    assert snap.task_count_record_follows_latest_task_configs("fs")
    # Unrelated records do not change the answer.
    log.put("target-state-fs", PAUSED)
    assert snap.task_count_record_follows_latest_task_configs("fs")
    # New task configs: a new round of fencing is needed.
    log.put("task-fs-0", TASK0_VALUE)
    log.put("task-fs-1", TASK1_VALUE)
    log.put("commit-fs", commit(2))
    assert snap.generation("fs") == 2
    assert not snap.task_count_record_follows_latest_task_configs("fs")
    assert snap.task_count("fs") == 1
    log.put("tasks-fencing-fs", task_count(2))
    assert snap.task_count_record_follows_latest_task_configs("fs")
    assert snap.task_count("fs") == 2


def test_inconsistent_commit_still_needs_fencing() -> None:
    log = Log()
    log.put("connector-fs", CONNECTOR_VALUE)
    log.put("tasks-fencing-fs", task_count(0))
    log.put("commit-fs", commit(1))  # no task 0: inconsistent
    assert log.snap.is_inconsistent("fs")
    assert log.snap.pending_fencing("fs")
    assert not log.snap.task_count_record_follows_latest_task_configs("fs")


def test_task_count_record_without_commit() -> None:
    log = Log()
    log.put("tasks-fencing-fs", task_count(4))
    assert log.snap.task_count_record_follows_latest_task_configs("fs")
    assert not log.snap.pending_fencing("fs")


def test_restart_requests_keep_latest_per_connector() -> None:
    log = Log()
    log.put("connector-a", CONNECTOR_VALUE)
    log.put("connector-b", CONNECTOR_VALUE)
    log.put("restart-connector-a", b'{"include-tasks":false,"only-failed":false}')
    offset = log.put("restart-connector-a", b'{"include-tasks":true,"only-failed":true}')
    log.put("restart-connector-b", b'{"include-tasks":true,"only-failed":false}')
    snap = log.snap
    assert snap.restart_requests == {
        "a": RestartRequest("a", include_tasks=True, only_failed=True),
        "b": RestartRequest("b", include_tasks=True, only_failed=False),
    }
    assert snap.restart_request_offset("a") == offset
    assert snap.restart_request_offset("zzz") is None


def test_malformed_and_ignored_records() -> None:
    log = Log()
    log.put("connector-fs", CONNECTOR_VALUE)
    log.put("bogus-key", b"{}")
    log.put("connector-fs", b"not json")
    log.put("connector-fs", b'{"properties":"x"}')
    log.put("task-fs-0", None)  # null task configs are ignored
    log.put("commit-fs", None)
    log.put("commit-fs", b'{"tasks":"1"}')
    log.put("tasks-fencing-fs", b"{}")
    log.put("target-state-fs", b'{"state":"RUNNING"}')
    log.put("restart-connector-fs", None)
    log.put("task-fs-x", TASK0_VALUE)
    log.put("session-key", b'{"key":"AAAA","algorithm":"HmacSHA256","creation-timestamp":1}')
    log.put("logger-cluster-org.apache", b'{"level":"DEBUG"}')
    snap = log.snap
    assert snap.skipped == 10
    assert snap.ignored == 2
    assert snap.last_offset == 12
    # The valid state survived.
    assert snap.connector_config("fs") == {"connector.class": "FileStreamSource", "tasks.max": "2"}
    assert snap.target_state("fs") is TargetState.STARTED
    assert snap.committed_task_count("fs") is None
    assert snap.task_count("fs") is None


def test_connector_config_update_replaces_config() -> None:
    log = Log()
    log.put("connector-fs", CONNECTOR_VALUE)
    log.put("connector-fs", encode_connector_config({"connector.class": "X"}))
    assert log.snap.connector_config("fs") == {"connector.class": "X"}


def test_accessors_return_copies() -> None:
    log = Log()
    log.put("connector-fs", CONNECTOR_VALUE)
    log.put("task-fs-0", TASK0_VALUE)
    log.put("commit-fs", commit(1))
    config = log.snap.connector_config("fs")
    assert config is not None
    config["tasks.max"] = "99"
    log.snap.task_configs("fs")[0]["file"] = "changed"
    assert log.snap.connector_config("fs") == {
        "connector.class": "FileStreamSource",
        "tasks.max": "2",
    }
    assert log.snap.task_configs("fs")[0]["file"] == "/tmp/a"


def test_connector_names_with_dashes() -> None:
    log = Log()
    log.put("connector-my-file-source", CONNECTOR_VALUE)
    log.put("task-my-file-source-0", TASK0_VALUE)
    log.put("task-my-file-source-1", TASK1_VALUE)
    log.put("commit-my-file-source", commit(2))
    assert len(log.snap.task_configs("my-file-source")) == 2
