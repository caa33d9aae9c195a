"""The converters' bench work: four modes measured, the sink modes verified, the Avro modes
compared with the JSON ones, and `--only converters` runs it without a broker."""

from __future__ import annotations

from spark_eos_connect.apps.bench import converters
from spark_eos_connect.apps.bench.cli import build_config, parse_args
from spark_eos_connect.apps.bench.config import CONVERTERS, PEERS
from spark_eos_connect.apps.bench.report import table_rows
from spark_eos_connect.apps.bench.runner import run_bench


def test_the_four_modes_measure_and_verify() -> None:
    results, verifications = converters.run_converters(30)
    assert [r.mode for r in results] == [
        converters.JSON_SOURCE,
        converters.AVRO_SOURCE,
        converters.JSON_SINK,
        converters.AVRO_SINK,
    ]
    assert all(r.records == 30 and r.seconds > 0 for r in results)
    assert [v.ok for v in verifications] == [True, True]
    rows = {row.result.mode: row for row in table_rows(results)}
    assert rows[converters.AVRO_SINK].peer == converters.JSON_SINK
    assert PEERS[(CONVERTERS, converters.AVRO_SOURCE)] == converters.JSON_SOURCE


def test_only_converters_runs_without_a_broker() -> None:
    config = build_config(parse_args(["--only", "converters", "--records", "20", "--tasks", "1"]))
    assert config.works == (CONVERTERS,)
    lines: list[str] = []
    report = run_bench(config, lines.append)
    assert report.ok
    assert len(report.results) == 4
    assert not any("local broker" in line for line in lines)
