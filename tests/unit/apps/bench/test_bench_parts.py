"""The bench's pure helpers: data it writes, the limit's polling, the modes' options."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from spark_eos_connect.api.source import InMemoryOffsetStorageReader, SourceTaskContext
from spark_eos_connect.apps.bench.chart import bar_label
from spark_eos_connect.apps.bench.config import (
    CONNECT,
    DELTA,
    EXACTLY_ONCE,
    FILE,
    JAVA_FILE_SOURCE,
    LIMIT,
    PEERS,
    SPARK_KAFKA,
    BenchConfig,
)
from spark_eos_connect.apps.bench.connect_peer import file_connector_config, worker_properties
from spark_eos_connect.apps.bench.kafka_delta import Round, summarize
from spark_eos_connect.apps.bench.kafka_io import (
    VisibilityWatch,
    first_visible,
    numbered_value,
    value_number,
    write_lines,
)
from spark_eos_connect.apps.bench.limit import Poller, as_bytes
from spark_eos_connect.apps.bench.pipeline import file_options, generator_options
from spark_eos_connect.apps.bench.report import table_rows
from spark_eos_connect.apps.bench.results import ModeResult
from spark_eos_connect.connectors.generator import GeneratorSourceTask


def test_numbered_values_and_lines_have_the_asked_size(tmp_path: Path) -> None:
    assert numbered_value(42, 10) == b"42|xxxxxxx"
    assert value_number(numbered_value(42, 10)) == b"42"
    assert numbered_value(123456, 3) == b"123456|"
    path = write_lines(tmp_path / "lines.txt", 25_000, 100)
    data = path.read_bytes()
    assert len(data) == 25_000 * 100
    lines = data.split(b"\n")[:-1]
    assert {value_number(line) for line in lines} == {str(n).encode() for n in range(25_000)}


def test_as_bytes_is_what_a_string_converter_writes() -> None:
    assert as_bytes(None) is None
    assert as_bytes(b"x") == b"x"
    assert as_bytes("k1") == b"k1"
    assert as_bytes(7) == b"7"


def test_poller_takes_batches_and_keeps_the_rest_of_a_poll() -> None:
    config = {"topic": "t", "records.per.poll": "30", "max.records": "100", "value.size": "5"}
    task = GeneratorSourceTask()
    task.initialize(SourceTaskContext(config, InMemoryOffsetStorageReader()))
    task.start(config)
    poller = Poller(task)
    first = poller.take(50)
    assert [r.source_offset for r in first[:1] + first[-1:]] == [{"position": 1}, {"position": 50}]
    assert len(poller.pending) == 10  # two polls of 30
    assert [r.source_offset for r in poller.take(45)][-1] == {"position": 95}
    assert len(poller.take(50)) == 5  # max.records reached
    assert poller.take(50) == []


def test_pipeline_options_carry_the_bench_sizes() -> None:
    config = BenchConfig(records=2000, tasks=2, per_trigger=1000, records_per_poll=500)
    gen = generator_options(config, "n", "t", "b:1", exactly_once=False)
    assert gen["max.records"] == str(config.task_total) == "1500"
    assert gen["exactly.once.source.support"] == "disabled"
    assert gen["maxRecordsPerTrigger"] == "1000"
    file = file_options(config, "n", Path("/f"), "t", "b:1")
    assert (file["connector.class"], file["batch.size"]) == ("FileStreamSource", "10000")
    assert file["exactly.once.source.support"] == "enabled"
    assert "plugin.path" not in file


def test_the_java_file_mode_runs_connects_own_connector_from_its_plugin_folder() -> None:
    config = BenchConfig(records=2000, tasks=2, per_trigger=1000, records_per_poll=500)
    python = file_options(config, "n", Path("/f"), "t", "b:1")
    java = file_options(config, "n", Path("/f"), "t", "b:1", java=True)
    assert java["connector.class"] == "org.apache.kafka.connect.file.FileStreamSourceConnector"
    assert Path(java.pop("plugin.path")).name == "connect-file"
    assert {k: v for k, v in java.items() if k != "connector.class"} == {
        k: v for k, v in python.items() if k != "connector.class"
    }
    assert PEERS[(FILE, JAVA_FILE_SOURCE)] == CONNECT


def test_connect_worker_is_an_eos_worker_with_the_same_batch_size() -> None:
    props = worker_properties("b:1", "g", 8083)
    assert props["exactly.once.source.support"] == "enabled"
    assert props["listeners"] == "http://127.0.0.1:8083"
    connector = file_connector_config(Path("/f"), "t", 10_000)
    assert connector["batch.size"] == "10000" and connector["tasks.max"] == "1"


def test_bar_labels_name_the_ratios() -> None:
    rows = table_rows(
        [
            ModeResult(FILE, LIMIT, 10, 1.0),
            ModeResult(FILE, CONNECT, 10, 2.0),
            ModeResult(FILE, EXACTLY_ONCE, 10, 4.0),
        ]
    )
    assert [bar_label(r) for r in rows] == [
        "",
        "0.50x limit",
        "0.25x limit, 0.50x Kafka Connect EOS worker",
    ]


def test_kafka_delta_figure_is_the_median_of_the_measured_rounds() -> None:
    def made(index: int, seconds: float) -> Round:
        return Round(SPARK_KAFKA, index, seconds, ((100, seconds),), Path(f"/t{index}"))

    result = summarize(DELTA, SPARK_KAFKA, 100, [made(0, 4.0), made(1, 2.0)], made(-1, 30.0))
    assert (result.records, result.seconds) == (100, 3.0)
    assert result.batches == ((100, 4.0), (100, 2.0))
    assert "warm-up round on a small topic (30.0s)" in result.timing


def test_visibility_watch_gives_up_when_the_writer_died() -> None:
    def dead() -> None:
        raise RuntimeError("the query stopped")

    with VisibilityWatch({"bootstrap.servers": "127.0.0.1:1"}, "t", 1, 10) as watch:
        started = time.monotonic()
        with pytest.raises(RuntimeError, match="the query stopped"):
            watch.wait(60, dead)
        assert time.monotonic() - started < 5
        with pytest.raises(TimeoutError, match="0 of 10 records visible"):
            watch.wait(0.1)


def test_records_are_visible_from_the_first_sample_whose_stable_offsets_pass_them() -> None:
    samples = [(1.0, {0: 0, 1: 0}), (2.0, {0: 11, 1: 5}), (3.0, {0: 11, 1: 9}), (4.0, {0: 12})]
    assert first_visible(samples, {0: 10, 1: 8}) == 3.0  # partition 1 passes offset 8 at 3.0
    assert first_visible(samples, {0: 10}) == 2.0
    assert first_visible(samples, {0: 12}) is None  # not yet sampled past it
    assert first_visible([], {0: 0}) is None
