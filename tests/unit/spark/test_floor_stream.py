"""The first-record floor job: its one-row stream and its marker, without Spark (the classes
are plain Python until Spark calls them)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from spark_eos_connect.spark.floor_stream import (
    FLOOR_SOURCE,
    FloorDataSource,
    MarkerWriter,
    OneRowReader,
)


def test_the_reader_offers_one_batch_of_one_row() -> None:
    reader = OneRowReader()
    start = reader.initialOffset()
    end = reader.latestOffset(start, None)
    assert start != end
    assert reader.latestOffset(end, None) == end  # no second batch
    (partition,) = reader.partitions(start, end)
    (batch,) = reader.read(partition)
    assert batch.schema.names == ["n"] and batch.column(0).to_pylist() == [1]


def rows(count: int) -> pa.RecordBatch:
    return pa.RecordBatch.from_pydict({"n": pa.array([1] * count, pa.int32())})


def test_the_writer_appends_one_line_per_task_with_rows(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    writer = MarkerWriter(str(marker))
    writer.write(iter([rows(1)]))
    writer.write(iter([]))  # a task without rows: no line
    writer.write(iter([rows(0)]))
    writer.write(iter([rows(2), rows(1)]))
    assert marker.read_text() == "1\n3\n"


def test_the_data_source_hands_its_marker_option_to_the_writer() -> None:
    source = FloorDataSource({"marker": "/tmp/m"})
    assert FloorDataSource.name() == FLOOR_SOURCE
    writer = source.streamWriter(None, False)  # type: ignore[arg-type]
    assert isinstance(writer, MarkerWriter) and writer.marker == "/tmp/m"
    assert isinstance(source.streamReader(None), OneRowReader)  # type: ignore[arg-type]
