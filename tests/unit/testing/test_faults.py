"""Fault specs of the crash tests, and the injected task failures (`fail_<point>`)."""

from __future__ import annotations

import os
import pickle
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from spark_eos_connect.testing.faults import (
    FAULT_ENV,
    MARKER_ENV,
    InjectedFault,
    armed_batches,
    claim_marker,
    maybe_fail,
)


def test_fault_spec_arms_points_per_batch() -> None:
    spec = "poll@1, after_commit@3,before_commit@x"

    assert armed_batches("poll", spec) == {1}
    assert armed_batches("after_commit", spec) == {3}
    assert armed_batches("before_commit", spec) == set()
    assert armed_batches("poll", None) == set()


def test_failing_points_are_armed_apart_from_the_crash_points() -> None:
    spec = "fail_before_commit@2,after_commit@1,fail_after_commit@1"

    assert armed_batches("fail_before_commit", spec) == {2}
    assert armed_batches("before_commit", spec) == set()
    assert armed_batches("fail_after_commit", spec) == {1}
    assert armed_batches("after_commit", spec) == {1}


def test_only_the_attempt_that_creates_the_marker_fires(tmp_path: Path) -> None:
    marker = tmp_path / "fired"

    assert claim_marker(str(marker), "fail_before_commit@1\n")
    assert not claim_marker(str(marker), "fail_before_commit@1\n")
    assert marker.read_text() == "fail_before_commit@1\n"
    assert claim_marker(None, "ignored") and claim_marker("", "ignored")


def test_an_armed_failure_raises_once_per_marker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "fired"
    monkeypatch.setenv(FAULT_ENV, "fail_after_commit@1")
    monkeypatch.setenv(MARKER_ENV, str(marker))

    maybe_fail("after_commit", 0)  # another batch
    maybe_fail("after_commit", None)  # not a streaming task
    maybe_fail("before_commit", 1)  # another point
    assert not marker.exists()
    with pytest.raises(InjectedFault, match="fail_after_commit@1"):
        maybe_fail("after_commit", 1)
    maybe_fail("after_commit", 1)  # the retry goes on
    assert marker.read_text() == "fail_after_commit@1\n"


def test_without_a_marker_an_armed_failure_raises_every_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(FAULT_ENV, "fail_before_commit@0")
    monkeypatch.delenv(MARKER_ENV, raising=False)

    for _ in range(2):
        with pytest.raises(InjectedFault):
            maybe_fail("before_commit", 0)


def test_an_injected_fault_crosses_the_task_host_socket_as_itself() -> None:
    error = pickle.loads(pickle.dumps(InjectedFault("injected fault fail_after_commit@1")))

    assert isinstance(error, InjectedFault)
    assert str(error) == "injected fault fail_after_commit@1"


def test_a_lost_host_is_this_process_killed_once_per_marker(tmp_path: Path) -> None:
    marker = tmp_path / "fired"
    env = {**os.environ, FAULT_ENV: "lose_host_after_commit@1", MARKER_ENV: str(marker)}
    script = (
        "from spark_eos_connect.testing.faults import inject\n"
        "inject('after_commit', 0)\n"  # another batch
        "inject('before_commit', 1)\n"  # another point
        "inject('after_commit', 1)\n"
        "print('survived')\n"
    )

    def run() -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-c", script]
        return subprocess.run(command, env=env, capture_output=True, text=True, check=False)

    first = run()
    assert first.returncode == -signal.SIGKILL, first.stderr
    assert marker.read_text() == "lose_host_after_commit@1\n"
    second = run()  # the retry finds the marker and goes on
    assert (second.returncode, second.stdout) == (0, "survived\n"), second.stderr
