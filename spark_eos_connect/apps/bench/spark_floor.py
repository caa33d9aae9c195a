"""Spark's own floor under the first-record time: a streaming query of one row, through a Python
data source reader and writer, started from nothing the way the project's jobs start.

It does what every `format("eosconnect")` job does before its first record and no connector
work: the same session (`plan_job_session`, `job_session`: class data sharing archive, worker
interpreter), Spark's Python processes for the data source lookup, its schema, the stream
reader, planning, the writer and the executor's worker, and one task. Like the project's
reader and writers it hands Spark Arrow batches (built without pyarrow's pandas probe) and
takes them. It touches no Kafka. The writer's task appends a line to `MARKER` once it has its
row, about where a source task of the project has committed its first transaction, so the
time from starting `python -m spark_eos_connect.apps.bench.spark_floor MARKER CHECKPOINT`
until `MARKER` has that line is what a Python data source stream costs on the machine before
any connector work.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import (
    DataSource,
    DataSourceStreamArrowWriter,
    DataSourceStreamReader,
    DataSourceStreamWriter,
    InputPartition,
    WriterCommitMessage,
)
from pyspark.sql.types import StructType

from spark_eos_connect.arrow_arrays import int_array

FLOOR_SOURCE = "eosconnect_bench_floor"
"""The data source's name (`format(...)`), registered by the job itself."""
MODULE = "spark_eos_connect.apps.bench.spark_floor"
"""The module to run (`python -m`): its classes are pickled by this name."""


class OneRowReader(DataSourceStreamReader):
    """One micro-batch of one row, then nothing new."""

    def initialOffset(self) -> dict[str, int]:
        return {"rows": 0}

    def latestOffset(self, start: Any = None, limit: Any = None) -> dict[str, int]:
        return {"rows": 1}

    def partitions(self, start: dict[str, int], end: dict[str, int]) -> list[InputPartition]:
        return [InputPartition(0)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        yield pa.RecordBatch.from_arrays([int_array([1], pa.int32())], ["n"])


class MarkerWriter(DataSourceStreamArrowWriter):
    """Appends a line to `marker` from a task once it has read its rows (none: no line)."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def write(self, iterator: Iterator[pa.RecordBatch]) -> WriterCommitMessage:
        rows = sum(batch.num_rows for batch in iterator)
        if rows:
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

    args = argv if argv is not None else sys.argv[1:]
    if len(args) != 2:
        print(f"usage: python -m {MODULE} MARKER CHECKPOINT", file=sys.stderr)
        return 2
    marker, checkpoint = args
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
