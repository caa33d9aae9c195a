"""Source offsets kept in Kafka Connect's offsets topics (I/O around `protocol.offsets_format`).

`OffsetsTopicView` replays an offsets topic into an `OffsetsSnapshot` and can catch up
incrementally; `offset_messages` turns a task's committed offsets into the records that a task's
transaction writes to the offsets topic, and `OffsetsWriter` hands them to a producer (the one
write of offsets, shared by live source tasks and the KIP-875 endpoints); `KafkaSourceOffsets`
reads and writes a connector's offsets as KIP-875's endpoints do (the `SourceOffsetStore` port).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from spark_eos_connect.errors import EosConnectError
from spark_eos_connect.kafka.clients import (
    ConsumedRecord,
    KafkaTimeoutError,
    TopicTail,
    admin_client,
    partition_count,
)
from spark_eos_connect.kafka.internal_topics import InternalTopic, ensure_internal_topic
from spark_eos_connect.kafka.producers import (
    fence_transactional_id,
    idempotent_producer,
    produce,
    transactional_producer,
)
from spark_eos_connect.ports import OffsetEntries, OffsetTopics, TransactionalProducer
from spark_eos_connect.protocol.murmur2 import default_partition
from spark_eos_connect.protocol.offsets_format import (
    OffsetsSnapshot,
    encode_offset_key,
    encode_offset_value,
)

log = logging.getLogger(__name__)

OFFSETS_REPLICATION_OPTION = "offset.storage.replication.factor"

OPEN_TRANSACTION_WAIT_S = 90.0
"""How long reading an offsets topic to its end waits for open transactions. A crashed task's
transaction (of any connector sharing the topic) holds every reader back until the broker
aborts it: `transaction.timeout.ms` later (60 s, the default of Connect's and librdkafka's
producers), at the broker's next check (every 10 s by default). Waiting less would fail a
healthy connector's query for a neighbour's crash."""

SourcePartition = dict[str, Any]
SourceOffset = dict[str, Any]


@dataclass(frozen=True)
class OffsetMessage:
    """One record for an offsets topic: its partition is Kafka's default for the key bytes."""

    topic: str
    partition: int
    key: bytes
    value: bytes | None

    def produce_with(self, producer: TransactionalProducer, **extra: Any) -> None:
        """Hand this record to `producer`, waiting for queue space (`extra`: `on_delivery`,
        `headers`)."""
        produce(producer, self.topic, self.value, self.key, partition=self.partition, **extra)


def ensure_offsets_topic(
    kafka: Mapping[str, Any], topic: str, partitions: int, replication_factor: int | None = None
) -> int:
    """Create the compacted offsets topic if absent (`offset.storage.replication.factor`
    `replication_factor`, None for Connect's default); returns its partition count."""
    spec = InternalTopic(topic, partitions, OFFSETS_REPLICATION_OPTION, replication_factor)
    return ensure_internal_topic(kafka, spec).partitions


def offset_messages(
    topic: str,
    topic_partitions: int,
    connector: str,
    offsets: Iterable[tuple[Mapping[str, Any], Mapping[str, Any] | None]],
) -> list[OffsetMessage]:
    """The offsets-topic records for `(source partition, offset-or-None)` pairs."""
    messages = []
    for partition, offset in offsets:
        key = encode_offset_key(connector, partition)
        messages.append(
            OffsetMessage(
                topic,
                default_partition(key, topic_partitions),
                key,
                encode_offset_value(offset),
            )
        )
    return messages


@dataclass(frozen=True)
class OffsetsWriter:
    """Writes `connector`'s source offsets to the offsets topic `topic` (`partitions` of them)
    with whatever producer the caller holds: in its open transaction, or not."""

    topic: str
    partitions: int
    connector: str

    def write(
        self,
        producer: TransactionalProducer,
        offsets: Iterable[tuple[Mapping[str, Any], Mapping[str, Any] | None]],
        on_delivery: Any = None,
        first_headers: list[tuple[str, bytes]] | None = None,
    ) -> int:
        """Produce one record per `(source partition, offset-or-None)` pair (None: a
        tombstone); `first_headers` go on the first record only. Returns how many."""
        extra: dict[str, Any] = {} if on_delivery is None else {"on_delivery": on_delivery}
        headers = first_headers
        messages = offset_messages(self.topic, self.partitions, self.connector, offsets)
        for message in messages:
            if headers is not None:
                message.produce_with(producer, headers=headers, **extra)
                headers = None
            else:
                message.produce_with(producer, **extra)
        return len(messages)


class OffsetsTopicView:
    """A read_committed replay of one offsets topic that catches up from where it stopped."""

    def __init__(self, kafka: Mapping[str, Any], topic: str) -> None:
        self.kafka = dict(kafka)
        self.topic = topic
        self.snapshot = OffsetsSnapshot()
        self._tail = TopicTail(self.kafka, topic)

    @property
    def positions(self) -> dict[int, int]:
        """Next offset to read per partition of the topic."""
        return self._tail.positions

    @positions.setter
    def positions(self, positions: dict[int, int]) -> None:
        self._tail.positions = dict(positions)

    def catch_up(
        self, partitions: Iterable[int] | None = None, timeout_s: float = OPEN_TRANSACTION_WAIT_S
    ) -> OffsetsTopicView:
        """Read new records up to the high watermark, waiting for open transactions to end."""
        self.read_new(partitions, timeout_s)
        return self

    def read_new(
        self,
        partitions: Iterable[int] | None = None,
        timeout_s: float = OPEN_TRANSACTION_WAIT_S,
        wait_for_open_transactions: bool = True,
    ) -> list[ConsumedRecord]:
        """`catch_up`, returning the records read (headers included); without waiting, up to
        the last stable offsets only."""
        records = self._tail.read_new(timeout_s, wait_for_open_transactions, partitions)
        for record in records:
            if record.key is not None:
                self.snapshot.apply(record.key, record.value)
        return records

    def close(self) -> None:
        """Release the view's Kafka clients."""
        self._tail.close()

    def offsets_for(self, connector: str) -> list[tuple[SourcePartition, SourceOffset]]:
        """Every (source partition, offset) of `connector` with a non-reset offset."""
        return [
            (partition, offset)
            for partition, offset in self.snapshot.offsets_for(connector).values()
            if offset is not None
        ]


