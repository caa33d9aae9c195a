"""In-memory twins of the Kafka stores (Kafka Connect's `MemoryConfigBackingStore` and friends).

Each twin keeps the records its Kafka topic would hold, encoded by the same `protocol` encoders,
and replays them with the same snapshot classes, so that whatever runs on the twins (the herder,
the engine) runs the real protocol logic without a broker. Several stores may share one
`MemoryTopic`, as workers share the internal topics: a herder and a driver, say.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from spark_eos_connect.api.sink import TopicPartition
from spark_eos_connect.kafka.group_errors import group_in_use
from spark_eos_connect.ports import (
    LeaderFencedError,
    OffsetEntries,
    OffsetTopics,
    SourceOffset,
    SourcePartition,
)
from spark_eos_connect.protocol.config_records import (
    ClusterConfigSnapshot,
    ConfigWrites,
)
from spark_eos_connect.protocol.offsets_format import (
    OffsetsSnapshot,
    encode_offset_key,
    encode_offset_value,
)
from spark_eos_connect.protocol.status_records import (
    StatusSnapshot,
    StatusWrites,
)

Record = tuple[bytes, bytes | None]
"""(key, value): a committed record; a None value is a tombstone."""


def wall_clock_ms() -> int:
    """Now, in ms since the epoch (a Kafka record's timestamp)."""
    return int(time.time() * 1000)


class MemoryTopic:
    """The committed records of one topic, in offset order. `append` adds a whole batch at
    once, as a committed transaction does: a reader sees all of it or none. Thread-safe.

    `clock` timestamps the records (ms; tests give a fake one to age them)."""

    def __init__(self, name: str = "topic", clock: Callable[[], int] = wall_clock_ms) -> None:
        self.name = name
        self.created = False
        self._records: list[Record] = []
        self._written_at: list[int] = []
        self._clock = clock
        self._lock = threading.Lock()

    def append(self, records: Sequence[Record]) -> None:
        """Commit `records` at the end of the topic (each timestamped now, in ms)."""
        with self._lock:
            self.created = True
            self._records.extend(records)
            self._written_at.extend([self._clock()] * len(records))

    def written_at(self, position: int) -> int:
        """The timestamp (ms) of the record at offset `position`."""
        with self._lock:
            return self._written_at[position]

    def read_from(self, position: int) -> list[Record]:
        """Every record at offset `position` or later."""
        with self._lock:
            return self._records[position:]

    @property
    def records(self) -> list[Record]:
        """All records, oldest first."""
        return self.read_from(0)


class MemoryConfigTopic(MemoryTopic):
    """The config topic, and the claims on its leader's transactional id: each claim fences the
    earlier ones, as ``init_transactions`` does for ``connect-cluster-<group.id>``."""

    def __init__(self, name: str = "configs") -> None:
        super().__init__(name)
        self.epoch = 0

    def claim(self) -> int:
        """A new leader's epoch; every writer with a lower one is fenced from now on."""
        with self._lock:
            self.epoch += 1
            return self.epoch

    def append_as(self, epoch: int, records: Sequence[Record]) -> bool:
        """Commit `records` if `epoch` is still the newest claim; False (nothing written) if a
        newer leader took over."""
        with self._lock:
            if epoch != self.epoch:
                return False
            self.created = True
            self._records.extend(records)
            return True


class MemoryConfigWriter(ConfigWrites):
    """The config-topic leader of a `MemoryConfigStore`: the records `ConfigLeader` writes, each
    write one atomic batch; fenced (`LeaderFencedError`, nothing written) once a newer leader is
    claimed."""

    def __init__(self, topic: MemoryConfigTopic, epoch: int) -> None:
        self._topic = topic
        self._epoch = epoch
        self._fenced = False
        self.closed = False

    @property
    def fenced(self) -> bool:
        """Whether a write found that a newer leader had taken over."""
        return self._fenced

    def close(self) -> None:
        """Nothing to release."""
        self.closed = True

    def _write(self, records: list[tuple[str, bytes | None]]) -> None:
        """Append `records` as one batch, unless a newer leader was claimed."""
        keys = ", ".join(key for key, _ in records)
        if self._fenced or not self._topic.append_as(
            self._epoch, [(key.encode("utf-8"), value) for key, value in records]
        ):
            self._fenced = True
            raise LeaderFencedError(
                f"Not writing {keys}: this config-topic leader was fenced by a newer leader; "
                "read the config topic to its end and decide again"
            )


class MemoryConfigStore:
    """A replay of a `MemoryConfigTopic` (one of its own by default) into a
    `ClusterConfigSnapshot`, read incrementally as `KafkaConfigStore` reads its topic."""

    def __init__(self, topic: MemoryConfigTopic | None = None) -> None:
        self.topic = topic if topic is not None else MemoryConfigTopic()
        self._snapshot = ClusterConfigSnapshot()
        self._position = 0
        self._lock = threading.Lock()
        self.reads = 0
        self.closed = False

    def ensure_topic(self, timeout_s: float = 30.0, replication_factor: int | None = None) -> bool:
        """Create the topic unless it exists; whether it was created."""
        created = not self.topic.created
        self.topic.created = True
        return created

    def read_to_end(self, timeout_s: float = 30.0) -> ClusterConfigSnapshot:
        """Apply the records committed since the last read; the live snapshot."""
        with self._lock:
            self.reads += 1
            for key, value in self.topic.read_from(self._position):
                self._snapshot.apply(key.decode("utf-8"), value, self._position)
                self._position += 1
            return self._snapshot

    @property
    def snapshot(self) -> ClusterConfigSnapshot:
        """The snapshot as of the last `read_to_end`."""
        return self._snapshot

    def leader(self, timeout_s: float = 30.0) -> MemoryConfigWriter:
        """Claim the leadership, fencing every earlier leader of the topic."""
        return MemoryConfigWriter(self.topic, self.topic.claim())

    def close(self) -> None:
        """Nothing to release (a later read works as before)."""
        self.closed = True


class MemoryStatusStore(StatusWrites):
    """The status topic: records encoded as `KafkaStatusStore` writes them, replayed into a
    `StatusSnapshot`. Shares `topic` with other stores when given one."""

    def __init__(self, topic: MemoryTopic | None = None) -> None:
        self.topic = topic if topic is not None else MemoryTopic("status")
        self._snapshot = StatusSnapshot()
        self._position = 0
        self._lock = threading.Lock()
        self.closed = False

    def ensure_topic(
        self, partitions: int = 5, timeout_s: float = 30.0, replication_factor: int | None = None
    ) -> bool:
        """Create the topic unless it exists; whether it was created."""
        created = not self.topic.created
        self.topic.created = True
        return created

    def read_to_end(self, timeout_s: float = 30.0) -> StatusSnapshot:
        """Apply the records written since the last read; the live snapshot."""
        with self._lock:
            for key, value in self.topic.read_from(self._position):
                written_at = self.topic.written_at(self._position)
                self._snapshot.apply(key.decode("utf-8"), value, written_at)
                self._position += 1
            return self._snapshot

    def close(self) -> None:
        """Nothing to release."""
        self.closed = True

    def _send(self, key: str, value: bytes | None) -> None:
        self.topic.append([(key.encode("utf-8"), value)])


class MemorySourceOffsets:
    """Offsets topics holding the records `storage.offsets.offset_messages` would produce,
    replayed with `OffsetsSnapshot`. `transactions` lists the transactional id of every
    transactional write; `fenced` every task producer id fenced."""

    def __init__(self, group_id: str = "eosconnect", exactly_once: bool = True) -> None:
        self.group_id = group_id
        self.exactly_once = exactly_once
        self.topics: dict[str, MemoryTopic] = {}
        self.transactions: list[str] = []
        self.fenced: list[str] = []

    def seed(
        self,
        topic: str,
        connector: str,
        pairs: Sequence[tuple[Mapping[str, Any], Mapping[str, Any] | None]],
    ) -> None:
        """Write offsets as a task's transaction would (creating the topic)."""
        records = [(encode_offset_key(connector, p), encode_offset_value(o)) for p, o in pairs]
        self.topics.setdefault(topic, MemoryTopic(topic)).append(records)

    def per_topic(self, connector: str, topics: OffsetTopics) -> dict[str, OffsetEntries]:
        """Per topic, the connector's entries replayed from its records (none if absent)."""
        found: dict[str, OffsetEntries] = {}
        for name in topics.all():
            snapshot = OffsetsSnapshot()
            topic = self.topics.get(name)
            for key, value in topic.records if topic is not None else []:
                snapshot.apply(key, value)
            found[name] = dict(snapshot.offsets_for(connector))
        return found

    def write(
        self,
        connector: str,
        topics: OffsetTopics,
        pairs: Sequence[tuple[SourcePartition, SourceOffset]],
    ) -> None:
        """`pairs` to the primary topic (one transaction with exactly-once support), then to
        the secondary one."""
        if self.exactly_once:
            self.transactions.append(f"{self.group_id}-{connector}")
        self.seed(topics.primary, connector, pairs)
        if topics.secondary is not None:
            self.seed(topics.secondary, connector, pairs)

    def fence_tasks(self, connector: str, task_count: int) -> None:
        """Record the fencing of ``<group.id>-<connector>-<n>`` (exactly-once support only)."""
        if self.exactly_once:
            self.fenced += [f"{self.group_id}-{connector}-{n}" for n in range(task_count)]


class MemoryGroupOffsets:
    """Consumer groups: committed offsets and a member count per group. Like the broker, a
    group with members refuses changes (`ConsumerGroupRefusedError`)."""

    def __init__(self) -> None:
        self.groups: dict[str, dict[TopicPartition, int]] = {}
        self.members: dict[str, int] = {}

    def committed(self, group: str) -> dict[TopicPartition, int]:
        """The group's committed offsets (empty when the group does not exist)."""
        return dict(self.groups.get(group, {}))

    def active_members(self, group: str) -> int:
        """How many members the group has."""
        return self.members.get(group, 0)

    def alter(self, connector: str, group: str, offsets: Mapping[TopicPartition, int]) -> None:
        """Commit `offsets` for the group (creating it)."""
        if self.active_members(group):
            raise group_in_use(connector, group, "altered")
        self.groups.setdefault(group, {}).update(offsets)

    def delete(self, connector: str, group: str) -> None:
        """Delete the group (idempotent)."""
        if self.active_members(group):
            raise group_in_use(connector, group, "reset")
        self.groups.pop(group, None)
