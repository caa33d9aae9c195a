"""Records written by Kafka Connect and by the project, compared byte for byte.

A record is compared by topic, partition, key bytes, value bytes and headers (names and value
bytes, in order); offsets and timestamps are left out. Each side's records are taken in
(topic, partition, offset) order, so records of one partition keep the order they were
written in. A mismatch names every differing field of the first records that differ, with both
byte strings.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NamedTuple

from spark_eos_connect.kafka.clients import ConsumedRecord

SHOWN_MISMATCHES = 5


class Written(NamedTuple):
    """What a record is compared by."""

    topic: str
    partition: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...]


def written(records: Iterable[ConsumedRecord]) -> list[Written]:
    """The comparable part of `records`, in (topic, partition, offset) order."""
    ordered = sorted(records, key=lambda r: (r.topic, r.partition, r.offset))
    return [Written(r.topic, r.partition, r.key, r.value, tuple(r.headers)) for r in ordered]


def after(records: Sequence[ConsumedRecord], earlier: Sequence[ConsumedRecord]) -> list[Written]:
    """`records` without the first ones of each partition that `earlier` already held (the
    same topics read twice: before and after the project wrote to them)."""
    seen: dict[tuple[str, int], int] = {}
    for record in earlier:
        seen[(record.topic, record.partition)] = max(
            seen.get((record.topic, record.partition), -1), record.offset
        )
    return written(r for r in records if r.offset > seen.get((r.topic, r.partition), -1))


def differences(connect: Sequence[Written], project: Sequence[Written]) -> list[str]:
    """Human-readable differences, at most `SHOWN_MISMATCHES` records' worth; empty if equal."""
    problems = []
    if len(connect) != len(project):
        problems.append(f"Connect wrote {len(connect)} records, the project {len(project)}")
    for index, (theirs, ours) in enumerate(zip(connect, project, strict=False)):
        fields = [
            f"  {name}:\n    connect: {connect_field!r}\n    project: {project_field!r}"
            for name, connect_field, project_field in zip(
                Written._fields, theirs, ours, strict=True
            )
            if connect_field != project_field
        ]
        if fields:
            problems.append(f"record {index} differs:\n" + "\n".join(fields))
        if len(problems) > SHOWN_MISMATCHES:
            problems.append("...")
            break
    return problems
