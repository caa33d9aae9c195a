"""The first-record floor job: its one-row stream and its marker, and how the bench times it,
without Spark (the classes are plain Python until Spark calls them)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from spark_eos_connect.apps.bench import first_record
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


def test_the_floor_is_timed_until_the_marker_has_a_line(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    script = (
        f"import time; time.sleep(0.2); open({str(marker)!r}, 'a').write('1\\n'); time.sleep(60)"
    )
    seconds = first_record.time_floor_job(
        [sys.executable, "-c", script], marker, tmp_path / "job.log"
    )
    assert 0.2 <= seconds < first_record.JOB_TIMEOUT_S


def test_a_floor_job_that_exits_before_its_row_fails_with_its_output(tmp_path: Path) -> None:
    script = "print('no session here'); raise SystemExit(3)"
    with pytest.raises(RuntimeError, match=r"exited \(3\).*no session here"):
        first_record.time_floor_job(
            [sys.executable, "-c", script], tmp_path / "marker", tmp_path / "job.log"
        )


def test_the_floor_command_runs_the_module_with_marker_and_checkpoint(tmp_path: Path) -> None:
    command = first_record.floor_command(tmp_path / "m", tmp_path / "ck")
    assert command == [
        sys.executable,
        "-m",
        "spark_eos_connect.apps.bench.spark_floor",
        str(tmp_path / "m"),
        str(tmp_path / "ck"),
    ]
