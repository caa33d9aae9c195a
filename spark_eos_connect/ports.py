"""The engine's ports: what the source loop, the coordinator and the herder need from the world.

Each is a small structural interface (`typing.Protocol`) with two kinds of implementation: the
Kafka ones (`storage/`, `kafka/`), and the in-memory twins of `storage.memory`, on which the
engine is unit-tested without a broker (Kafka Connect's `MemoryConfigBackingStore` and friends).
Nothing here does I/O; the engine's classes take these in their constructors.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from spark_eos_connect.api.sink import TopicPartition
from spark_eos_connect.errors import EosConnectError
from spark_eos_connect.protocol.config_records import ClusterConfigSnapshot, TargetState
from spark_eos_connect.protocol.offsets_format import OffsetsSnapshot
from spark_eos_connect.protocol.status_records import StatusSnapshot, StatusState

SourcePartition = dict[str, Any]
SourceOffset = dict[str, Any] | None


class ConfigStoreError(EosConnectError):
    """The config topic cannot be used as asked."""


class ConfigReadTimeoutError(ConfigStoreError, TimeoutError):
    """The config topic could not be read to its end in time (REST answers 500)."""


class LeaderFencedError(ConfigStoreError):
    """A newer leader claimed the config topic; re-read it to the end and decide again."""


DeliveryCallback = Callable[[Any, Any], None]
"""A producer's delivery report: `(error or None, message)`, the message answering `topic()`,
`partition()` and `offset()`."""


class TransactionalProducer(Protocol):
    """The part of a Kafka producer the exactly-once loop uses (confluent-kafka's `Producer`):
    `produce` hands a record over, delivery reports arrive through `on_delivery` while `poll` or
    `flush` run; the calls raise the client's exception (`kafka.producers` reads it). A
    transactional one has claimed its transactional id (fencing every older producer of it); an
    idempotent one is never asked for transactions."""

    def produce(
        self,
        topic: str,
        value: Any = None,
        key: Any = None,
        *,
        partition: int = ...,
        on_delivery: DeliveryCallback | None = ...,
        timestamp: int = ...,
        headers: Any = ...,
    ) -> None: ...

    def poll(self, timeout: float = ...) -> int: ...

    def flush(self, timeout: float = ...) -> int: ...

    def begin_transaction(self) -> None: ...

    def commit_transaction(self, timeout: float = ...) -> None: ...

    def abort_transaction(self, timeout: float = ...) -> None: ...


class OffsetsLog(Protocol):
    """A read_committed replay of one offsets topic into `snapshot` that catches up from where
    it stopped (`storage.offsets.OffsetsTopicView`); `read_new` returns the records it read
    (`kafka.clients.ConsumedRecord`s: headers included)."""

    @property
    def snapshot(self) -> OffsetsSnapshot: ...

    @property
    def positions(self) -> dict[int, int]: ...

    @positions.setter
    def positions(self, positions: dict[int, int]) -> None: ...

    def read_new(
        self,
        partitions: Iterable[int] | None = None,
        timeout_s: float = 60.0,
        wait_for_open_transactions: bool = True,
    ) -> Sequence[Any]: ...

    def close(self) -> None: ...


class ConfigWriter(Protocol):
    """The config-topic leader: every write is one transaction of a fenceable producer. Once a
    newer leader is claimed, every write raises `LeaderFencedError` and adds nothing."""

    @property
    def fenced(self) -> bool:
        """Whether a newer leader took over (every write would then fail)."""
        ...

    def put_connector_config(self, name: str, properties: Mapping[str, str | None]) -> None: ...

    def put_task_configs(self, name: str, configs: Sequence[Mapping[str, str | None]]) -> None: ...

    def put_task_count(self, name: str, task_count: int) -> None: ...

    def put_target_state(self, name: str, state: TargetState | str) -> None: ...

    def delete_connector(self, name: str) -> None: ...

    def put_restart_request(self, name: str, include_tasks: bool, only_failed: bool) -> None: ...

    def stop_connector(self, name: str) -> None: ...

    def close(self) -> None: ...


class ConfigStore(Protocol):
    """The config topic: a replay read to its end on request, and its leader's writer."""

    def ensure_topic(
        self, timeout_s: float = 30.0, replication_factor: int | None = None
    ) -> bool: ...

    def read_to_end(self, timeout_s: float = 30.0) -> ClusterConfigSnapshot: ...

    @property
    def snapshot(self) -> ClusterConfigSnapshot: ...

    def leader(self, timeout_s: float = 30.0) -> ConfigWriter: ...

    def close(self) -> None: ...


class StatusStore(Protocol):
    """The status topic: connector and task states."""

    def ensure_topic(
        self, partitions: int = ..., timeout_s: float = 30.0, replication_factor: int | None = None
    ) -> bool: ...

    def put_connector_status(
        self,
        name: str,
        state: StatusState | str,
        worker_id: str,
        generation: int,
        trace: str | None = None,
    ) -> None: ...

    def put_task_status(
        self,
        name: str,
        task: int,
        state: StatusState | str,
        worker_id: str,
        generation: int,
        trace: str | None = None,
    ) -> None: ...

    def delete_connector_status(self, name: str) -> None: ...

    def delete_task_status(self, name: str, task: int) -> None: ...

    def read_to_end(self, timeout_s: float = 30.0) -> StatusSnapshot: ...

    def close(self) -> None: ...


class GroupOffsets(Protocol):
    """A sink connector's consumer group (``connect-<name>``): its committed offsets.

    Failures raise an `EosConnectError` whose message names the connector: a `ValueError` one
    when the request is at fault (the group has active members, a partition does not exist), a
    `PermissionError` one naming an ACL the principal lacks.
    """

    def committed(self, group: str) -> dict[TopicPartition, int]:
        """The group's committed offsets (empty when the group does not exist)."""
        ...

    def active_members(self, group: str) -> int: ...

    def alter(self, connector: str, group: str, offsets: Mapping[TopicPartition, int]) -> None: ...

    def delete(self, connector: str, group: str) -> None: ...


@dataclass(frozen=True)
class OffsetTopics:
    """Where a source connector's offsets live: the global topic and an optional dedicated one."""

    global_topic: str
    dedicated: str | None = None

    @property
    def primary(self) -> str:
        """The topic tasks write transactionally: the dedicated one if any."""
        return self.dedicated or self.global_topic

    @property
    def secondary(self) -> str | None:
        """The global topic when a (different) dedicated topic is primary, else None."""
        if self.dedicated and self.dedicated != self.global_topic:
            return self.global_topic
        return None

    def all(self) -> list[str]:
        """Every topic holding the connector's offsets, global first."""
        if self.dedicated and self.secondary:
            return [self.global_topic, self.dedicated]
        return [self.global_topic]


OffsetEntries = dict[str, tuple[SourcePartition, SourceOffset]]
"""``{partition_key: (source partition, offset)}``: one topic's latest entry per partition."""


class SourceOffsetStore(Protocol):
    """Source connectors' offsets in the offsets topics, as KIP-875's endpoints read and write
    them (Connect's `OffsetBackingStore`)."""

    def per_topic(self, connector: str, topics: OffsetTopics) -> dict[str, OffsetEntries]:
        """Per topic of `topics.all()`, the connector's entries (none for a missing topic)."""
        ...

    def write(
        self,
        connector: str,
        topics: OffsetTopics,
        pairs: Sequence[tuple[SourcePartition, SourceOffset]],
    ) -> None:
        """Offsets (None: a tombstone) to the primary topic in one transaction (with
        exactly-once support), then to the secondary one."""
        ...

    def fence_tasks(self, connector: str, task_count: int) -> None:
        """Fence the task producers ``<group.id>-<connector>-0..task_count-1`` (exactly-once
        support only), so that no zombie task commits offsets after the change."""
        ...


class Clock(Protocol):
    """Monotonic time, injectable so that time-driven rules are tested without waiting."""

    def monotonic(self) -> float: ...


class CommitHooks(Protocol):
    """Called at the named points of a commit path (`poll`, `before_commit`, `after_commit`,
    `put`, `before_group_commit`, `during_group_commit`). Production runs with none; the crash
    tests install `testing.faults` hooks, which kill or fail the process at a chosen point."""

    def reached(self, point: str, batch_id: int | None) -> None: ...

    def armed(self, point: str) -> bool:
        """Whether `reached(point, ...)` may do anything (lets a caller skip extra work)."""
        ...
