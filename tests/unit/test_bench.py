"""`spark_eos_connect.bench`: batch planning, progress and timing arithmetic, the table."""

from __future__ import annotations

import pytest

from spark_eos_connect.bench import (
    AT_LEAST_ONCE,
    EXACTLY_ONCE,
    RAW,
    BenchConfig,
    BenchReport,
    ModeResult,
    Verification,
    format_table,
    measure_progress,
    measure_raw_batches,
    ratio,
)


def test_batches_follow_the_drivers_share_and_whole_polls() -> None:
    config = BenchConfig(records=1_000_000, tasks=2, per_trigger=200_000)
    assert config.task_batch == 100_000
    assert config.measured_batches() == [100_000] * 5
    assert config.task_total == 600_000  # max.records per task: warm-up batch + measured
    assert config.expected_total == 1_200_000


def test_a_share_that_is_not_a_whole_number_of_polls_rounds_up_to_one() -> None:
    config = BenchConfig(records=100_000, tasks=2, per_trigger=30_000, records_per_poll=10_000)
    assert config.task_batch == 20_000  # ceil(15,000 / 10,000) polls of 10,000
    assert config.measured_batches() == [20_000, 20_000, 10_000]


@pytest.mark.parametrize(
    "kwargs",
    [{"records": 3, "tasks": 2}, {"records": 0}, {"tasks": 0}, {"value_size": -1}],
)
def test_bad_configs_are_refused(kwargs: dict[str, int]) -> None:
    with pytest.raises(ValueError):
        BenchConfig(**kwargs)


def test_records_per_second_and_ratio() -> None:
    raw = ModeResult(RAW, 1000, 2.0)
    eos = ModeResult(EXACTLY_ONCE, 1000, 8.0)
    assert raw.records_per_s == 500
    assert ratio(eos, raw) == 0.25
    assert ratio(raw, ModeResult(RAW, 0, 0.0)) == 0.0
    assert ModeResult(RAW, 10, 0.0).records_per_s == 0.0


def test_measure_progress_skips_the_warmup_and_empty_batches() -> None:
    progress = [
        {"batchId": 0, "numInputRows": 100, "durationMs": {"triggerExecution": 9000}},
        {
            "batchId": 1,
            "numInputRows": 100,
            "durationMs": {"triggerExecution": 1500, "addBatch": 1200},
        },
        {
            "batchId": 2,
            "numInputRows": 50,
            "durationMs": {"triggerExecution": 500, "addBatch": 400},
        },
        {"batchId": 3, "numInputRows": 0, "durationMs": {"triggerExecution": 700}},
    ]
    result = measure_progress(progress, EXACTLY_ONCE)
    assert (result.records, result.seconds, result.batches) == (150, 2.0, 2)
    assert result.notes == {"addBatch_s": 1.6}


def test_measure_raw_batches_spans_the_parallel_tasks_of_each_batch() -> None:
    timings = {
        0: [(10.0, 11.0, 100), (20.0, 20.5, 100)],
        1: [(10.2, 11.5, 100), (19.9, 20.4, 100)],
    }
    result = measure_raw_batches(timings)
    assert result.records == 400
    assert result.batches == 2
    assert result.seconds == pytest.approx(1.5 + 0.6)


def test_measure_raw_batches_refuses_uneven_tasks() -> None:
    with pytest.raises(ValueError):
        measure_raw_batches({0: [(0.0, 1.0, 1)], 1: []})


def test_table_has_one_row_per_mode_and_ratios_to_the_raw_producer() -> None:
    table = format_table(
        [
            ModeResult(RAW, 1_000_000, 2.0),
            ModeResult(EXACTLY_ONCE, 1_000_000, 20.0),
            ModeResult(AT_LEAST_ONCE, 1_000_000, 25.0),
        ]
    )
    lines = table.splitlines()
    assert [c.strip() for c in lines[0].strip("|").split("|")] == [
        "mode",
        "records",
        "seconds",
        "records/s",
        "ratio to raw producer",
    ]
    assert len(lines) == 5
    assert len({len(line) for line in lines}) == 1  # aligned columns
    cells = [[c.strip() for c in line.strip("|").split("|")] for line in lines[2:]]
    assert cells[0] == [RAW, "1,000,000", "2.00", "500,000", "1.00"]
    assert cells[1] == [EXACTLY_ONCE, "1,000,000", "20.00", "50,000", "0.10"]
    assert cells[2] == [AT_LEAST_ONCE, "1,000,000", "25.00", "40,000", "0.08"]


def test_table_without_a_raw_row_has_no_ratios() -> None:
    table = format_table([ModeResult(EXACTLY_ONCE, 10, 1.0)])
    assert table.splitlines()[-1].rstrip(" |").endswith("n/a")


def test_report_is_ok_only_when_every_count_matches() -> None:
    config = BenchConfig(records=100, tasks=1, per_trigger=100, records_per_poll=100)
    report = BenchReport(config, [ModeResult(RAW, 100, 1.0)], [Verification(RAW, 200, 200, 200)])
    assert report.ok
    report.verifications.append(Verification(EXACTLY_ONCE, 200, 201, 200))
    assert not report.ok
    assert "MISMATCH" in report.render()
    short = BenchReport(config, [ModeResult(RAW, 90, 1.0)], [Verification(RAW, 200, 200, 200)])
    assert not short.ok
    assert short.measured_mismatches()
