"""Kafka Connect's config-topic records and a replay of the topic with Connect's semantics.

Keys are plain strings; values are bare compact JSON (Connect's JsonConverter, schemas disabled);
a delete is a tombstone. The records, as ``KafkaConfigBackingStore`` writes and reads them:

- ``connector-<name>`` → ``{"properties":{...}}``: applied at once; a tombstone deletes the
  connector, its committed task configs, task count and buffered task configs.
- ``task-<name>-<n>`` → ``{"properties":{...}}``: buffered ("deferred") until a commit.
- ``commit-<name>`` → ``{"tasks":N}``: applies the buffered task configs if 0..N-1 are all present,
  otherwise marks the connector inconsistent; the buffer is cleared either way.
- ``target-state-<name>`` → ``{"state":"STARTED|PAUSED","state.v2":"STARTED|PAUSED|STOPPED"}``;
  readers prefer ``state.v2`` and fall back on ``state`` (STOPPED is written with state=PAUSED).
- ``tasks-fencing-<name>`` → ``{"task-count":N}``: the task-count record of exactly-once support.
- ``restart-connector-<name>`` → ``{"include-tasks":bool,"only-failed":bool}``.

``session-key`` and ``logger-cluster-<namespace>`` records also live there; they are recognised
and ignored here.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from spark_eos_connect.errors import EosConnectError
from spark_eos_connect.protocol import _javautil, _json


class ConfigRecordError(EosConnectError, ValueError):
    """A config-topic key or value is not in Connect's format."""


class ConfigKind(StrEnum):
    """The kinds of config-topic record, by key prefix."""

    CONNECTOR = "connector"
    TASK = "task"
    COMMIT = "commit"
    TARGET_STATE = "target-state"
    TASK_COUNT = "tasks-fencing"
    RESTART = "restart-connector"
    SESSION_KEY = "session-key"
    LOGGER_LEVEL = "logger-cluster"


class TargetState(StrEnum):
    """A connector's target state."""

    STARTED = "STARTED"
    PAUSED = "PAUSED"
    STOPPED = "STOPPED"


@dataclass(frozen=True)
class ConfigKey:
    """A parsed config-topic key.

    `connector` is the connector name (the logging namespace for LOGGER_LEVEL, empty for
    SESSION_KEY); `task` is set for TASK keys only.
    """

    kind: ConfigKind
    connector: str
    task: int | None = None

    def encode(self) -> str:
        """The key string for this record."""
        if self.kind is ConfigKind.SESSION_KEY:
            return "session-key"
        if self.kind is ConfigKind.TASK:
            if self.task is None:
                raise ConfigRecordError("a task config key needs a task number")
            return task_key(self.connector, self.task)
        return f"{self.kind.value}-{self.connector}"


@dataclass(frozen=True)
class RestartRequest:
    """A restart request read from the config topic."""

    connector: str
    include_tasks: bool = False
    only_failed: bool = False


# Prefixes in the order Connect tests them when reading the topic.
_PREFIXES: tuple[tuple[str, ConfigKind], ...] = (
    ("target-state-", ConfigKind.TARGET_STATE),
    ("connector-", ConfigKind.CONNECTOR),
    ("task-", ConfigKind.TASK),
    ("commit-", ConfigKind.COMMIT),
    ("restart-connector-", ConfigKind.RESTART),
    ("tasks-fencing-", ConfigKind.TASK_COUNT),
    ("logger-cluster-", ConfigKind.LOGGER_LEVEL),
)
_SESSION_KEY = "session-key"


def _check_name(name: object) -> str:
    if not isinstance(name, str):
        raise ConfigRecordError(f"connector name must be a string, got {name!r}")
    return name


def _check_count(value: object, what: str) -> int:
    if not _json.is_int(value):
        raise ConfigRecordError(f"{what} must be an integer, got {value!r}")
    assert isinstance(value, int)
    if not 0 <= value <= _json.INT32_MAX:
        raise ConfigRecordError(f"{what} must be between 0 and {_json.INT32_MAX}, got {value}")
    return value


def connector_key(name: str) -> str:
    """``connector-<name>``."""
    return "connector-" + _check_name(name)


def task_key(name: str, task: int) -> str:
    """``task-<name>-<task>``."""
    return f"task-{_check_name(name)}-{_check_count(task, 'task number')}"


