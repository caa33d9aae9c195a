"""A JVM task host lives as long as the Python process that spawned it: shared by its tasks,
and gone when that process is killed (its requests pipe closes), so no JVM outlives an
executor's task host."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

from spark_eos_connect.jvm import jars
from spark_eos_connect.jvm_tasks.client import close_hosts, shared_host
from spark_eos_connect.testing import wait_for

SPAWN = """
import sys, time
from spark_eos_connect.jvm_tasks.client import shared_host
print(shared_host(sys.argv[1:]).pid, flush=True)
time.sleep(600)
"""


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as stat:  # a zombie awaiting its reaping is gone too
        return stat.read().split(")")[-1].split()[0] != "Z"


def test_one_host_per_process_and_plugin_path() -> None:
    plugin_path = [str(jars.plugin_path("connect-file"))]
    try:
        host = shared_host(plugin_path)
        assert shared_host(plugin_path) is host and host.alive()
    finally:
        close_hosts()
    assert not host.alive()


def test_the_jvm_ends_when_its_python_process_is_killed() -> None:
    spawner = subprocess.Popen(
        [sys.executable, "-c", SPAWN, str(jars.plugin_path("connect-file"))],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert spawner.stdout is not None
        jvm = int(spawner.stdout.readline())
        assert alive(jvm)
        spawner.send_signal(signal.SIGKILL)
        spawner.wait(30)
        wait_for(lambda: not alive(jvm), 30, f"JVM task host {jvm} to end with its Python process")
    finally:
        spawner.kill()
        spawner.wait()
