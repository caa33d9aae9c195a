"""Source offsets kept in Kafka Connect's offsets topics (I/O around `protocol.offsets_format`).

`OffsetsTopicView` replays an offsets topic into an `OffsetsSnapshot` and can catch up
incrementally; `offset_messages` turns a task's committed offsets into the records that a task's
transaction writes to the offsets topic.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from spark_eos_connect.kafka.clients import ConsumedRecord, TopicTail
from spark_eos_connect.kafka.internal_topics import InternalTopic, ensure_internal_topic
from spark_eos_connect.protocol.murmur2 import default_partition
from spark_eos_connect.protocol.offsets_format import (
    OffsetsSnapshot,
    encode_offset_key,
    encode_offset_value,
)

OFFSETS_REPLICATION_OPTION = "offset.storage.replication.factor"

SourcePartition = dict[str, Any]
SourceOffset = dict[str, Any]


@dataclass(frozen=True)
class OffsetMessage:
    """One record for an offsets topic: its partition is Kafka's default for the key bytes."""

    topic: str
    partition: int
    key: bytes
    value: bytes | None


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
        self, partitions: Iterable[int] | None = None, timeout_s: float = 60.0
    ) -> OffsetsTopicView:
        """Read new records up to the high watermark, waiting for open transactions to end."""
        self.read_new(partitions, timeout_s)
        return self

    def read_new(
        self,
        partitions: Iterable[int] | None = None,
        timeout_s: float = 60.0,
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
