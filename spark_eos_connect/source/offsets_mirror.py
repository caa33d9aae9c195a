"""`OffsetsMirror`: a task's committed source offsets copied to the worker's global offsets topic
when the connector has its own (KIP-618: best effort, with an idempotent producer outside the
task's transaction; a failure is logged and never fails the task)."""

from __future__ import annotations

import logging
from collections.abc import Callable

from spark_eos_connect.kafka.producers import PRODUCER_ERRORS
from spark_eos_connect.ports import TransactionalProducer
from spark_eos_connect.source.plan import SourceTaskPlan
from spark_eos_connect.source.submitted import OffsetPair
from spark_eos_connect.storage.offsets import OffsetsWriter

log = logging.getLogger(__name__)

MIRROR_FLUSH_S = 10.0


class OffsetsMirror:
    """Mirrors offsets with the producer `new_producer` builds on first use."""

    def __init__(self, new_producer: Callable[[], TransactionalProducer]) -> None:
        self._new_producer = new_producer
        self._producer: TransactionalProducer | None = None

    def write(self, plan: SourceTaskPlan, offsets: list[OffsetPair]) -> None:
        """Produce `offsets` to the plan's mirror topic (if it names one); logs a failure."""
        if not plan.mirror_offsets_topic:
            return
        if self._producer is None:
            self._producer = self._new_producer()
        writer = OffsetsWriter(
            plan.mirror_offsets_topic, plan.mirror_offsets_topic_partitions, plan.connector
        )
        try:
            writer.write(self._producer, offsets)
        except PRODUCER_ERRORS as error:
            log.warning("mirroring offsets to %s failed: %s", plan.mirror_offsets_topic, error)

    def flush(self, plan: SourceTaskPlan) -> None:
        """Wait a little for what was mirrored; logs what is still on its way."""
        if self._producer is not None and self._producer.flush(MIRROR_FLUSH_S):
            log.warning(
                "offsets not yet mirrored to %s; the producer keeps retrying",
                plan.mirror_offsets_topic,
            )
