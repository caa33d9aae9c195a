"""A Spark standalone cluster from pyspark's own distribution: one Master and two Workers (one
core each) on 127.0.0.1, each a separate JVM started with `spark-class`, plus helpers to find an
application's executor JVMs and to read what an application's event log says it ran on.

Every process started here, and everything they start, carries `MARKER_ENV` in its environment,
so `stop()` can also end what a killed driver or executor left behind.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pyspark

from spark_eos_connect.jvm.broker import free_port
from spark_eos_connect.testing import wait_for

MARKER_ENV = "EOSCONNECT_TEST_CLUSTER"
JOB_MARKER_ENV = "EOSCONNECT_TEST_JOB"
SPARK_BIN = Path(pyspark.__file__).parent / "bin"
EXECUTOR_CLASS = "org.apache.spark.executor.CoarseGrainedExecutorBackend"


def cluster_env(marker: str) -> dict[str, str]:
    """Environment of every cluster process: loopback only, and the marker."""
    return {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", MARKER_ENV: marker}


def process_args(pid: int) -> list[str]:
    """The command line of process `pid` (empty once it is gone)."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    return [part.decode(errors="replace") for part in raw.split(b"\0") if part]


def _environ_has(pid: int, entry: bytes) -> bool:
    try:
        return entry in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return False


def _pids() -> list[int]:
    return [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit()]


def marked_pids(marker: str, name: str = MARKER_ENV) -> list[int]:
    """Live processes whose environment has `name=marker`: what the cluster (or one job,
    with `JOB_MARKER_ENV`) started, directly or not."""
    entry = f"{name}={marker}".encode()
    return [pid for pid in _pids() if pid != os.getpid() and _environ_has(pid, entry)]


def executor_pids(app_id: str) -> dict[str, int]:
    """`{executor id: pid}` of the application's executor JVMs, from their command lines."""
    found: dict[str, int] = {}
    for pid in _pids():
        argv = process_args(pid)
        if EXECUTOR_CLASS in argv and app_id in argv:
            found[argv[argv.index("--executor-id") + 1]] = pid
    return found


@dataclass
class StandaloneCluster:
    """Master and workers of one test session."""

    work: Path
    workers: int = 2
    marker: str = field(default_factory=lambda: uuid.uuid4().hex)
    port: int = field(default_factory=free_port)
    web_port: int = field(default_factory=free_port)
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @property
    def master_url(self) -> str:
        return f"spark://127.0.0.1:{self.port}"

    def state(self) -> dict[str, Any]:
        """The master's JSON status: workers, active and completed applications."""
        response = httpx.get(f"http://127.0.0.1:{self.web_port}/json/", timeout=5)
        response.raise_for_status()
        return dict(response.json())

    def _answers(self, check: str) -> bool:
        for process in self.processes:
            assert process.poll() is None, f"a cluster process exited: {self.logs()}"
        try:
            state = self.state()
        except (httpx.HTTPError, ValueError):  # not up yet, or a page that is no JSON yet
            return False
        if check == "alive":
            return bool(state.get("status") == "ALIVE")
        alive = [w for w in state.get("workers", []) if w.get("state") == "ALIVE"]
        return len(alive) == self.workers

    def _spawn(self, name: str, *argv: str) -> None:
        log = (self.work / f"{name}.log").open("wb")
        self.processes.append(
            subprocess.Popen(
                [str(SPARK_BIN / "spark-class"), *argv],
                env=cluster_env(self.marker),
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        )
        log.close()

    def start(self, timeout_s: float = 180) -> StandaloneCluster:
        """Start the master, then the workers; return once all workers registered."""
        self.work.mkdir(parents=True, exist_ok=True)
        self._spawn(
            "master",
            "org.apache.spark.deploy.master.Master",
            *("--host", "127.0.0.1", "--port", str(self.port)),
            *("--webui-port", str(self.web_port)),
        )
        wait_for(lambda: self._answers("alive"), timeout_s, "the Spark master")
        for index in range(self.workers):
            work_dir = self.work / f"worker-{index}"
            self._spawn(
                f"worker-{index}",
                "org.apache.spark.deploy.worker.Worker",
                self.master_url,
                *("--host", "127.0.0.1", "--cores", "1", "--memory", "1g"),
                *("--webui-port", str(free_port()), "--work-dir", str(work_dir)),
            )
        wait_for(lambda: self._answers("workers"), timeout_s, f"{self.workers} Spark workers")
        return self

    def active_apps(self) -> list[dict[str, Any]]:
        return list(self.state().get("activeapps", []))

    def completed_apps(self) -> list[dict[str, Any]]:
        return list(self.state().get("completedapps", []))

    def wait_idle(self, timeout_s: float = 120) -> None:
        """Until no application runs (and holds the workers' cores)."""
        wait_for(lambda: not self.active_apps(), timeout_s, "no running application")

    def logs(self) -> str:
        return "\n".join(
            f"--- {log.name}\n{log.read_text(errors='replace')[-2000:]}"
            for log in sorted(self.work.glob("*.log"))
        )

    def stop(self, timeout_s: float = 60) -> None:
        """Workers, then the master: SIGTERM, SIGKILL if they linger; then any leftover."""
        for process in reversed(self.processes):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
        for process in self.processes:
            try:
                process.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        self.processes.clear()
        end_leftovers(self.marker)


def end_leftovers(marker: str, name: str = MARKER_ENV, grace_s: float = 30) -> list[int]:
    """Wait for processes carrying `name=marker` to exit on their own; SIGKILL the rest."""
    deadline = time.monotonic() + grace_s
    while marked_pids(marker, name) and time.monotonic() < deadline:
        time.sleep(0.5)
    left = marked_pids(marker, name)
    for pid in left:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    return left


@dataclass(frozen=True)
class EventLog:
    """What an application's event log says about where it ran."""

    master: str
    app_id: str
    executors_added: dict[str, str]
    """executor id -> host"""
    executors_removed: dict[str, str]
    """executor id -> reason"""
    tasks_per_executor: Counter[str]
    failed_tasks: list[str]
    """end reasons of failed task attempts"""


def read_event_log(path: Path) -> EventLog:
    """Parse one event log file (JSON lines)."""
    master = app_id = ""
    added: dict[str, str] = {}
    removed: dict[str, str] = {}
    tasks: Counter[str] = Counter()
    failed: list[str] = []
    for line in path.read_text().splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:  # the last line of a killed application's log
            continue
        kind = event.get("Event")
        if kind == "SparkListenerEnvironmentUpdate":
            master = event["Spark Properties"].get("spark.master", "")
        elif kind == "SparkListenerApplicationStart":
            app_id = event.get("App ID", "")
        elif kind == "SparkListenerExecutorAdded":
            added[event["Executor ID"]] = event["Executor Info"]["Host"]
        elif kind == "SparkListenerExecutorRemoved":
            removed[event["Executor ID"]] = event.get("Removed Reason", "")
        elif kind == "SparkListenerTaskEnd":
            tasks[event["Task Info"]["Executor ID"]] += 1
            reason = event.get("Task End Reason", {}).get("Reason", "Success")
            if reason != "Success":
                failed.append(reason)
    return EventLog(master, app_id, added, removed, tasks, failed)


def event_logs(folder: Path) -> list[EventLog]:
    """Every application's event log in `folder`, oldest first."""
    files = sorted((p for p in folder.iterdir() if p.is_file()), key=lambda p: p.stat().st_mtime)
    return [read_event_log(path) for path in files]