def commit_key(name: str) -> str:
    """``commit-<name>``."""
    return "commit-" + _check_name(name)


def target_state_key(name: str) -> str:
    """``target-state-<name>``."""
    return "target-state-" + _check_name(name)


def task_count_key(name: str) -> str:
    """``tasks-fencing-<name>``: the key of a connector's task-count record."""
    return "tasks-fencing-" + _check_name(name)


def restart_key(name: str) -> str:
    """``restart-connector-<name>``."""
    return "restart-connector-" + _check_name(name)


def _split_task_key(key: str, min_parts: int, name_start: int) -> tuple[str, int] | None:
    """Split `key` like Java's ``key.split("-")``: last part is the task, the middle the name.

    Java drops trailing empty strings, so ``task-a-1-`` still names task 1 of ``a``.
    """
    parts = _javautil.split_dash(key)
    if len(parts) < min_parts:
        return None
    task = _javautil.parse_int(parts[-1])
    if task is None:
        return None
    return "-".join(parts[name_start:-1]), task


def parse_config_key(key: str) -> ConfigKey:
    """Parse a config-topic key the way Connect does.

    A task key's task number is after the *last* dash, so connector names may contain dashes.
    Raises `ConfigRecordError` for keys Connect would discard.
    """
    if not isinstance(key, str):
        raise ConfigRecordError(f"config key must be a string, got {key!r}")
    if key == _SESSION_KEY:
        return ConfigKey(ConfigKind.SESSION_KEY, "")
    for prefix, kind in _PREFIXES:
        if not key.startswith(prefix):
            continue
        if kind is ConfigKind.TASK:
            parsed = _split_task_key(key, 3, 1)
            if parsed is None:
                raise ConfigRecordError(f"config key {key!r} is not a valid task config key")
            return ConfigKey(kind, parsed[0], parsed[1])
        return ConfigKey(kind, key[len(prefix) :])
    raise ConfigRecordError(f"config key {key!r} is not a known config-topic key")


def _loads(raw: object, what: str) -> Any:
    if raw is None:
        raise ConfigRecordError(f"{what} is a tombstone, not a value")
    if not isinstance(raw, bytes | bytearray | memoryview):
        raise ConfigRecordError(f"{what} must be bytes, got {type(raw).__name__}")
    try:
        return _json.loads(bytes(raw))
    except ValueError as exc:
        raise ConfigRecordError(f"{what} is not JSON: {exc}") from exc


