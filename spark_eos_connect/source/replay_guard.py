"""The replay guard of an exactly-once source task: what an earlier attempt of the same
micro-batch (or of one planned on the same offsets) committed since the driver planned it.

Once a fresh task's producer has fenced every earlier attempt, `since_planning` reads what was
committed to the offsets topic since the plan was made: if an earlier attempt of the same
micro-batch committed, the task emits that attempt's rows and runs nothing (`source.replay`).
Otherwise the task's first commit asks `first_commit` whether an earlier attempt committed
offsets of the partitions it is about to commit (one behind an open transaction at start-up):
then it writes nothing. A kept producer needs no such check; any other attempt with the same
transactional id fences it and its commit fails.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from spark_eos_connect.ports import OffsetsLog
from spark_eos_connect.protocol.murmur2 import default_partition
from spark_eos_connect.protocol.offsets_format import (
    encode_offset_key,
    encode_offset_value,
    partition_key,
)
from spark_eos_connect.source.plan import SourceTaskPlan
from spark_eos_connect.source.replay import EarlierAttempt, attempt_digest, committed_by

log = logging.getLogger(__name__)

SourcePartition = dict[str, Any]
SourceOffset = dict[str, Any] | None


def stale_partitions(
    planned: Mapping[str, SourceOffset],
    touched: list[SourcePartition],
    current: Callable[[SourcePartition], SourceOffset],
) -> list[SourcePartition]:
    """Source partitions whose committed offset is no longer the planned one."""
    return [p for p in touched if current(p) != planned.get(partition_key(p))]


class ReplayGuard:
    """One fresh task's look at the offsets topic `view` since its plan was made."""

    def __init__(self, view: OffsetsLog) -> None:
        self._view: OffsetsLog | None = view
        self.verified = False
        """Whether the first commit's check passed (later commits need none)."""

    def since_planning(self, plan: SourceTaskPlan, batch_id: int | None) -> EarlierAttempt | None:
        """Catch up with what was committed to the offsets topic since the plan was made, up to
        the last stable offsets (an open transaction, a zombie's maybe, must not hold a task's
        start); what an earlier attempt of this micro-batch committed, if one did. Behind an
        open transaction, `first_commit` finds it instead."""
        view = self._view
        assert view is not None
        view.positions = dict(plan.offsets_positions)
        for partition, offset in plan.committed:
            view.snapshot.apply(
                encode_offset_key(plan.connector, partition), encode_offset_value(offset)
            )
        records = view.read_new(wait_for_open_transactions=False)
        return committed_by(attempt_digest(plan, batch_id), records)

    def first_commit(
        self,
        offsets: list[tuple[SourcePartition, SourceOffset]],
        plan: SourceTaskPlan,
        batch_id: int | None,
    ) -> tuple[bool, EarlierAttempt | None]:
        """Whether an earlier attempt committed offsets of these partitions since planning
        (stale: write nothing), and what an earlier attempt of this micro-batch (`plan`,
        `batch_id`) committed, if the records read show it. Passing marks the guard
        `verified`; the view is closed either way."""
        view = self._view
        assert view is not None, "read since planning when the task started"
        touched = [partition for partition, _ in offsets]
        try:
            records = view.read_new(
                {
                    default_partition(
                        encode_offset_key(plan.connector, p), plan.offsets_topic_partitions
                    )
                    for p in touched
                }
            )
        finally:
            self.close()
        planned = {partition_key(p): o for p, o in plan.committed}
        stale = stale_partitions(
            planned, touched, lambda p: view.snapshot.offset(plan.connector, p)
        )
        if stale:
            log.warning(
                "connector %s task %d: an earlier attempt already committed offsets for %s; "
                "this attempt writes nothing",
                plan.connector,
                plan.task,
                stale,
            )
            return True, committed_by(attempt_digest(plan, batch_id), records)
        self.verified = True
        return False, None

    def close(self) -> None:
        """Release the view's clients (idempotent)."""
        if self._view is not None:
            self._view.close()
            self._view = None
