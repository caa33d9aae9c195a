"""Kafka Connect's status-topic records and a replay of the topic.

Keys are ``status-connector-<name>`` and ``status-task-<name>-<n>``; values are the compact JSON
object ``{"state":...,"trace":...,"worker_id":...,"generation":N}`` in that field order, as
``KafkaStatusBackingStore`` writes them. ``trace`` is the only optional field and is written as
``null`` when absent. A tombstone on a connector key deletes the connector's status *and all of its
task statuses*; one on a task key deletes that task's status. Connect also writes
``status-topic-<topic>:connector-<name>`` records (active topics); they are recognised and ignored.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from spark_eos_connect.errors import EosConnectError
from spark_eos_connect.protocol import _javautil, _json

CONNECTOR_STATUS_PREFIX = "status-connector-"
TASK_STATUS_PREFIX = "status-task-"
TOPIC_STATUS_PREFIX = "status-topic-"


class StatusRecordError(EosConnectError, ValueError):
    """A status-topic key or value is not in Connect's format."""


class StatusState(StrEnum):
    """States a connector or task status can have (STOPPED is for connectors only)."""

    UNASSIGNED = "UNASSIGNED"
    RUNNING = "RUNNING"
    PAUSED = "PAUSED"
    FAILED = "FAILED"
    RESTARTING = "RESTARTING"
    STOPPED = "STOPPED"


class StatusKind(StrEnum):
    """What a status key refers to."""

    CONNECTOR = "connector"
    TASK = "task"


@dataclass(frozen=True)
class StatusKey:
    """A parsed status key; `task` is set for task keys only."""

    kind: StatusKind
    connector: str
    task: int | None = None

    def encode(self) -> str:
        """The key string."""
        if self.kind is StatusKind.TASK:
            if self.task is None:
                raise StatusRecordError("a task status key needs a task number")
            return task_status_key(self.connector, self.task)
        return connector_status_key(self.connector)


@dataclass(frozen=True)
class StatusRecord:
    """A connector or task status: state, optional error trace, owning worker, generation."""

    state: StatusState
    worker_id: str
    generation: int
    trace: str | None = None


def connector_status_key(name: str) -> str:
    """``status-connector-<name>``."""
    if not isinstance(name, str) or not name:
        raise StatusRecordError(f"connector name must be a non-empty string, got {name!r}")
    return CONNECTOR_STATUS_PREFIX + name


def task_status_key(name: str, task: int) -> str:
    """``status-task-<name>-<task>``."""
    if not isinstance(name, str):
        raise StatusRecordError(f"connector name must be a string, got {name!r}")
    if not _json.is_int(task) or not 0 <= task <= _json.INT32_MAX:
        raise StatusRecordError(f"task number must be a non-negative 32-bit integer, got {task!r}")
    return f"{TASK_STATUS_PREFIX}{name}-{task}"


def parse_status_key(key: str) -> StatusKey:
    """Parse a connector or task status key the way Connect does.

    A task key is split on dashes like Java's ``split("-")`` (trailing empty parts dropped); the
    last part is the task number and the parts between ``status-task`` and it form the name.
    """
    if not isinstance(key, str):
        raise StatusRecordError(f"status key must be a string, got {key!r}")
    if key.startswith(CONNECTOR_STATUS_PREFIX):
        name = key[len(CONNECTOR_STATUS_PREFIX) :]
        if not name:
            raise StatusRecordError(f"status key {key!r} has an empty connector name")
        return StatusKey(StatusKind.CONNECTOR, name)
    if key.startswith(TASK_STATUS_PREFIX):
        parts = _javautil.split_dash(key)
        task = _javautil.parse_int(parts[-1]) if len(parts) >= 4 else None
        if task is None:
            raise StatusRecordError(f"status key {key!r} is not a valid task status key")
        return StatusKey(StatusKind.TASK, "-".join(parts[2:-1]), task)
    raise StatusRecordError(f"status key {key!r} is neither a connector nor a task status key")


def _state(value: object, for_task: bool) -> StatusState:
    try:
        state = StatusState(value)  # type: ignore[arg-type]
    except ValueError:
        allowed = ", ".join(s.value for s in StatusState)
        raise StatusRecordError(f"status state must be one of {allowed}, got {value!r}") from None
    if for_task and state is StatusState.STOPPED:
        raise StatusRecordError("STOPPED is a connector state; tasks cannot be STOPPED")
    return state


def encode_status(record: StatusRecord, *, for_task: bool) -> bytes:
    """``{"state":...,"trace":...,"worker_id":...,"generation":N}`` for a status record."""
    state = _state(record.state, for_task)
    if record.trace is not None and not isinstance(record.trace, str):
        raise StatusRecordError(f"trace must be a string or None, got {record.trace!r}")
    if not isinstance(record.worker_id, str):
        raise StatusRecordError(f"worker_id must be a string, got {record.worker_id!r}")
    generation = record.generation
    if not _json.is_int(generation) or not _json.INT32_MIN <= generation <= _json.INT32_MAX:
        raise StatusRecordError(f"generation must be a 32-bit integer, got {generation!r}")
    value = {
        "state": state.value,
        "trace": record.trace,
        "worker_id": record.worker_id,
        "generation": generation,
    }
    try:
        return _json.dumps_bytes(value)
    except ValueError as exc:
        raise StatusRecordError(str(exc)) from exc


def encode_connector_status(record: StatusRecord) -> bytes:
    """The value of a ``status-connector-<name>`` record."""
    return encode_status(record, for_task=False)


