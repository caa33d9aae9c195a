"""The one-row Python data source stream of `make bench`'s first-record floor
(`apps/bench/spark_floor.py` runs it): a reader that offers one batch of one row and a writer
whose tasks append a line to a marker file once they have rows. Arrow batches both ways, as
the project's own readers and writers hand them to Spark, built without pyarrow's pandas
probe; no Kafka."""

from __future__ import annotations

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
