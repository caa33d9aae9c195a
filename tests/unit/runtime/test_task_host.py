"""Task hosts (`runtime.task_host`): framing, where a task's host listens, a request served by
the service it names, and errors that cross back to Spark."""

from __future__ import annotations

import fcntl
import os
import selectors
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import pyarrow as pa
import pytest

from spark_eos_connect.plugins.loader import class_path
from spark_eos_connect.runtime import host_spares, task_host
from spark_eos_connect.runtime.task_host import (
    Reply,
    TaskHost,
    TaskHostError,
    call_host,
    host_socket_path,
    portable,
    recv_frame,
    send_frame,
)
from spark_eos_connect.testing import wait_for


def test_frames_carry_arrow_batches_and_results_both_ways() -> None:
    left, right = socket.socketpair()
    batch = pa.RecordBatch.from_pydict({"offset": list(range(100_000))})
    with left, right:
        sender = threading.Thread(target=send_frame, args=(left, ("rows", batch)))
        sender.start()
        assert recv_frame(right) == ("rows", batch)
        sender.join()
        send_frame(left, ("done", {"records": 100_000}))
        assert recv_frame(right) == ("done", {"records": 100_000})


def test_errors_that_cannot_cross_a_pipe_keep_their_text_and_trace() -> None:
    class Local(Exception):
        def __init__(self, a: int, b: int) -> None:
            super().__init__(f"{a}/{b}")

    kept = ValueError("plain")
    assert portable(kept, "trace") is kept
    converted = portable(Local(1, 2), "Traceback: here")
    assert isinstance(converted, TaskHostError)
    assert "Local: 1/2" in str(converted) and "Traceback: here" in str(converted)


