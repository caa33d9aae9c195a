"""The shipped jobs answer a user's mistakes fast and on their last line: a refused or
unresolvable broker address before Spark starts, a failure by its root cause (issue 40)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from spark_eos_connect.kafka.broker import free_port
from spark_eos_connect.spark.job_support import QueryFailedError, job_entry

JOBS_ARGS = {
    "source_to_kafka.py": ["--connector-class", "FileStreamSource", "--option", "topic=t"],
    "kafka_to_sink.py": ["--connector-class", "FileStreamSink", "--topics", "t"],
    "kafka_to_delta.py": ["--topics", "t", "--path", "/tmp/never-written"],
}


@pytest.mark.parametrize("script", sorted(JOBS_ARGS))
@pytest.mark.parametrize("address", ["127.0.0.1:{port}", "no-such-host.invalid:9092"])
def test_a_refused_or_unresolvable_address_fails_in_seconds_before_spark(
    run_job: Callable[..., Any], script: str, address: str, tmp_path: Path
) -> None:
    address = address.format(port=free_port())
    args = ["--name", "typo", *JOBS_ARGS[script], "--bootstrap-servers", address]
    started = time.monotonic()

    done = run_job(script, *args, "--checkpoint", str(tmp_path / "ck"), timeout_s=60)

    took = time.monotonic() - started
    assert done.returncode == 1, done.stderr[-2000:]
    assert took < 10, f"took {took:.1f} s"
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith(f"{Path(script).stem}: kafka.bootstrap.servers={address}: "), last
    assert "Traceback" not in done.stderr
    assert "\tat org." not in done.stderr + done.stdout, "no JVM stack: Spark never started"
    assert "open transactions not aborted" not in done.stderr, "nothing was opened"
    assert not (tmp_path / "ck").exists()


def test_a_failure_ends_on_its_root_cause_after_the_full_trace(
    capsys: pytest.CaptureFixture[str],
) -> None:
    @job_entry
    def main(argv: list[str] | None = None) -> int:
        try:
            raise OSError("Parent path is not a directory: file:/etc/hostname")
        except OSError as cause:
            raise RuntimeError("An error occurred while calling o152.save") from cause

    assert main([]) == 1

    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err
    assert err.strip().splitlines()[-1] == (
        "test_job_mistakes: failed: OSError: Parent path is not a directory: file:/etc/hostname"
    )


def test_the_projects_own_errors_end_on_their_message_alone(
    capsys: pytest.CaptureFixture[str],
) -> None:
    @job_entry
    def main(argv: list[str] | None = None) -> int:
        raise QueryFailedError("the streaming query failed: ValueError: bad row")

    assert main() == 1

    err = capsys.readouterr().err
    assert err == "test_job_mistakes: the streaming query failed: ValueError: bad row\n"
