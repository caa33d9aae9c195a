"""The Spark standalone cluster of the test session (master + two one-core workers, separate JVMs
from pyspark's distribution) and `spark-submit` of the shipped jobs onto it.

Cluster test modules set `pytestmark = CLUSTER_MARKS`: one xdist group (`make test` runs
`--dist loadgroup`), so one pytest worker runs them, one application at a time, on one cluster."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from spark_eos_connect.jvm.broker import free_port

from .standalone import (
    JOB_MARKER_ENV,
    SPARK_BIN,
    EventLog,
    StandaloneCluster,
    cluster_env,
    end_leftovers,
    event_logs,
)

REPO = Path(__file__).resolve().parents[3]


CLUSTER_MARKS = [pytest.mark.integration, pytest.mark.cluster, pytest.mark.xdist_group("cluster")]
"""`pytestmark` of every cluster test module: one xdist worker runs them all."""


@pytest.fixture(scope="session")
def spark_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandaloneCluster]:
    """Master and two workers, started once per session and stopped at its end."""
    cluster = StandaloneCluster(tmp_path_factory.mktemp("spark-cluster"))
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


@dataclass
class Submitted:
    """One `spark-submit` run: its process (own process group), output file and event logs."""

    process: subprocess.Popen[bytes]
    log: Path
    events: Path
    ui_port: int
    marker: str

    def wait(self, timeout_s: float = 300) -> str:
        """Wait for the exit; everything the job printed."""
        try:
            self.process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(
                f"job still running after {timeout_s}s:\n{self.output()}"
            ) from None
        return self.output()

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def kill(self) -> None:
        """SIGKILL spark-submit's whole process group (its JVM and the Python driver)."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()

    def app_id(self) -> str | None:
        """The application's id, from the driver's REST API (None until it answers)."""
        try:
            [app] = httpx.get(self._api, timeout=5).json()
        except (httpx.HTTPError, ValueError):
            return None
        return str(app["id"])

    def rest(self, path: str) -> Any:
        """The driver's REST API (`/api/v1/applications/<app>/<path>`); None when not up."""
        app = self.app_id()
        try:
            return None if app is None else httpx.get(f"{self._api}/{app}/{path}", timeout=5).json()
        except (httpx.HTTPError, ValueError):
            return None

    @property
    def _api(self) -> str:
        return f"http://127.0.0.1:{self.ui_port}/api/v1/applications"

    def event_log(self) -> EventLog:
        [log] = event_logs(self.events)
        return log


@pytest.fixture
def submit(spark_cluster: StandaloneCluster, tmp_path: Path) -> Iterator[Callable[..., Submitted]]:
    """`submit("source_to_kafka.py", *args)`: `spark-submit --master spark://...` of a shipped
    job, event log on; still-running jobs are killed at teardown."""
    started: list[Submitted] = []

    def start(script: str, *args: str, conf: dict[str, str] | None = None) -> Submitted:
        events = tmp_path / f"events-{len(started)}"
        events.mkdir()
        ui_port = free_port()
        settings = {
            "spark.eventLog.enabled": "true",
            "spark.eventLog.dir": events.as_uri(),
            "spark.eventLog.rolling.enabled": "false",  # one plain JSON-lines file
            "spark.eventLog.compress": "false",
            "spark.ui.port": str(ui_port),
            # sized for a two-core cluster (Spark's defaults suit hundreds of cores)
            "spark.sql.shuffle.partitions": "2",
            "spark.databricks.delta.snapshotPartitions": "2",
            **(conf or {}),
        }
        argv = [str(SPARK_BIN / "spark-submit"), "--master", spark_cluster.master_url]
        for key, value in settings.items():
            argv += ["--conf", f"{key}={value}"]
        log = tmp_path / f"{Path(script).stem}-{len(started)}.log"
        marker = uuid.uuid4().hex
        env = {
            **cluster_env(spark_cluster.marker),
            JOB_MARKER_ENV: marker,  # the driver's processes only: executors come from workers
            "PYSPARK_PYTHON": sys.executable,
        }
        with log.open("wb") as sink:
            process = subprocess.Popen(
                [*argv, str(REPO / "jobs" / script), *args],
                env=env,
                stdout=sink,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        started.append(Submitted(process, log, events, ui_port, marker))
        return started[-1]

    yield start
    for job in started:
        if job.process.poll() is None:
            job.kill()
        end_leftovers(job.marker, JOB_MARKER_ENV)
    spark_cluster.wait_idle()