def _require_object(value: object, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ConfigRecordError(f"{what} must be a JSON object, got {_json.type_name(value)}")
    return value


def _dumps(value: object) -> bytes:
    try:
        return _json.dumps_bytes(value)
    except ValueError as exc:
        raise ConfigRecordError(str(exc)) from exc


def _check_properties(props: object, what: str) -> dict[str, str | None]:
    if not isinstance(props, Mapping):
        raise ConfigRecordError(f"{what} 'properties' must be a map, got {_json.type_name(props)}")
    for key, value in props.items():
        if not isinstance(key, str):
            raise ConfigRecordError(f"{what} property names must be strings, got {key!r}")
        if value is not None and not isinstance(value, str):
            raise ConfigRecordError(
                f"{what} property {key!r} must be a string or null, got {_json.type_name(value)}"
            )
    return dict(props)


def _properties_from(value: object, what: str) -> dict[str, str | None]:
    return _check_properties(_require_object(value, what).get("properties"), what)


def encode_connector_config(properties: Mapping[str, str | None]) -> bytes:
    """``{"properties":{...}}`` for a connector config (properties in the given order)."""
    return _dumps({"properties": _check_properties(properties, "connector config")})


def decode_connector_config(raw: bytes) -> dict[str, str | None]:
    """The properties of a connector-config value."""
    return _properties_from(_loads(raw, "connector config"), "connector config")


def encode_task_config(properties: Mapping[str, str | None]) -> bytes:
    """``{"properties":{...}}`` for a task config (properties in the given order)."""
    return _dumps({"properties": _check_properties(properties, "task config")})


def decode_task_config(raw: bytes) -> dict[str, str | None]:
    """The properties of a task-config value."""
    return _properties_from(_loads(raw, "task config"), "task config")


def _int_field(value: object, field: str, what: str) -> int:
    obj = _require_object(value, what)
    if field not in obj:
        raise ConfigRecordError(f"{what} has no {field!r} field")
    number = obj[field]
    if not _json.is_int(number) or not _json.INT32_MIN <= number <= _json.INT32_MAX:
        raise ConfigRecordError(f"{what} field {field!r} must be a 32-bit integer, got {number!r}")
    assert isinstance(number, int)
    return number


def encode_commit(tasks: int) -> bytes:
    """``{"tasks":N}``: commits the task configs 0..N-1 written before it."""
    return _dumps({"tasks": _check_count(tasks, "task count")})


def decode_commit(raw: bytes) -> int:
    """The task count of a commit value."""
    return _int_field(_loads(raw, "task commit"), "tasks", "task commit")


def encode_task_count(task_count: int) -> bytes:
    """``{"task-count":N}``: a task-count record."""
    return _dumps({"task-count": _check_count(task_count, "task count")})


def decode_task_count(raw: bytes) -> int:
    """The task count of a task-count record."""
    return _int_field(_loads(raw, "task count record"), "task-count", "task count record")


def _target_state(state: TargetState | str) -> TargetState:
    try:
        return TargetState(state)
    except ValueError:
        allowed = ", ".join(s.value for s in TargetState)
        raise ConfigRecordError(f"target state must be one of {allowed}, got {state!r}") from None


def encode_target_state(state: TargetState | str) -> bytes:
    """``{"state":...,"state.v2":...}``; STOPPED is written with state=PAUSED for old readers."""
    target = _target_state(state)
    legacy = TargetState.PAUSED if target is TargetState.STOPPED else target
    return _dumps({"state": legacy.value, "state.v2": target.value})


def _target_state_from(value: object) -> TargetState:
    obj = _require_object(value, "target state")
    state = obj.get("state.v2")
    if not isinstance(state, str):
        # Written by an older worker (or state.v2 is unusable): fall back on the old field.
        state = obj.get("state")
        if not isinstance(state, str):
            raise ConfigRecordError(
                f"target state has no string 'state' field, got {_json.type_name(state)}"
            )
    return _target_state(state)


def decode_target_state(raw: bytes) -> TargetState:
    """The target state of a target-state value (``state.v2``, else ``state``)."""
    return _target_state_from(_loads(raw, "target state"))


def encode_restart_request(include_tasks: bool, only_failed: bool) -> bytes:
    """``{"include-tasks":bool,"only-failed":bool}``."""
    if not isinstance(include_tasks, bool) or not isinstance(only_failed, bool):
        raise ConfigRecordError("include_tasks and only_failed must be booleans")
    return _dumps({"include-tasks": include_tasks, "only-failed": only_failed})


def _restart_from(connector: str, value: object) -> RestartRequest:
    obj = _require_object(value, "restart request")
    # Like Connect, a missing or non-boolean flag defaults to false.
    include_tasks = obj.get("include-tasks")
    only_failed = obj.get("only-failed")
    return RestartRequest(
        connector,
        include_tasks=include_tasks if isinstance(include_tasks, bool) else False,
        only_failed=only_failed if isinstance(only_failed, bool) else False,
    )


def decode_restart_request(connector: str, raw: bytes) -> RestartRequest:
    """The restart request for `connector` in a restart-request value."""
    return _restart_from(_check_name(connector), _loads(raw, "restart request"))


class ClusterConfigSnapshot:
    """The cluster's connector and task configuration, rebuilt by replaying the config topic.

    Feed every record in offset order to `apply`. Records Connect would log and discard (unknown or
    unparseable keys, malformed values, null task configs, commits or task counts) are counted in
    `skipped`; session-key and logger-level records in `ignored`.

    `generation` counts applied task-config commits (Connect's 0-based ``taskConfigGeneration``
    plus one). As in Connect, a commit bumps it only once the connector has had a task-config
    record since it was (re)created, and a connector tombstone does not reset generations,
    task-count records or commit offsets.
    """

    def __init__(self) -> None:
        self._connector_configs: dict[str, dict[str, str | None]] = {}
        self._committed_task_counts: dict[str, int] = {}
        self._task_configs: dict[tuple[str, int], dict[str, str | None]] = {}
        self._deferred: dict[str, dict[int, dict[str, str | None]]] = {}
        self._inconsistent: set[str] = set()
        self._target_states: dict[str, TargetState] = {}
        self._task_count_records: dict[str, int] = {}
        self._generations: dict[str, int] = {}
        self._pending_fencing: set[str] = set()
        self._commit_offsets: dict[str, int] = {}
        self._task_count_offsets: dict[str, int] = {}
        self._restart_requests: dict[str, RestartRequest] = {}
        self._restart_offsets: dict[str, int] = {}
        self.last_offset = -1
        self.skipped = 0
        self.ignored = 0

    def apply(self, key: str, value: bytes | None, offset: int) -> None:
        """Replay one config-topic record read at `offset`."""
        self.last_offset = offset
        try:
            parsed_key = parse_config_key(key)
            parsed_value = None if value is None else _loads(value, "config value")
            self._apply(parsed_key, parsed_value, offset)
        except ConfigRecordError:
            self.skipped += 1

    def _apply(self, key: ConfigKey, value: Any, offset: int) -> None:
        name = key.connector
        if key.kind is ConfigKind.TARGET_STATE:
            if value is None:
                self._target_states.pop(name, None)
                if name in self._connector_configs:
                    self._target_states[name] = TargetState.STARTED
            else:
                self._target_states[name] = _target_state_from(value)
        elif key.kind is ConfigKind.CONNECTOR:
            if value is None:
                self._delete_connector(name)
            else:
                self._connector_configs[name] = _properties_from(value, "connector config")
                self._target_states.setdefault(name, TargetState.STARTED)
        elif key.kind is ConfigKind.TASK:
            if value is None:
                raise ConfigRecordError(f"task config for {name} task {key.task} is null")
            assert key.task is not None
            props = _properties_from(value, "task config")
            self._deferred.setdefault(name, {})[key.task] = props
        elif key.kind is ConfigKind.COMMIT:
            self._commit(name, _int_field(value, "tasks", "task commit"), offset)
        elif key.kind is ConfigKind.TASK_COUNT:
            self._task_count_records[name] = _int_field(value, "task-count", "task count record")
            self._task_count_offsets[name] = offset
            self._pending_fencing.discard(name)
        elif key.kind is ConfigKind.RESTART:
            self._restart_requests[name] = _restart_from(name, value)
            self._restart_offsets[name] = offset
        else:
            self.ignored += 1

    def _delete_connector(self, name: str) -> None:
        self._connector_configs.pop(name, None)
        self._committed_task_counts.pop(name, None)
        for task_id in [t for t in self._task_configs if t[0] == name]:
            del self._task_configs[task_id]
        self._deferred.pop(name, None)
        self._restart_requests.pop(name, None)
        self._restart_offsets.pop(name, None)

    def _commit(self, name: str, tasks: int, offset: int) -> None:
        deferred = self._deferred.get(name)
        present = set(deferred) if deferred else set()
        if all(i in present for i in range(tasks)):
            if deferred is not None:
                for task, props in deferred.items():
                    self._task_configs[(name, task)] = props
                self._generations[name] = self._generations.get(name, 0) + 1
            self._inconsistent.discard(name)
        else:
            self._inconsistent.add(name)
        if deferred is not None:
            deferred.clear()
        self._committed_task_counts[name] = tasks
        self._commit_offsets[name] = offset
        self._pending_fencing.add(name)

    def connectors(self) -> list[str]:
        """Names of the connectors that have a config, sorted."""
        return sorted(self._connector_configs)

    def contains(self, name: str) -> bool:
        """Whether connector `name` has a config."""
        return name in self._connector_configs

    def connector_config(self, name: str) -> dict[str, str | None] | None:
        """The connector's config, or None if it has none."""
        config = self._connector_configs.get(name)
        return dict(config) if config is not None else None

    def task_configs(self, name: str) -> list[dict[str, str | None]]:
        """The committed task configs 0..N-1 (empty while the connector is inconsistent)."""
        if name in self._inconsistent:
            return []
        configs = []
        for task in range(self._committed_task_counts.get(name, 0)):
            config = self._task_configs.get((name, task))
            if config is None:
                return []
            configs.append(dict(config))
        return configs

    def committed_task_count(self, name: str) -> int | None:
        """N of the connector's latest task commit (``commit-<name>``), or None."""
        return self._committed_task_counts.get(name)

    def target_state(self, name: str) -> TargetState | None:
        """The target state: STARTED for a connector without a target-state record, else None."""
        return self._target_states.get(name)

    def task_count(self, name: str) -> int | None:
        """The task count of the latest task-count record (``tasks-fencing-<name>``), or None."""
        return self._task_count_records.get(name)

    def generation(self, name: str) -> int:
        """How many task-config commits were applied for the connector (0 if none)."""
        return self._generations.get(name, 0)

    def is_inconsistent(self, name: str) -> bool:
        """Whether the latest commit found an incomplete set of task configs."""
        return name in self._inconsistent

    def latest_commit_offset(self, name: str) -> int | None:
        """Offset of the connector's latest task commit record, or None."""
        return self._commit_offsets.get(name)

    def latest_task_count_offset(self, name: str) -> int | None:
        """Offset of the connector's latest task-count record, or None."""
        return self._task_count_offsets.get(name)

    def pending_fencing(self, name: str) -> bool:
        """Connect's "pending fencing": a task commit came after the latest task-count record."""
        return name in self._pending_fencing

    def task_count_record_follows_latest_task_configs(self, name: str) -> bool:
        """Whether a task-count record was written after the connector's latest task commit."""
        task_count_offset = self._task_count_offsets.get(name)
        if task_count_offset is None:
            return False
        commit_offset = self._commit_offsets.get(name)
        return commit_offset is None or task_count_offset > commit_offset

    @property
    def restart_requests(self) -> dict[str, RestartRequest]:
        """The latest restart request per connector (dropped when the connector is deleted)."""
        return dict(self._restart_requests)

    def restart_request_offset(self, name: str) -> int | None:
        """Offset of the connector's latest restart request, or None."""
        return self._restart_offsets.get(name)


class ConfigWrites(abc.ABC):
    """The config topic's writes as Connect makes them; each call is one atomic write (one
    transaction in Kafka), so that a reader never sees part of one. A store implements `_write`.
    """

    @abc.abstractmethod
    def _write(self, records: list[tuple[str, bytes | None]]) -> None:
        """Write `records` (key, value; None: a tombstone) together, or none of them."""

    def put_connector_config(self, name: str, properties: Mapping[str, str | None]) -> None:
        """``connector-<name>``: create or replace the connector's config."""
        self._write([(connector_key(name), encode_connector_config(properties))])

    def put_task_configs(self, name: str, configs: Sequence[Mapping[str, str | None]]) -> None:
        """``task-<name>-0..N-1`` then ``commit-<name>`` {"tasks":N}, together: a reader sees
        either every task config of a generation and its commit, or none of them."""
        records: list[tuple[str, bytes | None]] = [
            (task_key(name, task), encode_task_config(config))
            for task, config in enumerate(configs)
        ]
        records.append((commit_key(name), encode_commit(len(configs))))
        self._write(records)

    def put_task_count(self, name: str, task_count: int) -> None:
        """``tasks-fencing-<name>``: earlier task producers have been fenced."""
        self._write([(task_count_key(name), encode_task_count(task_count))])

    def put_target_state(self, name: str, state: TargetState | str) -> None:
        """``target-state-<name>``: STARTED, PAUSED or STOPPED."""
        self._write([(target_state_key(name), encode_target_state(state))])

    def delete_connector(self, name: str) -> None:
        """Tombstones for the connector's config and target state, together (as Connect)."""
        self._write([(connector_key(name), None), (target_state_key(name), None)])

    def put_restart_request(self, name: str, include_tasks: bool, only_failed: bool) -> None:
        """``restart-connector-<name>``."""
        self._write([(restart_key(name), encode_restart_request(include_tasks, only_failed))])

    def stop_connector(self, name: str) -> None:
        """An empty task set (commit with 0 tasks), then target state STOPPED, together.

        Connect writes them in this order; together means no reader ever sees the empty task
        set with the connector still STARTED (which a running driver would take for a stop and
        resume, and start a new generation that leaves the connector unmodifiable).
        """
        self._write(
            [
                (commit_key(name), encode_commit(0)),
                (target_state_key(name), encode_target_state(TargetState.STOPPED)),
            ]
        )
