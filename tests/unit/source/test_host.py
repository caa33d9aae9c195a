"""Task hosts: framing, where a task's host listens, and errors that cross back to Spark."""

from __future__ import annotations

import socket
import threading
from pathlib import Path

import pyarrow as pa
import pytest

from spark_eos_connect.runtime.task_host import TaskHostError, portable, recv_frame, send_frame
from spark_eos_connect.source.host import host_socket_path
from spark_eos_connect.testing import example_plan as plan


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


def test_each_task_and_cluster_has_its_own_host(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EOSCONNECT_SPOOL_DIR", str(tmp_path))
    kafka = {"bootstrap.servers": "a:9092"}

    first = host_socket_path(kafka, plan([]))
    assert first == host_socket_path(kafka, plan([], max_records=5))
    assert first != host_socket_path(kafka, plan([], transactional_id="eosconnect-c-1"))
    assert first != host_socket_path({"bootstrap.servers": "b:9092"}, plan([]))
    assert len(str(first)) < 108  # a Unix socket path's limit
    if len(str(tmp_path / "hosts")) <= 80:
        assert first.parent == tmp_path / "hosts"


def test_errors_that_cannot_cross_a_pipe_keep_their_text_and_trace() -> None:
    class Local(Exception):
        def __init__(self, a: int, b: int) -> None:
            super().__init__(f"{a}/{b}")

    kept = ValueError("plain")
    assert portable(kept, "trace") is kept
    converted = portable(Local(1, 2), "Traceback: here")
    assert isinstance(converted, TaskHostError)
    assert "Local: 1/2" in str(converted) and "Traceback: here" in str(converted)
