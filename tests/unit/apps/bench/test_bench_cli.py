"""`spark_eos_connect.apps.bench.cli`: arguments, `--quick`, explicit sizes winning."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from spark_eos_connect.apps.bench.cli import DEFAULT_OUT, build_config, main, parse_args
from spark_eos_connect.apps.bench.config import (
    CONVERTERS,
    DELTA,
    FILE,
    FIRST_RECORD,
    GENERATOR,
    LIMIT,
    POSTGRES,
    QUICK,
    READER,
    SINK,
    BenchConfig,
)
from spark_eos_connect.apps.bench.report import BenchReport
from spark_eos_connect.apps.bench.results import ModeResult, Verification


def test_no_arguments_is_the_full_run() -> None:
    args = parse_args([])
    assert build_config(args) == BenchConfig()
    assert args.out == DEFAULT_OUT
    assert build_config(args).works == (
        FILE,
        GENERATOR,
        DELTA,
        SINK,
        READER,
        FIRST_RECORD,
        POSTGRES,
        CONVERTERS,
    )
    assert build_config(args).sink_records == 3_000_000


def test_quick_is_a_smaller_run() -> None:
    config = build_config(parse_args(["--quick"]))
    assert config.records == QUICK["records"] == 100_000
    assert config.per_trigger == QUICK["per_trigger"]
    assert config.delta_rounds == QUICK["delta_rounds"] == 1
    assert config.tasks == BenchConfig().tasks
    assert config.sink_records == QUICK["sink_records"] < BenchConfig().sink_records
    assert config.first_record_runs == 1


def test_sink_sizes_are_given_like_the_others() -> None:
    argv = ["--quick", "--sink-records", "5000", "--sink-per-trigger", "1000"]
    config = build_config(parse_args([*argv, "--first-record-runs", "3", "--only", "sink"]))
    assert (config.sink_records, config.sink_per_trigger) == (5000, 1000)
    assert (config.first_record_runs, config.works) == (3, (SINK,))


def test_explicit_sizes_win_over_quick() -> None:
    argv = ["--quick", "--records", "2000", "--tasks", "2", "--per-trigger", "1000"]
    config = build_config(parse_args([*argv, "--value-size", "10", "--delta-rounds", "3"]))
    assert (config.records, config.tasks, config.per_trigger) == (2000, 2, 1000)
    assert (config.value_size, config.delta_rounds) == (10, 3)


def test_polls_stay_within_a_tasks_share_of_a_micro_batch() -> None:
    small = build_config(parse_args(["--records", "2000", "--tasks", "2", "--per-trigger", "1000"]))
    assert (small.records_per_poll, small.file_batch_size) == (500, 1000)
    full = build_config(parse_args([]))
    assert (full.records_per_poll, full.file_batch_size) == (10_000, 10_000)


def test_only_selects_works_in_run_order() -> None:
    config = build_config(parse_args(["--only", "delta", "--only", "file", "--out", "x"]))
    assert config.works == (FILE, DELTA)
    assert parse_args(["--out", "x"]).out == Path("x")


def test_bad_sizes_exit_2_before_anything_starts(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--records", "3", "--tasks", "2"]) == 2
    assert "multiple of tasks" in capsys.readouterr().err


def test_unknown_work_is_a_usage_error() -> None:
    with pytest.raises(SystemExit):
        parse_args(["--only", "everything"])


def test_make_passes_arguments_through_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BENCH_ARGS", "--quick --only generator")
    monkeypatch.setattr("sys.argv", ["bench.py", "--records", "5000"])
    config = build_config(parse_args())
    assert (config.records, config.per_trigger) == (5000, QUICK["per_trigger"])
    assert config.works == (GENERATOR,)


def test_main_prints_the_table_and_writes_json_and_png_named_by_size(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def fake_run(config: BenchConfig, log: object) -> BenchReport:
        result = ModeResult(FILE, LIMIT, config.records, 1.0)
        return BenchReport(config, [result], [Verification(FILE, LIMIT, 5, 5, 5)], 3.0)

    monkeypatch.setattr("spark_eos_connect.apps.bench.runner.run_bench", fake_run)
    assert main(["--records", "1000", "--only", "file", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "| file -> Kafka | limit |   1,000 |" in out
    data = json.loads((tmp_path / "bench-1000.json").read_text())
    assert data["rows"][0]["records_per_s"] == 1000.0
    drawn = (tmp_path / "bench-1000.png").exists()
    assert drawn == (importlib.util.find_spec("matplotlib") is not None)


def test_the_postgres_works_have_names_of_their_own() -> None:
    from spark_eos_connect.apps.bench.config import POSTGRES_CDC

    assert build_config(parse_args(["--only", "postgres-cdc"])).works == (POSTGRES_CDC,)
    assert build_config(parse_args(["--only", "postgres"])).works == (POSTGRES,)
