"""`readStream.format("eosconnect")` with a source connector: a thin adapter over the runtime.

Driver side: `EosConnectSourceStreamReader` (one per query) plans each micro-batch from the
offsets committed in Kafka. Executor side: `read()` runs one micro-batch of one source task on
that task's host (`source.host`): the task polls, produces and commits there, and the rows
Spark gets are the records that were committed. The coordinator and the host's client are
imported by the processes that use them only (Spark starts several in a row before a query's
first record).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from pyspark.sql.datasource import DataSourceStreamReader, InputPartition

from spark_eos_connect.protocol.config_records import TargetState
from spark_eos_connect.runtime.config.options import DataSourceOptions
from spark_eos_connect.source.config import parse_source_pipeline
from spark_eos_connect.source.plan import SourceTaskPlan
from spark_eos_connect.spark.drain import draining
from spark_eos_connect.spark.task_context import current_attempt, current_batch_id
from spark_eos_connect.spark.worker_gc import settle_heap
from spark_eos_connect.spark.worker_signals import stop_has_begun

if TYPE_CHECKING:
    from spark_eos_connect.source.coordinator import SourceCoordinator


@dataclass
class SourceTaskPartition(InputPartition):
    """One source task's share of a micro-batch."""

    plan: SourceTaskPlan


class EosConnectSourceStreamReader(DataSourceStreamReader):
    """Micro-batches of a source connector; Spark's offsets only count batches, because the
    offsets that decide where tasks resume are the ones committed in Kafka."""

    def __init__(self, options: Mapping[str, Any] | DataSourceOptions) -> None:
        self.config = parse_source_pipeline(options)
        self.coordinator: SourceCoordinator | None = None

    def _coordinator(self) -> SourceCoordinator:
        if self.coordinator is None:
            from spark_eos_connect.source.coordinator import SourceCoordinator

            self.coordinator = SourceCoordinator.open(self.config)
        return self.coordinator

    def initialOffset(self) -> dict[str, int]:
        """Driver: the offset before the first batch."""
        return {"batch": 0}

    def latestOffset(
        self, start: dict[str, int] | None = None, limit: Any = None
    ) -> dict[str, int]:
        """Driver: one more batch (tasks poll what is there, maybe nothing), unless draining."""
        current = start or self.initialOffset()
        if draining() or self._coordinator().refresh_target_state() is not TargetState.STARTED:
            return current
        return {"batch": int(current["batch"]) + 1}

    def partitions(self, start: dict[str, int], end: dict[str, int]) -> Sequence[InputPartition]:
        """Driver: one input partition per task, planned from Kafka's committed offsets."""
        return [SourceTaskPartition(plan) for plan in self._coordinator().plan()]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        """Executor: one micro-batch of the task; rows of the records it committed."""
        from spark_eos_connect.source.host import run_on_host

        settle_heap()
        assert isinstance(partition, SourceTaskPartition)
        plan = partition.plan
        yield from run_on_host(self.config.kafka, plan, current_batch_id(), current_attempt())

    def commit(self, end: dict[str, int]) -> None:
        """Driver: nothing to do; offsets were committed with the records."""

    def stop(self) -> None:
        """Driver: stop the connector."""
        stop_has_begun()
        if self.coordinator is not None:
            self.coordinator.stop()
