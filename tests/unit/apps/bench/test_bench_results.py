"""`spark_eos_connect.apps.bench.results`: rates, ratios, the cost line, progress and timings."""

from __future__ import annotations

import pytest

from spark_eos_connect.apps.bench.results import (
    ModeResult,
    Verification,
    batch_costs,
    failed,
    median,
    parallel_batches,
    progress_batches,
    ratio,
)


def test_records_per_second_and_ratio() -> None:
    limit = ModeResult("w", "limit", 1000, 2.0)
    mode = ModeResult("w", "m", 1000, 8.0)
    assert limit.records_per_s == 500
    assert ratio(mode, limit) == 0.25
    assert ratio(mode, None) is None
    assert ratio(mode, ModeResult("w", "x", 0, 0.0)) is None
    assert ModeResult("w", "m", 10, 0.0).records_per_s == 0.0


def test_costs_are_the_line_through_two_batch_sizes() -> None:
    # 0.2 s per batch plus 2 us per record
    batches = [(100_000, 0.4), (100_000, 0.4), (50_000, 0.3)]
    costs = batch_costs(batches)
    assert costs.fixed_s == pytest.approx(0.2)
    assert costs.per_record_s == pytest.approx(2e-6)


def test_one_batch_size_gives_only_the_average() -> None:
    costs = batch_costs([(1000, 1.0), (1000, 3.0)])
    assert costs.fixed_s is None
    assert costs.per_record_s == pytest.approx(2 / 1000)


def test_noise_never_gives_a_negative_fixed_cost() -> None:
    costs = batch_costs([(100, 0.05), (200, 0.3)])  # the line would cross below zero
    assert costs.fixed_s == 0.0
    assert costs.per_record_s == pytest.approx(0.35 / 300)
    falling = batch_costs([(100, 1.0), (200, 0.5)])
    assert falling.fixed_s is None
    assert falling.per_record_s == pytest.approx(1.5 / 300)


def test_no_batches_fall_back_to_the_whole_run() -> None:
    assert batch_costs([]).per_record_s is None
    assert ModeResult("w", "m", 4, 2.0).costs.per_record_s == 0.5
    assert ModeResult("w", "m", 4, 2.0).costs.fixed_s is None


def test_progress_keeps_batches_with_rows_from_the_first_asked_for() -> None:
    progress = [
        {"batchId": 0, "numInputRows": 100, "durationMs": {"triggerExecution": 9000}},
        {"batchId": 1, "numInputRows": 100, "durationMs": {"triggerExecution": 1500}},
        {"batchId": 2, "numInputRows": 50, "durationMs": {"triggerExecution": 500}},
        {"batchId": 3, "numInputRows": 0, "durationMs": {"triggerExecution": 700}},
        {"batchId": 2, "numInputRows": 50, "durationMs": {"triggerExecution": 600}},
    ]
    assert progress_batches(progress, skip_below=1) == [(1, (100, 1.5)), (2, (50, 0.6))]
    assert [b for b, _ in progress_batches(progress)] == [0, 1, 2]


def test_parallel_batches_span_the_tasks_of_each_batch() -> None:
    timings = {
        0: [(10.0, 11.0, 100), (20.0, 20.5, 100)],
        1: [(10.2, 11.5, 100), (19.9, 20.4, 100)],
    }
    batches = parallel_batches(timings)
    assert [n for n, _ in batches] == [200, 200]
    assert [s for _, s in batches] == pytest.approx([1.5, 0.6])
    assert parallel_batches({}) == []
    with pytest.raises(ValueError):
        parallel_batches({0: [(0.0, 1.0, 1)], 1: []})


def test_median() -> None:
    assert median([3.0, 1.0, 2.0]) == 2.0
    assert median([4.0, 1.0]) == 2.5


def test_verification_lines() -> None:
    assert Verification("w", "m", 10, 10, 10).ok
    assert "OK w / m: read_committed found 10" in Verification("w", "m", 10, 10, 10).describe()
    duplicated = Verification("w", "m", 10, 11, 10)
    assert not duplicated.ok and duplicated.describe().startswith("MISMATCH")
    broken = failed("w", "m", RuntimeError("no broker"))
    assert not broken.ok
    assert broken.describe() == "FAILED w / m: RuntimeError: no broker"
    assert broken.as_dict()["error"] == "RuntimeError: no broker"