def test_each_task_identity_and_cluster_has_its_own_socket(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EOSCONNECT_SPOOL_DIR", str(tmp_path))
    kafka = {"bootstrap.servers": "a:9092"}

    first = host_socket_path(kafka, "sink\0connect-c\0" + "0")
    assert first == host_socket_path(dict(kafka), "sink\0connect-c\0" + "0")
    assert first != host_socket_path(kafka, "sink\0connect-c\0" + "1")
    assert first != host_socket_path({"bootstrap.servers": "b:9092"}, "sink\0connect-c\0" + "0")
    assert len(str(first)) < 108  # a Unix socket path's limit
    if len(str(tmp_path / "hosts")) <= 80:
        assert first.parent == tmp_path / "hosts"


class CountingService:
    """Counts its requests (kept between them); fails when asked to."""

    closed: ClassVar[list[int]] = []

    def __init__(self) -> None:
        self.served = 0

    def serve(self, request: Mapping[str, Any], reply: Reply) -> Any:
        self.served += 1
        if request.get("fail"):
            raise RuntimeError(f"failed on request {self.served}")
        reply("rows", self.served)
        return {"served": self.served}

    def close(self) -> None:
        CountingService.closed.append(self.served)


class OtherService(CountingService):
    pass


def request(host: TaskHost, service: type[Any], **fields: Any) -> list[tuple[str, Any]]:
    """One request to `host.handle` over a socket pair; the frames sent back."""
    worker, conn = socket.socketpair()
    with worker:
        frame = {
            **fields,
            "service": class_path(service),
            "sys_path": list(sys.path),
            "watch_pid": os.getpid(),
        }
        send_frame(worker, frame)
        with conn:
            host.handle(conn)
        frames = []
        while True:
            kind, payload = recv_frame(worker)
            frames.append((kind, payload))
            if kind in ("done", "error"):
                return frames


def test_a_host_keeps_its_service_between_requests_and_closes_it_on_failure(
    tmp_path: Path,
) -> None:
    CountingService.closed = []
    host = TaskHost(tmp_path / "h.sock", os.getpid())

    assert request(host, CountingService) == [("rows", 1), ("done", {"served": 1})]
    assert request(host, CountingService) == [("rows", 2), ("done", {"served": 2})]
    [(kind, error)] = request(host, CountingService, fail=True)

    assert kind == "error" and isinstance(error, RuntimeError)
    assert str(error) == "failed on request 3"
    assert CountingService.closed == [3]
    assert host.service is None
    assert request(host, CountingService) == [("rows", 1), ("done", {"served": 1})]


def test_a_request_for_another_service_closes_the_kept_one(tmp_path: Path) -> None:
    CountingService.closed = []
    host = TaskHost(tmp_path / "h.sock", os.getpid())
    request(host, CountingService)

    assert request(host, OtherService) == [("rows", 1), ("done", {"served": 1})]

    assert CountingService.closed == [1]
    assert type(host.service) is OtherService
    host.close_service()
    assert CountingService.closed == [1, 1]


class PidService:
    """Answers with the host's process id and the socket it serves."""

    def serve(self, request: Mapping[str, Any], reply: Reply) -> Any:
        return os.getpid(), task_host.serving_path()

    def close(self) -> None:
        pass


def test_a_spawned_host_keeps_none_of_its_workers_files_and_knows_its_socket(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EOSCONNECT_SPOOL_DIR", str(tmp_path))
    monkeypatch.setenv(host_spares.SPARES_ENV, "0")  # no spare outlives the test
    path = host_socket_path({"bootstrap.servers": "a:9092"}, "fork-test")
    channel_read, channel_write = os.pipe()  # stands for a worker's channel to Spark's JVM

    [(_, (pid, serving))] = list(call_host(path, PidService, {}))
    [(_, (again, _))] = list(call_host(path, PidService, {}))
    os.close(channel_write)

    assert pid != os.getpid() and again == pid
    assert serving == path and task_host.serving_path() is None  # the host's, not the worker's
    with selectors.DefaultSelector() as selector:  # select() refuses descriptors >= 1024
        selector.register(channel_read, selectors.EVENT_READ)
        ready = selector.select(0.5)  # the host is still up
    assert ready and os.read(channel_read, 1) == b"", "the host kept the worker's descriptor"
    os.close(channel_read)
    with open(path.with_suffix(".lock"), "w") as lock:  # the spawn lock is not held
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)


WARMED_AT = time.monotonic()
"""When this module was imported (a spare imports its service's module before it listens)."""


class WarmthService:
    """Answers with the host's pid, the socket it serves and when it imported this module."""

    def serve(self, request: Mapping[str, Any], reply: Reply) -> Any:
        return os.getpid(), task_host.serving_path(), WARMED_AT, time.monotonic()

    def close(self) -> None:
        pass


def test_an_idle_host_starts_a_spare_that_the_next_task_claims_warm(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EOSCONNECT_SPOOL_DIR", str(tmp_path))
    monkeypatch.setenv(host_spares.SPARES_ENV, "1")
    executor = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
    monkeypatch.setattr(os, "getppid", lambda: executor.pid)  # the hosts watch it
    kafka = {"bootstrap.servers": "a:9092"}
    first, second = host_socket_path(kafka, "spare-1"), host_socket_path(kafka, "spare-2")
    [spare] = host_spares.spare_paths(first.parent, executor.pid)
    try:
        [(_, (first_pid, _, _, _))] = list(call_host(first, WarmthService, {}))
        wait_for(spare.exists, 60, "the idle host's spare listening")

        claimed_at = time.monotonic()  # CLOCK_MONOTONIC: one clock for every process
        [(_, (pid, serving, warmed_at, _))] = list(call_host(second, WarmthService, {}))

        assert pid not in (first_pid, os.getpid()) and serving == second
        assert not spare.exists()  # claimed: renamed to the task's socket
        assert warmed_at < claimed_at  # the spare imported the service's module beforehand
        assert "spare host now serves" in second.with_suffix(".log").read_text()
        [(_, (again, _, _, _))] = list(call_host(second, WarmthService, {}))
        assert again == pid  # it is the task's host now
    finally:
        executor.send_signal(signal.SIGKILL)
        executor.wait()
    wait_for(  # every host and spare watched the executor
        lambda: not any(tmp_path.glob("**/*.sock")), 30, "the hosts and spares gone"
    )


def test_an_idle_spare_retires_unless_claimed_and_a_claimed_one_still_watches_its_executor(
    tmp_path: Path,
) -> None:
    spare = tmp_path / "spare-1-0.sock"
    spare.touch()
    idle = TaskHost(spare, os.getpid(), spare=True)
    idle.last_request -= host_spares.SPARE_IDLE_S + 1
    assert idle._should_exit() and not spare.exists()  # retired: no claimer can take it now

    spare.touch()
    spare.rename(tmp_path / "task.sock")  # a claimer took it
    assert not idle._should_exit()  # its task's request is coming
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    claimed = TaskHost(spare, gone.pid, spare=True)
    claimed.last_request -= host_spares.SPARE_IDLE_S + 1
    assert claimed._should_exit()  # but not when its executor is gone


class MarkedService:
    """Serves at once; writes "closed" into its request's `marker` file when closed."""

    def __init__(self) -> None:
        self.marker: Path | None = None

    def serve(self, request: Mapping[str, Any], reply: Reply) -> Any:
        self.marker = Path(request["marker"])
        return os.getpid()

    def close(self) -> None:
        if self.marker is not None:
            self.marker.write_text("closed")


def test_a_host_told_its_executor_shuts_down_closes_its_service_and_exits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pyspark's daemon sends SIGHUP to its process group as the executor shuts down: the host
    closes its service (a source task aborts its open transaction) and exits, rather than dying
    with it or waiting out `HOST_IDLE_S`."""
    monkeypatch.setenv("EOSCONNECT_SPOOL_DIR", str(tmp_path))
    monkeypatch.setenv(host_spares.SPARES_ENV, "0")
    path = host_socket_path({"bootstrap.servers": "a:9092"}, "sighup-test")
    marker = tmp_path / "closed.txt"
    [(_, pid)] = list(call_host(path, MarkedService, {"marker": str(marker)}))

    os.kill(pid, signal.SIGHUP)

    bound = task_host.HOST_IDLE_S / 3
    wait_for(lambda: marker.exists() and marker.read_text() == "closed", bound, "service closed")
    wait_for(lambda: not path.exists(), bound, "the host gone (its socket removed)")
