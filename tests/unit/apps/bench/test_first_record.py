"""How the bench times a first record: the floor job until its marker, a job that dies early,
and the options the on-session query shares with the job from nothing."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

from spark_eos_connect.apps.bench import first_record


def test_the_floor_is_timed_until_the_marker_has_a_line_then_stopped(tmp_path: Path) -> None:
    marker, pid_file = tmp_path / "marker", tmp_path / "pid"
    script = (
        f"import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); "
        f"time.sleep(0.2); open({str(marker)!r}, 'a').write('1\\n'); time.sleep(60)"
    )
    seconds = first_record.time_floor_job(
        [sys.executable, "-c", script], marker, tmp_path / "job.log"
    )
    assert 0.2 <= seconds < 30
    with pytest.raises(ProcessLookupError):  # stopped and reaped
        os.kill(int(pid_file.read_text()), 0)


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
    args = parse_args(command[command.index("--name") :])  # after the interpreter and script
    job = source_options(args, {"kafka.bootstrap.servers": args.bootstrap_servers})
    on_session = first_record.job_options("c", tmp_path / "lines", "t", "host:9092", 2000)
    assert job == on_session


class StoppedQuery:
    """A query that is not running and whose stop fails."""

    isActive = False
    status: dict[str, Any] = {}

    def stop(self) -> None:
        raise RuntimeError("stop failed")


class NeverVisible:
    """A visibility watch whose record never comes."""

    def __init__(self, *args: Any) -> None:
        pass

    def __enter__(self) -> NeverVisible:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def wait(self, timeout_s: float, alive: Any) -> float:
        raise TimeoutError("0 of 1 records visible")


def test_a_query_on_the_session_withdraws_its_drain_request_whatever_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from spark_eos_connect.apps.bench import pipeline
    from spark_eos_connect.spark.drain import DRAIN_ENV

    drain = tmp_path / "drain"
    monkeypatch.setenv(DRAIN_ENV, str(drain))
    monkeypatch.setattr(pipeline, "start_query", lambda *args: StoppedQuery())
    monkeypatch.setattr(first_record, "VisibilityWatch", NeverVisible)
    options = first_record.job_options("c", tmp_path / "lines", "t", "host:9092", 10)
    with pytest.raises(RuntimeError, match="stop failed"):  # raised while handling the time-out
        first_record._time_query(None, {}, options, tmp_path / "ck")
    assert not drain.exists()  # the stop asked for a drain and failed; the request is gone
