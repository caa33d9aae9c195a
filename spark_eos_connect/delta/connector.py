"""`DeltaSink`: Kafka records into a Delta Lake table, exactly once, offsets kept with the data.

Delta commits are made from the driver, and Python DataSource writers run on executors without
a SparkSession, so this sink runs once per micro-batch on the driver through `foreachBatch`:

    stream.writeStream.foreachBatch(spark_eos_connect.delta.delta_sink(options)).start()

Each batch is one Delta commit (`txnAppId` = connector name, `txnVersion` = batch id) whose rows
carry their Kafka coordinates (`_kafka_topic`, `_kafka_partition`, `_kafka_offset`), so the
offsets the table holds are exactly those of the data it holds; rows at or below them are
dropped before writing. `pre_commit` returns `{}`: the consumer group is not used.
This module imports no Spark at import time (the registry and the REST API load it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from spark_eos_connect.api.config import ConfigDef
from spark_eos_connect.api.sink import SinkConnector, SinkRecord, SinkTask, TopicPartition
from spark_eos_connect.delta.config import (
    CONFIG_DEF,
    FOREACH_BATCH_MESSAGE,
    DeltaSinkConfig,
    parse_delta_config,
)
from spark_eos_connect.errors import EosConnectError

__all__ = [
    "CONFIG_DEF",
    "FOREACH_BATCH_MESSAGE",
    "DeltaSinkConfig",
    "DeltaSinkConnector",
    "DeltaSinkTask",
    "parse_delta_config",
]


class DeltaSinkConnector(SinkConnector):
    """Delta Lake sink (driver-only, through `foreachBatch`); keeps its offsets in the table."""

    foreach_batch_hint: Final = FOREACH_BATCH_MESSAGE

    def __init__(self) -> None:
        self._props: dict[str, str] = {}

    def config_def(self) -> ConfigDef:
        """`path`, `table`, `topics`, `delta.mode`, `value.schema`."""
        return CONFIG_DEF

    def start(self, props: dict[str, str]) -> None:
        """Check the options."""
        parse_delta_config(props)
        self._props = dict(props)

    def stop(self) -> None:
        """Nothing runs in the background."""

    def task_class(self) -> type[DeltaSinkTask]:
        """`DeltaSinkTask`."""
        return DeltaSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        """One task: each micro-batch is one Delta commit made by the driver."""
        return [dict(self._props)]

    def alter_offsets(
        self, config: dict[str, str], offsets: dict[TopicPartition, int | None]
    ) -> bool:
        """False: only the consumer group is altered; it sets where a new query starts.

        Records at or below the offsets stored in the table are never written twice, so a
        rewind re-writes nothing unless rows were deleted from the table.
        """
        parse_delta_config(config)
        return False

    def table_offsets(
        self, config: Mapping[str, str], spark: Any = None
    ) -> dict[TopicPartition, int]:
        """Driver: the next offset per partition according to the table (`{}` if none).

        Uses `spark` or the active SparkSession (one is started when there is none).
        """
        from spark_eos_connect.delta.writer import table_offsets

        offsets = table_offsets(parse_delta_config(config), spark)
        return {TopicPartition(t, p): o for (t, p), o in offsets.items()}


class DeltaSinkTask(SinkTask):
    """The driver-side task: `write_batch` writes a micro-batch; `pre_commit` returns `{}`.

    Its config holds every option of the sink, `errors.*` and `kafka.*` included (for the DLQ).
    """

    def __init__(self) -> None:
        self._props: dict[str, str] = {}
        self._writer: Any = None

    def start(self, props: dict[str, str]) -> None:
        """Check the options."""
        parse_delta_config(props)
        self._props = dict(props)

    def put(self, records: Sequence[SinkRecord]) -> None:
        """Not supported: records arrive as DataFrames through `write_batch`."""
        raise EosConnectError(FOREACH_BATCH_MESSAGE)

    def write_batch(self, df: Any, batch_id: int) -> dict[TopicPartition, int]:
        """Driver: write one micro-batch; the next offset per partition it covered."""
        if self._writer is None:
            from spark_eos_connect.delta.writer import DeltaTableWriter

            self._writer = DeltaTableWriter(self._props)
        return {TopicPartition(t, p): o for (t, p), o in self._writer.write(df, batch_id).items()}

    def last_summary(self) -> str:
        """One line about the last batch written ("" before the first)."""
        return str(self._writer.last_summary) if self._writer is not None else ""

    def pre_commit(self, current_offsets: dict[TopicPartition, int]) -> dict[TopicPartition, int]:
        """`{}`: the offsets were committed to the table with the data."""
        return {}

    def stop(self) -> None:
        """Forget the writer."""
        self._writer = None
