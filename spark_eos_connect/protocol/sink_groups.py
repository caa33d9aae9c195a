"""A sink connector's consumer group, by Kafka Connect's rules (pure): its name, what one task's
`pre_commit` lets it commit, and what a micro-batch's tasks commit together. The group's
offsets on the cluster are `kafka.group_offsets`'."""

from __future__ import annotations

import logging
from collections.abc import Collection, Iterable, Mapping
from typing import Any

from spark_eos_connect.errors import EosConnectError

log = logging.getLogger(__name__)

TP = tuple[str, int]
"""(topic, partition)."""


def sink_group_id(connector: str) -> str:
    """``connect-<connector>``: where a sink connector's committed offsets live."""
    return "connect-" + connector


def task_committable(
    task: str, returned: Mapping[Any, Any], assigned: Collection[TP]
) -> dict[TP, int]:
    """What a task's `pre_commit` lets it commit, as Connect's `WorkerSinkTask` takes it: the
    offsets `returned` for its `assigned` partitions (any other is ignored, with a warning);
    an offset that is no non-negative int fails the task (`EosConnectError` naming `task`)."""
    committable: dict[TP, int] = {}
    for tp, offset in returned.items():
        key = (tp[0], int(tp[1]))
        if key not in assigned:
            log.warning("ignoring pre_commit offset for unassigned partition %s-%s", *key)
        elif isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
            raise EosConnectError(
                f"{task}.pre_commit returned invalid offset {offset!r} for {key[0]}-{key[1]}"
            )
        else:
            committable[key] = offset
    return committable


def merge_committable(committables: Iterable[Iterable[tuple[str, int, int]]]) -> dict[TP, int]:
    """The offsets a micro-batch commits: each task's `(topic, partition, offset)` committable
    offsets together, the highest per partition."""
    merged: dict[TP, int] = {}
    for committable in committables:
        for topic, partition, offset in committable:
            merged[(topic, partition)] = max(offset, merged.get((topic, partition), offset))
    return merged
