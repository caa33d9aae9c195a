"""The first-record floor job: its one-row stream and its marker, without Spark (the classes
are plain Python until Spark calls them)."""

from __future__ import annotations

from pathlib import Path

from spark_eos_connect.apps.bench.spark_floor import (
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
    (partition,) = reader.partitions(start, end)
    assert list(reader.read(partition)) == [(1,)]


def test_the_writer_appends_one_line_per_task_with_its_row_count(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    writer = MarkerWriter(str(marker))
    writer.write(iter([(1,)]))
    writer.write(iter([(1,), (1,)]))
    assert marker.read_text() == "1\n2\n"


def test_the_data_source_hands_its_marker_option_to_the_writer() -> None:
    source = FloorDataSource({"marker": "/tmp/m"})
    assert FloorDataSource.name() == FLOOR_SOURCE
    writer = source.streamWriter(None, False)  # type: ignore[arg-type]
    assert isinstance(writer, MarkerWriter) and writer.marker == "/tmp/m"
    assert isinstance(source.streamReader(None), OneRowReader)  # type: ignore[arg-type]
