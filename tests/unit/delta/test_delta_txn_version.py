"""Which `txnVersion` a batch gets when the table is ahead of Spark's batch ids, and when that is
worth a warning: only when Spark's batch ids went below the batch the table's last commit
recorded (a replaced checkpoint), not when a restart re-runs the batch a crash interrupted."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from spark_eos_connect.delta import writer
from spark_eos_connect.delta.writer import DeltaTableWriter

SPARK: Any = object()  # the recorded batch is stubbed below: no session is used


def table_writer(
    monkeypatch: pytest.MonkeyPatch, recorded: int | None
) -> tuple[DeltaTableWriter, list[int | None]]:
    """A writer whose table's last commit recorded batch `recorded`, and the list of the
    history reads it makes."""
    reads: list[int | None] = []

    def last_recorded_batch(spark: Any, config: Any) -> int | None:
        reads.append(recorded)
        return recorded

    monkeypatch.setattr(writer, "last_recorded_batch", last_recorded_batch)
    made = DeltaTableWriter({"name": "orders-to-delta", "path": "/tmp/tables/orders"})
    return made, reads


def test_a_batch_after_the_table_keeps_its_id(monkeypatch: pytest.MonkeyPatch) -> None:
    made, reads = table_writer(monkeypatch, recorded=None)

    assert made._txn_version(SPARK, 5, None) == 5
    assert made._txn_version(SPARK, 5, 4) == 5
    assert reads == []


def test_a_restart_re_running_the_committed_batch_is_no_warning(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    made, reads = table_writer(monkeypatch, recorded=1)

    with caplog.at_level(logging.INFO, logger=writer.log.name):
        assert made._txn_version(SPARK, 1, 1) == 2  # the re-run of batch 1
        assert made._txn_version(SPARK, 2, 2) == 3  # the run goes on one version ahead

    assert [r.levelno for r in caplog.records] == [logging.INFO]
    assert "holds batch 1 as txnVersion 1" in caplog.records[0].getMessage()
    assert reads == [1]  # the history is read once, at the first re-run


def test_batch_ids_below_the_recorded_batch_are_warned_about(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    made, _ = table_writer(monkeypatch, recorded=7)

    with caplog.at_level(logging.INFO, logger=writer.log.name):
        assert made._txn_version(SPARK, 0, 7) == 8

    [record] = caplog.records
    assert record.levelno == logging.WARNING
    assert "checkpoint replaced?" in record.getMessage()
