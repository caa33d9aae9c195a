"""`spark_eos_connect.apps.bench.report`: ratios to the limit and the peer, the table, the JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from spark_eos_connect.apps.bench.config import (
    AT_LEAST_ONCE,
    CONNECT,
    DELTA,
    EOSCONNECT_DELTA,
    EXACTLY_ONCE,
    FILE,
    GENERATOR,
    LIMIT,
    SPARK_KAFKA,
    BenchConfig,
)
from spark_eos_connect.apps.bench.report import COLUMNS, BenchReport, format_table, table_rows
from spark_eos_connect.apps.bench.results import ModeResult, Verification

RESULTS = [
    ModeResult(FILE, LIMIT, 1_000_000, 2.0, ((400_000, 0.9), (200_000, 0.5))),
    ModeResult(FILE, CONNECT, 1_000_000, 8.0),
    ModeResult(FILE, EXACTLY_ONCE, 1_000_000, 10.0),
    ModeResult(GENERATOR, LIMIT, 1_000_000, 4.0),
    ModeResult(GENERATOR, EXACTLY_ONCE, 1_000_000, 8.0),
    ModeResult(GENERATOR, AT_LEAST_ONCE, 1_000_000, 5.0),
    ModeResult(DELTA, SPARK_KAFKA, 1_000_000, 5.0),
    ModeResult(DELTA, EOSCONNECT_DELTA, 1_000_000, 10.0),
]


def cells(table: str) -> list[list[str]]:
    return [[c.strip() for c in line.strip("|").split("|")] for line in table.splitlines()]


def test_ratios_go_to_the_limit_and_the_peer_of_the_same_work() -> None:
    rows = {(r.result.work, r.result.mode): r for r in table_rows(RESULTS)}
    file_eos = rows[(FILE, EXACTLY_ONCE)]
    assert file_eos.ratio_to_limit == pytest.approx(0.2)
    assert (file_eos.peer, file_eos.ratio_to_peer) == (CONNECT, pytest.approx(0.8))
    alos = rows[(GENERATOR, AT_LEAST_ONCE)]
    assert (alos.peer, alos.ratio_to_peer) == (EXACTLY_ONCE, pytest.approx(1.6))
    delta = rows[(DELTA, EOSCONNECT_DELTA)]
    assert delta.ratio_to_limit is None
    assert (delta.peer, delta.ratio_to_peer) == (SPARK_KAFKA, pytest.approx(0.5))
    assert rows[(FILE, CONNECT)].peer is None
    assert rows[(GENERATOR, LIMIT)].ratio_to_limit == 1.0


def test_table_is_aligned_with_one_row_per_mode() -> None:
    table = format_table(table_rows(RESULTS))
    lines = table.splitlines()
    assert len(lines) == 2 + len(RESULTS)
    assert len({len(line) for line in lines}) == 1
    found = cells(table)
    assert found[0] == COLUMNS
    assert found[2] == [FILE, LIMIT, "1,000,000", "2.00", "500,000", "1.00", "n/a", "100", "2.00"]
    assert found[4][:7] == [FILE, EXACTLY_ONCE, "1,000,000", "10.00", "100,000", "0.20", "0.80"]
    assert found[4][7:] == ["n/a", "10.00"]
    assert found[9][5:7] == ["n/a", "0.50"]


def test_mode_and_records_columns_keep_the_readme_tests_shape() -> None:
    """tests/integration/docs looks for `| eosconnect exactly-once  |   2,000 |`."""
    small = [ModeResult(r.work, r.mode, 2000, r.seconds) for r in RESULTS]
    assert "| eosconnect exactly-once  |   2,000 |" in format_table(table_rows(small))


def test_report_is_ok_only_when_every_count_matches(tmp_path: Path) -> None:
    report = BenchReport(BenchConfig(), list(RESULTS), [Verification(FILE, LIMIT, 5, 5, 5)])
    assert report.ok
    text = report.render()
    assert "OK file -> Kafka / limit" in text
    report.verifications.append(Verification(FILE, CONNECT, 5, 6, 5))
    assert not report.ok
    assert "MISMATCH" in report.render()
    assert not BenchReport(BenchConfig(), list(RESULTS)).ok  # nothing verified


def test_json_has_the_table_figures(tmp_path: Path) -> None:
    report = BenchReport(BenchConfig(), list(RESULTS), [Verification(FILE, LIMIT, 5, 5, 5)], 12.3)
    path = report.write_json(tmp_path / "out" / "bench.json")
    data = json.loads(path.read_text())
    assert set(data) == {"config", "seconds", "ok", "columns", "rows", "verifications"}
    assert data["ok"] is True and data["seconds"] == 12.3
    assert data["config"]["records"] == 1_000_000
    first = data["rows"][0]
    assert set(first) == {
        "work",
        "mode",
        "records",
        "seconds",
        "records_per_s",
        "ratio_to_limit",
        "peer",
        "ratio_to_peer",
        "fixed_ms_per_batch",
        "us_per_record",
        "batches",
        "timing",
    }
    assert first["fixed_ms_per_batch"] == 100.0 and first["us_per_record"] == 2.0
    assert first["batches"] == [[400_000, 0.9], [200_000, 0.5]]
    file_eos = data["rows"][2]
    assert (file_eos["peer"], file_eos["ratio_to_peer"]) == (CONNECT, 0.8)
    assert file_eos["fixed_ms_per_batch"] is None
    assert data["verifications"][0]["ok"] is True