def encode_task_status(record: StatusRecord) -> bytes:
    """The value of a ``status-task-<name>-<n>`` record (STOPPED is rejected)."""
    return encode_status(record, for_task=True)


def decode_status(raw: bytes, *, for_task: bool) -> StatusRecord:
    """Parse a status value; `state`, `worker_id` and an integer `generation` are required."""
    if not isinstance(raw, bytes | bytearray | memoryview):
        raise StatusRecordError(f"status value must be bytes, got {type(raw).__name__}")
    try:
        value: Any = _json.loads(bytes(raw))
    except ValueError as exc:
        raise StatusRecordError(f"status value is not JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise StatusRecordError(f"status value must be an object, got {_json.type_name(value)}")
    state = _state(value.get("state"), for_task)
    trace = value.get("trace")
    if trace is not None and not isinstance(trace, str):
        raise StatusRecordError(f"status 'trace' must be a string or null, got {trace!r}")
    worker_id = value.get("worker_id")
    if not isinstance(worker_id, str):
        raise StatusRecordError(f"status 'worker_id' must be a string, got {worker_id!r}")
    generation = value.get("generation")
    if not isinstance(generation, int) or isinstance(generation, bool):
        raise StatusRecordError(f"status 'generation' must be an integer, got {generation!r}")
    if not _json.INT32_MIN <= generation <= _json.INT32_MAX:
        raise StatusRecordError(f"status 'generation' {generation} does not fit in 32 bits")
    return StatusRecord(state, worker_id, generation, trace)


def decode_connector_status(raw: bytes) -> StatusRecord:
    """Parse the value of a connector status record."""
    return decode_status(raw, for_task=False)


def decode_task_status(raw: bytes) -> StatusRecord:
    """Parse the value of a task status record (STOPPED is rejected)."""
    return decode_status(raw, for_task=True)


class StatusWrites(abc.ABC):
    """The status topic's writes as Connect makes them (keys, values, tombstones); a store
    implements `_send` to put one record on its topic."""

    @abc.abstractmethod
    def _send(self, key: str, value: bytes | None) -> None:
        """Write `value` (None: a tombstone) under `key`."""

    def put_connector_status(
        self,
        name: str,
        state: StatusState | str,
        worker_id: str,
        generation: int,
        trace: str | None = None,
    ) -> None:
        """Write ``status-connector-<name>``."""
        record = StatusRecord(StatusState(state), worker_id, generation, trace)
        self._send(connector_status_key(name), encode_connector_status(record))

    def put_task_status(
        self,
        name: str,
        task: int,
        state: StatusState | str,
        worker_id: str,
        generation: int,
        trace: str | None = None,
    ) -> None:
        """Write ``status-task-<name>-<task>`` (STOPPED is not a task state)."""
        record = StatusRecord(StatusState(state), worker_id, generation, trace)
        self._send(task_status_key(name, task), encode_task_status(record))

    def delete_connector_status(self, name: str) -> None:
        """Tombstone for the connector's status."""
        self._send(connector_status_key(name), None)

    def delete_task_status(self, name: str, task: int) -> None:
        """Tombstone for one task's status."""
        self._send(task_status_key(name, task), None)


class StatusSnapshot:
    """Connector and task statuses rebuilt by replaying the status topic in order.

    Malformed keys or values are skipped and counted in `skipped`; topic-status records are
    counted in `ignored`.
    """

    def __init__(self) -> None:
        self._connectors: dict[str, StatusRecord] = {}
        self._written_at: dict[str, int | None] = {}
        self._tasks: dict[str, dict[int, StatusRecord]] = {}
        self.skipped = 0
        self.ignored = 0

    def apply(self, key: str, value: bytes | None, timestamp_ms: int | None = None) -> None:
        """Replay one status-topic record (`timestamp_ms`: its Kafka timestamp, if known)."""
        if isinstance(key, str) and key.startswith(TOPIC_STATUS_PREFIX):
            self.ignored += 1
            return
        try:
            parsed = parse_status_key(key)
            if parsed.kind is StatusKind.CONNECTOR:
                if value is None:
                    self._connectors.pop(parsed.connector, None)
                    self._written_at.pop(parsed.connector, None)
                    self._tasks.pop(parsed.connector, None)
                else:
                    self._connectors[parsed.connector] = decode_connector_status(value)
                    self._written_at[parsed.connector] = timestamp_ms
                return
            assert parsed.task is not None
            if value is None:
                tasks = self._tasks.get(parsed.connector)
                if tasks is not None:
                    tasks.pop(parsed.task, None)
                    if not tasks:
                        del self._tasks[parsed.connector]
            else:
                record = decode_task_status(value)
                self._tasks.setdefault(parsed.connector, {})[parsed.task] = record
        except StatusRecordError:
            self.skipped += 1

    def connector_written_at(self, name: str) -> int | None:
        """The Kafka timestamp (ms) of the connector's latest status record, if known."""
        return self._written_at.get(name)

    def connectors(self) -> list[str]:
        """Connectors that have a connector status, sorted."""
        return sorted(self._connectors)

    def connector_status(self, name: str) -> StatusRecord | None:
        """The connector's latest status, or None."""
        return self._connectors.get(name)

    def task_status(self, name: str, task: int) -> StatusRecord | None:
        """The task's latest status, or None."""
        return self._tasks.get(name, {}).get(task)

    def task_statuses(self, name: str) -> dict[int, StatusRecord]:
        """``{task number: status}`` for the connector's tasks, by task number."""
        return dict(sorted(self._tasks.get(name, {}).items()))
