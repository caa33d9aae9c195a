"""Source offsets kept in Kafka Connect's offsets topics (I/O around `protocol.offsets_format`).

`OffsetsTopicView` replays an offsets topic into an `OffsetsSnapshot` and can catch up
incrementally; `offset_messages` turns a task's committed offsets into the records that a task's
transaction writes to the offsets topic.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from spark_eos_connect.kafka.clients import (
    admin_client,
    ensure_topic,
    partition_count,
    read_to_end,
)
from spark_eos_connect.protocol.murmur2 import default_partition
from spark_eos_connect.protocol.offsets_format import (
    OffsetsSnapshot,
    encode_offset_key,
    encode_offset_value,
)

COMPACTED = {"cleanup.policy": "compact"}

SourcePartition = dict[str, Any]
SourceOffset = dict[str, Any]


@dataclass(frozen=True)
class OffsetMessage:
    """One record for an offsets topic: its partition is Kafka's default for the key bytes."""

    topic: str
    partition: int
    key: bytes
    value: bytes | None


def ensure_offsets_topic(kafka: Mapping[str, Any], topic: str, partitions: int) -> int:
    """Create the compacted offsets topic if absent; returns its partition count."""
    admin = admin_client(kafka)
    ensure_topic(admin, topic, partitions=partitions, config=COMPACTED)
    return partition_count(admin, topic)


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
        self.positions: dict[int, int] = {}

    def catch_up(
        self, partitions: Iterable[int] | None = None, timeout_s: float = 60.0
    ) -> OffsetsTopicView:
        """Read new records up to the high watermark, waiting for open transactions to end."""
        start = {(self.topic, p): o for p, o in self.positions.items()}
        selected = None if partitions is None else {self.topic: list(partitions)}
        records = read_to_end(
            self.kafka,
            [self.topic],
            "read_committed",
            timeout_s,
            start=start,
            wait_for_open_transactions=True,
            partitions=selected,
        )
        for record in records:
            if record.key is not None:
                self.snapshot.apply(record.key, record.value)
            self.positions[record.partition] = record.offset + 1
        return self

    def offsets_for(self, connector: str) -> list[tuple[SourcePartition, SourceOffset]]:
        """Every (source partition, offset) of `connector` with a non-reset offset."""
        return [
            (partition, offset)
            for partition, offset in self.snapshot.offsets_for(connector).values()
            if offset is not None
        ]
