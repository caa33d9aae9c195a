"""How the bench times a first record: the floor job until its marker, a job that dies early,
and the options the on-session query shares with the job from nothing."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from spark_eos_connect.apps.bench import first_record


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


def test_the_query_on_a_session_gets_the_options_the_job_from_nothing_passes(
    tmp_path: Path,
) -> None:
    from spark_eos_connect.apps.jobs.source_to_kafka import parse_args, source_options

    command = first_record.job_command(
        "c", tmp_path / "lines", "t", "host:9092", tmp_path / "ck", 2000
    )
    args = parse_args(command[2:])  # after the interpreter and the script
    job = source_options(args, {"kafka.bootstrap.servers": args.bootstrap_servers})
    on_session = first_record.job_options("c", tmp_path / "lines", "t", "host:9092", 2000)
    assert job == on_session
