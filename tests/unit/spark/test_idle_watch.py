"""When a job's `--until-idle` stops: `IdleWatch` over Spark's progress events."""

from __future__ import annotations

from typing import Any

from spark_eos_connect.spark.job_support import IdleWatch


def ran(batch: int, rows: int) -> dict[str, Any]:
    """A progress event of an executed micro-batch."""
    return {"batchId": batch, "numInputRows": rows, "durationMs": {"addBatch": 5}}


def no_data(batch: int) -> dict[str, Any]:
    """The event Spark reports when the source had nothing to plan (no batch ran)."""
    return {"batchId": batch, "numInputRows": 0, "durationMs": {"latestOffset": 1}}


def test_a_source_with_nothing_to_plan_is_idle_at_once() -> None:
    assert IdleWatch().update([ran(0, 10), no_data(1)])


def test_one_executed_batch_without_rows_is_not_idle() -> None:
    # a Spark retry on another executor of tasks that had already committed emits no rows
    watch = IdleWatch()
    assert not watch.update([ran(0, 200), ran(1, 0)])
    assert not watch.update([ran(0, 200), ran(1, 0), ran(2, 200)])
    assert not watch.update([ran(3, 0)])


def test_two_executed_batches_in_a_row_without_rows_are_idle() -> None:
    watch = IdleWatch()
    assert not watch.update([ran(0, 200), ran(1, 0)])
    assert watch.update([ran(0, 200), ran(1, 0), ran(2, 0)])  # events are seen once each


def test_a_batch_that_ran_after_a_no_data_event_of_the_same_id_counts() -> None:
    watch = IdleWatch()
    watch.update([ran(0, 5)])
    assert watch.update([no_data(1)])
    assert watch.update([no_data(1), ran(1, 7)])  # stays idle once seen idle
