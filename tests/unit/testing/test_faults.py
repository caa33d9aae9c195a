"""Fault specs of the crash tests, the injected task failures (`fail_<point>`) and the lost
(JVM) task hosts (`lose_host_<point>`, `lose_jvm_<point>`)."""

from __future__ import annotations

import os
import pickle
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from spark_eos_connect.jvm_tasks import client
from spark_eos_connect.runtime import commit_hooks
from spark_eos_connect.testing.faults import (
    FAULT_ENV,
    MARKER_ENV,
    EnvironmentFaults,
    InjectedFault,
    armed_batches,
    claim_marker,
    job_environment,
    wait_until_dead,
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


def test_an_armed_failure_raises_once_per_marker(tmp_path: Path) -> None:
    marker = tmp_path / "fired"
    faults = EnvironmentFaults("fail_after_commit@1", str(marker))

    faults.reached("after_commit", 0)  # another batch
    faults.reached("after_commit", None)  # not a streaming task
    faults.reached("before_commit", 1)  # another point
    assert not marker.exists()
    with pytest.raises(InjectedFault, match="fail_after_commit@1"):
        faults.reached("after_commit", 1)
    faults.reached("after_commit", 1)  # the retry goes on
    assert marker.read_text() == "fail_after_commit@1\n"


def test_without_a_marker_an_armed_failure_raises_every_time() -> None:
    faults = EnvironmentFaults("fail_before_commit@0")

    for _ in range(2):
        with pytest.raises(InjectedFault):
            faults.reached("before_commit", 0)


def test_armed_tells_whether_a_point_can_fire() -> None:
    faults = EnvironmentFaults("put@2,fail_after_commit@1")

    assert faults.armed("put") and faults.armed("after_commit")
    assert not faults.armed("before_commit")


def test_a_job_environment_names_the_faults_and_their_hooks() -> None:
    assert job_environment(None) == {}
    assert job_environment("poll@3", "/tmp/marker") == {
        FAULT_ENV: "poll@3",
        MARKER_ENV: "/tmp/marker",
        commit_hooks.HOOKS_ENV: "spark_eos_connect.testing.faults.EnvironmentFaults",
    }


def test_the_driver_installs_the_hooks_its_environment_names(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(commit_hooks.HOOKS_ENV, raising=False)
    monkeypatch.setenv(FAULT_ENV, "poll@3")  # armed, but no hooks named: nothing installed
    try:
        assert commit_hooks.install_from_environment() is commit_hooks.NO_HOOKS
        assert commit_hooks.installed() is commit_hooks.NO_HOOKS

        for name, value in job_environment("poll@3", "/tmp/marker").items():
            monkeypatch.setenv(name, value)
        monkeypatch.delenv(commit_hooks.DRIVER_GROUP_ENV, raising=False)
        faults = commit_hooks.install_from_environment()
        assert commit_hooks.installed() is faults
        assert faults == EnvironmentFaults("poll@3", "/tmp/marker", os.getpgrp())
        assert os.environ[commit_hooks.DRIVER_GROUP_ENV] == str(os.getpgrp())
        assert pickle.loads(pickle.dumps(faults)) == faults  # it travels in the plans
    finally:
        commit_hooks.install(commit_hooks.NO_HOOKS)


def test_spark_processes_build_the_jobs_hooks_from_the_environment(tmp_path: Path) -> None:
    """A data source's driver-side calls run in Python processes Spark starts: they find the
    job's hooks (and its driver's group) through the environment they inherit. Each runs in a
    process group of its own here, as Spark's Python daemon does."""
    env = {**os.environ, **job_environment("fail_before_commit@4")}
    env.pop(commit_hooks.DRIVER_GROUP_ENV, None)
    script = (
        "import os, subprocess, sys\n"
        "from spark_eos_connect.runtime.commit_hooks import install_from_environment\n"
        "install_from_environment()\n"
        "print(os.getpgrp(), flush=True)\n"
        "subprocess.run([sys.executable, '-c', "
        "'from spark_eos_connect.runtime.commit_hooks import installed; print(installed())'], "
        "check=True, start_new_session=True)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        start_new_session=True,
    )

    assert done.returncode == 0, done.stderr
    driver_group, hooks = done.stdout.splitlines()
    assert int(driver_group) != os.getpgrp()
    assert "EnvironmentFaults(spec='fail_before_commit@4'" in hooks
    assert f"driver_group={driver_group}" in hooks


def test_an_injected_fault_crosses_the_task_host_socket_as_itself() -> None:
    error = pickle.loads(pickle.dumps(InjectedFault("injected fault fail_after_commit@1")))

    assert isinstance(error, InjectedFault)
    assert str(error) == "injected fault fail_after_commit@1"


def test_a_lost_host_is_this_process_killed_once_per_marker(tmp_path: Path) -> None:
    marker = tmp_path / "fired"
    env = {**os.environ, FAULT_ENV: "lose_host_after_commit@1", MARKER_ENV: str(marker)}
    script = (
        "import os\n"
        "from spark_eos_connect.testing.faults import EnvironmentFaults\n"
        "faults = EnvironmentFaults.from_environment(os.environ)\n"
        "faults.reached('after_commit', 0)\n"  # another batch
        "faults.reached('before_commit', 1)\n"  # another point
        "faults.reached('after_commit', 1)\n"
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


class FakeJvmHost:
    """Stands in for a `TaskHostProcess`: a child process that sleeps."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(["sleep", "60"])
        self.pid = self.process.pid

    def alive(self) -> bool:
        return self.process.poll() is None


def test_a_lost_jvm_is_the_jvm_task_host_alone_killed_once_per_marker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "fired"
    faults = EnvironmentFaults("lose_jvm_poll@1", str(marker))
    hosts: list[FakeJvmHost] = []
    monkeypatch.setattr(client, "running_hosts", lambda: hosts)

    faults.reached("poll", 1)  # no JVM task host in this process: nothing fires
    assert not marker.exists()
    hosts.append(FakeJvmHost())
    faults.reached("poll", 0)  # another batch
    faults.reached("after_commit", 1)  # another point
    assert hosts[0].alive()
    faults.reached("poll", 1)

    assert hosts[0].process.wait(10) == -signal.SIGKILL  # and this process goes on
    assert marker.read_text() == "lose_jvm_poll@1\n"
    assert faults.armed("poll") and not faults.armed("before_commit")
    hosts.append(FakeJvmHost())
    try:
        faults.reached("poll", 1)  # the retry's new JVM finds the marker
        assert hosts[1].alive()
    finally:
        hosts[1].process.kill()
        hosts[1].process.wait()


def test_a_lost_host_takes_its_jvm_task_host_with_it(tmp_path: Path) -> None:
    """The JVM is SIGKILLed, not left to end in order when its input closes."""
    env = {**os.environ, FAULT_ENV: "lose_host_after_commit@1"}
    script = (
        "import os, subprocess\n"
        "from spark_eos_connect.jvm_tasks import client\n"
        "from spark_eos_connect.testing.faults import EnvironmentFaults\n"
        "jvm = subprocess.Popen(['sleep', '60'], start_new_session=True)\n"
        "class Host:\n"
        "    pid = jvm.pid\n"
        "    def alive(self): return jvm.poll() is None\n"
        "client.running_hosts = lambda: [Host()]\n"
        "print(jvm.pid, flush=True)\n"
        "EnvironmentFaults.from_environment(os.environ).reached('after_commit', 1)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=False
    )

    assert done.returncode == -signal.SIGKILL, done.stderr
    jvm_pid = int(done.stdout.split()[0])
    wait_until_dead(jvm_pid)  # raises if it still runs; it is init's to reap now
