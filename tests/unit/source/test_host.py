"""A source task's host: one per task and cluster (the host itself: `tests/unit/runtime`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from spark_eos_connect.source.host import host_socket_path
from spark_eos_connect.testing import example_plan as plan


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
