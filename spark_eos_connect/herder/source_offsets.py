"""A source connector's offsets as KIP-875's endpoints see them, over the `SourceOffsetStore`
port (`storage.offsets.KafkaSourceOffsets`, or the in-memory twin): the global offsets topic and
the connector's dedicated one, whose entries take precedence (pure)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from spark_eos_connect.ports import OffsetEntries, OffsetTopics
from spark_eos_connect.protocol.offsets_format import partition_key

__all__ = ["OffsetTopics", "known_partitions", "merged_offsets", "remaining_partitions"]


def merged_offsets(per_topic: Mapping[str, OffsetEntries]) -> list[tuple[dict[str, Any], Any]]:
    """The connector's offsets; a later topic's entries (the dedicated one) win."""
    merged: OffsetEntries = {}
    for entries in per_topic.values():
        merged.update(entries)  # global first, so the dedicated topic's entries win
    return [(p, o) for p, o in merged.values() if o is not None]


def known_partitions(per_topic: Mapping[str, OffsetEntries]) -> list[dict[str, Any]]:
    """Every source partition with an offset in any of the topics, by partition key."""
    known: dict[str, dict[str, Any]] = {}
    for entries in per_topic.values():
        for identity, (partition, _) in entries.items():
            known[identity] = partition
    return [known[identity] for identity in sorted(known)]


def remaining_partitions(
    per_topic: Mapping[str, OffsetEntries], partitions: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """Which of `partitions` still have an offset in any topic (after a reset: none)."""
    wanted = {partition_key(p) for p in partitions}
    left: list[dict[str, Any]] = []
    for entries in per_topic.values():
        left += [partition for key, (partition, _) in entries.items() if key in wanted]
    return left
