"""Mode 2, the peer: a Kafka Connect 4.3.1 distributed worker with
`exactly.once.source.support=enabled` (jars from Maven Central, fetched on first use) running
FileStreamSourceConnector on the bench's file, timed from `PUT /connectors/NAME/config` until
every line is visible read_committed."""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from types import TracebackType
from typing import Any

from spark_eos_connect.bench.config import CONNECT
from spark_eos_connect.bench.kafka_io import VisibilityWatch
from spark_eos_connect.bench.results import ModeResult
from spark_eos_connect.jars import ensure_jars
from spark_eos_connect.kafka.broker import HOST, free_port
from spark_eos_connect.processes import terminate

MAIN_CLASS = "org.apache.kafka.connect.cli.ConnectDistributed"
FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
STRING_CONVERTER = "org.apache.kafka.connect.storage.StringConverter"
START_TIMEOUT_S = 120.0
RUN_TIMEOUT_S = 900.0
STATUS_EVERY_S = 2.0
"""How often a running connector's status is checked for FAILED."""


def worker_properties(bootstrap: str, name: str, port: int) -> dict[str, str]:
    """A one-worker EOS cluster on the bench's broker, with its own group and internal topics."""
    return {
        "bootstrap.servers": bootstrap,
        "group.id": name,
        "config.storage.topic": f"{name}-configs",
        "offset.storage.topic": f"{name}-offsets",
        "status.storage.topic": f"{name}-status",
        "config.storage.replication.factor": "1",
        "offset.storage.replication.factor": "1",
        "status.storage.replication.factor": "1",
        "key.converter": STRING_CONVERTER,
        "value.converter": STRING_CONVERTER,
        "exactly.once.source.support": "enabled",
        "listeners": f"http://{HOST}:{port}",
        "rest.advertised.host.name": HOST,
        "rest.advertised.port": str(port),
        "plugin.discovery": "service_load",
    }


def file_connector_config(path: Path, topic: str, batch_size: int) -> dict[str, str]:
    """FileStreamSourceConnector on `path`, one transaction per poll (Connect's default)."""
    return {
        "connector.class": FILE_SOURCE,
        "tasks.max": "1",
        "file": str(path),
        "topic": topic,
        "batch.size": str(batch_size),
        "exactly.once.support": "required",
    }


def _java() -> str:
    found = shutil.which("java")
    if found is None:
        raise RuntimeError("Java 17+ is needed for the Kafka Connect worker")
    return found


class ConnectWorker:
    """A `ConnectDistributed` child JVM; stopped (then killed) on exit."""

    def __init__(self, bootstrap: str, name: str, work_dir: Path, heap: str = "1g") -> None:
        self.port = free_port()
        self.url = f"http://{HOST}:{self.port}"
        self.work_dir = work_dir
        self.log_path = work_dir / "connect.log"
        self.props = worker_properties(bootstrap, name, self.port)
        self.heap = heap
        self._process: subprocess.Popen[bytes] | None = None
        self._next_status = 0.0

    def command(self, props_path: Path) -> list[str]:
        """The JVM command line."""
        log4j = resources.files("spark_eos_connect.jvm").joinpath("log4j2.properties")
        return [
            _java(),
            f"-Xmx{self.heap}",
            f"-Dlog4j2.configurationFile={log4j}",
            "-cp",
            str(ensure_jars("connect") / "*"),
            MAIN_CLASS,
            str(props_path),
        ]

    def start(self) -> ConnectWorker:
        """Start the JVM and wait until its REST API answers."""
        self.work_dir.mkdir(parents=True, exist_ok=True)
        props_path = self.work_dir / "worker.properties"
        props_path.write_text("".join(f"{k}={v}\n" for k, v in self.props.items()))
        command = self.command(props_path)
        with self.log_path.open("ab") as log:
            self._process = subprocess.Popen(
                command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RuntimeError(f"the Connect worker exited: {self.log_tail()}")
            with contextlib.suppress(OSError, ValueError):
                if isinstance(self.request("GET", "/connectors"), list):
                    return self
            time.sleep(0.3)
        raise RuntimeError(f"the Connect worker did not answer in time: {self.log_tail()}")

    def request(self, method: str, path: str, body: Mapping[str, Any] | None = None) -> Any:
        """One REST call; the decoded JSON answer (None when empty)."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.url + path, data=data, method=method, headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            text = response.read()
        return json.loads(text) if text else None

    def put_connector(self, name: str, config: Mapping[str, str]) -> None:
        """`PUT /connectors/NAME/config`, retried while the worker is still joining its group."""
        deadline = time.monotonic() + 60
        while True:
            try:
                self.request("PUT", f"/connectors/{name}/config", config)
                return
            except urllib.error.HTTPError as error:
                detail = error.read().decode(errors="replace")
                if error.code not in (409, 500, 503) or time.monotonic() > deadline:
                    raise RuntimeError(f"PUT {name}: {error.code} {detail}") from error
                time.sleep(0.2)

    def raise_if_failed(self, name: str) -> None:
        """Raise when the worker died or the connector or one of its tasks is FAILED."""
        if self._process is None or self._process.poll() is not None:
            raise RuntimeError(f"the Connect worker exited: {self.log_tail()}")
        if time.monotonic() < self._next_status:
            return
        self._next_status = time.monotonic() + STATUS_EVERY_S
        try:
            status = self.request("GET", f"/connectors/{name}/status")
        except (OSError, ValueError):
            return  # not created yet, or the worker is busy: asked again later
        states = [status.get("connector", {}), *status.get("tasks", [])]
        for state in states:
            if state.get("state") == "FAILED":
                raise RuntimeError(f"{name} FAILED: {str(state.get('trace'))[:2000]}")

    def log_tail(self, chars: int = 3000) -> str:
        """The end of the worker's log."""
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return "(no log)"

    def stop(self, timeout_s: float = 30.0) -> None:
        """SIGTERM, then SIGKILL if it does not exit in time."""
        process, self._process = self._process, None
        if process is not None:
            terminate(process, timeout_s)

    def __enter__(self) -> ConnectWorker:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def run_connect(
    kafka: Mapping[str, Any],
    work: str,
    path: Path,
    topic: str,
    lines: int,
    batch_size: int,
    name: str,
    work_dir: Path,
    log: Any = print,
) -> ModeResult:
    """Start a worker, create the connector, time it until every line is visible."""
    with ConnectWorker(kafka["bootstrap.servers"], name, work_dir) as worker:
        log(f"  Connect worker {worker.url} up (log {worker.log_path})")
        with VisibilityWatch(kafka, topic, 1, lines) as watch:
            started = time.monotonic()
            worker.put_connector(name, file_connector_config(path, topic, batch_size))
            reached = watch.wait(RUN_TIMEOUT_S, lambda: worker.raise_if_failed(name))
        with contextlib.suppress(OSError, ValueError):
            worker.request("DELETE", f"/connectors/{name}")
    return ModeResult(
        work,
        CONNECT,
        lines,
        reached - started,
        (),
        "from PUT /connectors/NAME/config until every line is visible read_committed",
    )
