"""A real Kafka Connect 4.3.1 distributed worker as a child JVM: for `make bench` (the peer it
is timed against) and for the tests that use Connect as an oracle.

The jars come from Maven Central through `jvm/connect-pom.xml` (`ensure_jars("connect")`). The
worker is one-node cluster of its own (`group.id`, internal topics named after it) with
`exactly.once.source.support=enabled`; REST calls go through `urllib`, so nothing beyond the
standard library is needed.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from importlib import resources
from pathlib import Path
from types import TracebackType
from typing import Any

from spark_eos_connect.jvm.broker import HOST, free_port
from spark_eos_connect.jvm.jars import ensure_jars
from spark_eos_connect.jvm.processes import terminate

MAIN_CLASS = "org.apache.kafka.connect.cli.ConnectDistributed"
FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
STRING_CONVERTER = "org.apache.kafka.connect.storage.StringConverter"
START_TIMEOUT_S = 120.0
REQUEST_TIMEOUT_S = 30.0
STATUS_EVERY_S = 2.0
"""How often `raise_if_failed` asks for a running connector's status."""
RETRIED_CODES = (409, 500, 503)
"""Answers of a worker that is still joining its group or rebalancing."""


def worker_properties(
    bootstrap: str, group_id: str, port: int, extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    """A one-worker exactly-once cluster: group `group_id`, internal topics `<group_id>-configs`,
    `-offsets` and `-status`, REST on `HOST:port`; `extra` adds or overrides properties."""
    props = {
        "bootstrap.servers": bootstrap,
        "group.id": group_id,
        "config.storage.topic": f"{group_id}-configs",
        "offset.storage.topic": f"{group_id}-offsets",
        "status.storage.topic": f"{group_id}-status",
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
    props.update(extra or {})
    return props


def _java() -> str:
    found = shutil.which("java")
    if found is None:
        raise RuntimeError("Java 17+ is needed for the Kafka Connect worker")
    return found


class ConnectRestError(RuntimeError):
    """A REST call answered with an error status; `status` and `body` hold the answer."""

    def __init__(self, method: str, path: str, status: int, body: Any) -> None:
        super().__init__(f"{method} {path}: {status} {body}")
        self.status = status
        self.body = body


class ConnectWorker:
    """A `ConnectDistributed` child JVM in its own process group; stopped (then killed) on exit.

    `start()` returns once the REST API answers; `call` returns a status and a decoded body,
    `request` only the body (raising `ConnectRestError` on an error status).
    """

    def __init__(
        self,
        bootstrap: str,
        group_id: str,
        work_dir: Path,
        heap: str = "1g",
        extra: Mapping[str, str] | None = None,
    ) -> None:
        self.port = free_port()
        self.url = f"http://{HOST}:{self.port}"
        self.work_dir = work_dir
        self.log_path = work_dir / "connect.log"
        self.props = worker_properties(bootstrap, group_id, self.port, extra)
        self.heap = heap
        self._process: subprocess.Popen[bytes] | None = None
        self._next_status = 0.0

    @property
    def group_id(self) -> str:
        """The worker's `group.id`, prefix of its transactional ids."""
        return self.props["group.id"]

    @property
    def offsets_topic(self) -> str:
        """The worker's global offsets topic."""
        return self.props["offset.storage.topic"]

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

    def start(self, timeout_s: float = START_TIMEOUT_S) -> ConnectWorker:
        """Start the JVM and wait until its REST API lists connectors."""
        self.work_dir.mkdir(parents=True, exist_ok=True)
        props_path = self.work_dir / "worker.properties"
        props_path.write_text("".join(f"{k}={v}\n" for k, v in self.props.items()))
        command = self.command(props_path)
        with self.log_path.open("ab") as log:
            self._process = subprocess.Popen(
                command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            self._raise_if_exited()
            with contextlib.suppress(OSError, ValueError, ConnectRestError):
                if isinstance(self.request("GET", "/connectors"), list):
                    return self
            time.sleep(0.3)
        raise RuntimeError(f"the Connect worker did not answer in time: {self.log_tail()}")

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        """One REST call: (status code, decoded JSON body or None when empty). `body` is sent
        as JSON, or as it is when given as bytes."""
        data = body if body is None or isinstance(body, bytes) else json.dumps(body).encode()
        request = urllib.request.Request(
            self.url + path, data=data, method=method, headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=REQUEST_TIMEOUT_S) as response:
                return response.status, _decoded(response.read())
        except urllib.error.HTTPError as error:
            return error.code, _decoded(error.read())

    def request(self, method: str, path: str, body: Any = None) -> Any:
        """One REST call; the decoded answer, or `ConnectRestError` for a status >= 400."""
        status, answer = self.call(method, path, body)
        if status >= 400:
            raise ConnectRestError(method, path, status, answer)
        return answer

    def put_connector(self, name: str, config: Mapping[str, str], timeout_s: float = 60.0) -> Any:
        """`PUT /connectors/NAME/config`, retried while the worker is still joining its group."""
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                return self.request("PUT", f"/connectors/{name}/config", dict(config))
            except ConnectRestError as error:
                if error.status not in RETRIED_CODES or time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def status(self, name: str) -> dict[str, Any] | None:
        """`GET /connectors/NAME/status`, None while the worker has no status for it."""
        status, body = self.call("GET", f"/connectors/{name}/status")
        return body if status == 200 and isinstance(body, dict) else None

    def wait_for_status(
        self,
        name: str,
        accept: Callable[[dict[str, Any]], bool],
        timeout_s: float = 60.0,
        what: str = "the expected status",
    ) -> dict[str, Any]:
        """Poll the connector's status until `accept` holds; raise with the last one if it never
        does, or at once when the connector or a task is FAILED (unless `accept` takes it)."""
        deadline = time.monotonic() + timeout_s
        last: dict[str, Any] | None = None
        while True:
            self._raise_if_exited()
            last = self.status(name)
            if last is not None and accept(last):
                return last
            failed = _failed(last)
            if failed is not None:
                raise RuntimeError(f"{name} FAILED while waiting for {what}: {failed[:2000]}")
            if time.monotonic() > deadline:
                raise TimeoutError(f"{name}: no {what} within {timeout_s:.0f} s; last {last}")
            time.sleep(0.2)

    def raise_if_failed(self, name: str) -> None:
        """Raise when the worker died or the connector or one of its tasks is FAILED (asked at
        most every `STATUS_EVERY_S`)."""
        self._raise_if_exited()
        if time.monotonic() < self._next_status:
            return
        self._next_status = time.monotonic() + STATUS_EVERY_S
        try:
            failed = _failed(self.status(name))
        except (OSError, ValueError):
            return  # the worker is busy: asked again later
        if failed is not None:
            raise RuntimeError(f"{name} FAILED: {failed[:2000]}")

    def _raise_if_exited(self) -> None:
        if self._process is None or self._process.poll() is not None:
            raise RuntimeError(f"the Connect worker exited: {self.log_tail()}")

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


def _decoded(text: bytes) -> Any:
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text.decode(errors="replace")


def _failed(status: Mapping[str, Any] | None) -> str | None:
    """The trace of the connector's or a task's FAILED state, None if nothing failed."""
    if status is None:
        return None
    for state in (status.get("connector", {}), *status.get("tasks", [])):
        if state.get("state") == "FAILED":
            return str(state.get("trace"))
    return None