class OffsetStoreError(EosConnectError):
    """Source offsets could not be read or written (the herder answers 500)."""


Pair = tuple[dict[str, Any], dict[str, Any] | None]


class KafkaSourceOffsets:
    """Source offsets in the offsets topics of the cluster reached through `kafka`.

    Reads replay each topic (read_committed, waiting for open transactions). Writes follow
    KIP-875: with exactly-once support the offsets go to the connector's primary topic in ONE
    transaction with id ``<group.id>-<connector>`` (after `fence_tasks`), and, when a dedicated
    topic is used, to the global topic without a transaction.
    """

    def __init__(
        self,
        kafka: Mapping[str, Any],
        group_id: str,
        topic_partitions: int,
        exactly_once: bool,
        timeout_s: float = 30.0,
        replication_factor: int | None = None,
    ) -> None:
        self.kafka = dict(kafka)
        self.replication_factor = replication_factor
        self.group_id = group_id
        self.topic_partitions = topic_partitions
        self.exactly_once = exactly_once
        self.timeout_s = timeout_s
        self._views: dict[str, OffsetsTopicView] = {}

    def _view(self, topic: str) -> OffsetsTopicView | None:
        view = self._views.get(topic)
        if view is None:
            if partition_count(admin_client(self.kafka), topic, self.timeout_s) == 0:
                return None
            view = self._views[topic] = OffsetsTopicView(self.kafka, topic)
        try:
            return view.catch_up(timeout_s=self.timeout_s)
        except KafkaTimeoutError as exc:
            raise OffsetStoreError(
                f"Could not read offsets topic {topic!r} to its end within {self.timeout_s:g}s: "
                f"{exc}"
            ) from exc

    def per_topic(self, connector: str, topics: OffsetTopics) -> dict[str, OffsetEntries]:
        """``{topic: {partition_key: (partition, offset)}}`` for every topic holding offsets."""
        found: dict[str, OffsetEntries] = {}
        for topic in topics.all():
            view = self._view(topic)
            found[topic] = {} if view is None else dict(view.snapshot.offsets_for(connector))
        return found

    def write(self, connector: str, topics: OffsetTopics, pairs: Sequence[Pair]) -> None:
        """Write `pairs` (None = tombstone) as KIP-875 says; raises `OffsetStoreError`.

        Call `fence_tasks` first when exactly-once support is enabled.
        """
        try:
            primary_partitions = ensure_offsets_topic(
                self.kafka, topics.primary, self.topic_partitions, self.replication_factor
            )
            primary = OffsetsWriter(topics.primary, primary_partitions, connector)
            if self.exactly_once:
                self._write_transaction(f"{self.group_id}-{connector}", primary, pairs)
            else:
                self._write_plain(primary, pairs)
            if topics.secondary is not None:
                partitions = ensure_offsets_topic(
                    self.kafka, topics.secondary, self.topic_partitions, self.replication_factor
                )
                self._write_plain(OffsetsWriter(topics.secondary, partitions, connector), pairs)
        except OffsetStoreError:
            raise
        except Exception as exc:  # librdkafka and topic errors
            raise OffsetStoreError(
                f"Failed to modify offsets for source connector {connector}: {exc}"
            ) from exc

    def fence_tasks(self, connector: str, task_count: int) -> None:
        """Fence task producers ``<group.id>-<connector>-0..task_count-1`` (exactly-once only)."""
        if not self.exactly_once:
            return
        try:
            for task in range(task_count):
                fence_transactional_id(
                    self.kafka, f"{self.group_id}-{connector}-{task}", self.timeout_s
                )
        except Exception as exc:
            raise OffsetStoreError(
                f"Could not fence the earlier task producers of connector {connector}: {exc}"
            ) from exc

    def _write_transaction(
        self, transactional_id: str, writer: OffsetsWriter, pairs: Sequence[Pair]
    ) -> None:
        producer = transactional_producer(self.kafka, transactional_id, self.timeout_s)
        try:
            producer.begin_transaction()
            writer.write(producer, pairs)
            producer.commit_transaction(self.timeout_s)
        except Exception:
            try:
                producer.abort_transaction(self.timeout_s)
            except Exception as abort_exc:  # fenced or fatal: the broker aborts it anyway
                log.debug("Aborting the offsets transaction failed: %s", abort_exc)
            raise

    def _write_plain(self, writer: OffsetsWriter, pairs: Sequence[Pair]) -> None:
        producer = idempotent_producer(self.kafka)
        errors: list[str] = []

        def delivered(error: Any, message: Any) -> None:
            if error is not None:
                errors.append(str(error))

        writer.write(producer, pairs, on_delivery=delivered)
        if producer.flush(self.timeout_s) or errors:
            reason = "; ".join(errors) or f"not delivered within {self.timeout_s:g}s"
            raise OffsetStoreError(f"Writing offsets failed: {reason}")
