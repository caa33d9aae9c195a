"""Spark's own floor under the first-record time: a streaming query of one row, through a Python
data source reader and writer, started from nothing the way the project's jobs start.

It does what every `format("eosconnect")` job does before its first record and nothing else:
the same session (`plan_job_session`, `job_session`: class data sharing archive, worker
interpreter), Spark's Python processes for the data source lookup, its schema, the stream
reader, planning, the writer and the executor's worker, and one task. It touches no Kafka.
The writer's task appends a line to `MARKER` when it has its row, the point where a source
task of the project commits its first transaction, so the time from starting
`python -m spark_eos_connect.apps.bench.spark_floor MARKER CHECKPOINT` until `MARKER` has
that line is what a Python data source stream costs on the machine before any connector
work.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

from pyspark.sql.datasource import (
    DataSource,
    DataSourceStreamReader,
    DataSourceStreamWriter,
    InputPartition,
    WriterCommitMessage,
)
from pyspark.sql.types import StructType

FLOOR_SOURCE = "eosconnect_bench_floor"
"""The data source's name (`format(...)`), registered by the job itself."""


class OneRowReader(DataSourceStreamReader):
    """One micro-batch of one row, then nothing new."""

    def initialOffset(self) -> dict[str, int]:
        return {"rows": 0}

    def latestOffset(self, start: Any = None, limit: Any = None) -> dict[str, int]:
        return {"rows": 1}

    def partitions(self, start: dict[str, int], end: dict[str, int]) -> list[InputPartition]:
        return [InputPartition(0)]

    def read(self, partition: InputPartition) -> Iterator[tuple[int]]:
        yield (1,)


class MarkerWriter(DataSourceStreamWriter):
    """Appends a line to `marker` from the task once it has read its rows."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def write(self, iterator: Iterator[Any]) -> WriterCommitMessage:
        rows = sum(1 for _ in iterator)
        with open(self.marker, "a") as marker:
            marker.write(f"{rows}\n")
        return WriterCommitMessage()

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        """Nothing to commit: the marker is the measured point."""

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        """Nothing was written that needs undoing."""


class FloorDataSource(DataSource):
    """`format("eosconnect_bench_floor")`, option `marker`: the path the writer writes."""

    @classmethod
    def name(cls) -> str:
        return FLOOR_SOURCE

    def schema(self) -> str:
        return "n int"

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        return OneRowReader()

    def streamWriter(self, schema: StructType, overwrite: bool) -> DataSourceStreamWriter:
        return MarkerWriter(self.options["marker"])


def main(argv: list[str] | None = None) -> int:
    """`MARKER CHECKPOINT`: run the one-row query until SIGTERM."""
    from spark_eos_connect.spark.job_support import (
        job_session,
        plan_job_session,
        run_query,
        stop_on_sigterm,
    )

    marker, checkpoint = argv if argv is not None else sys.argv[1:]
    plan = plan_job_session("spark_floor", None, delta=False)
    spark = job_session(plan)
    spark.dataSource.register(FloorDataSource)
    query = (
        spark.readStream.format(FLOOR_SOURCE)
        .load()
        .writeStream.format(FLOOR_SOURCE)
        .option("marker", marker)
        .option("checkpointLocation", checkpoint)
        .start()
    )
    try:
        run_query(query, False, None, stop_on_sigterm(query))
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":  # the classes pickled by their module's name, not `__main__`
    from spark_eos_connect.apps.bench.spark_floor import main as floor_main

    sys.exit(floor_main())
