"""`spark_eos_connect.apps.bench.config`: batch planning of the three works."""

from __future__ import annotations

import pytest

from spark_eos_connect.apps.bench.config import (
    DELTA,
    FILE,
    BenchConfig,
    split_batches,
)


def test_default_batches_come_in_two_sizes() -> None:
    config = BenchConfig()
    assert config.task_batch == 225_000
    assert config.generator_batches() == [225_000, 225_000, 50_000]
    assert config.task_total == 725_000  # max.records per task: warm-up batch + measured
    assert config.generator_total == 1_450_000
    assert config.file_batches() == [450_000] * 6 + [300_000]  # 3,000,000 lines


def test_a_task_takes_exactly_its_share_of_the_trigger() -> None:
    config = BenchConfig(records=100_000, tasks=2, per_trigger=30_001, records_per_poll=10_000)
    assert config.task_batch == 15_001
    assert config.generator_batches() == [15_001, 15_001, 15_001, 4_997]
    assert config.task_total == 65_001


def test_split_batches_keeps_every_record() -> None:
    assert split_batches(10, 4) == [4, 4, 2]
    assert split_batches(8, 4) == [4, 4]
    assert split_batches(0, 4) == []


@pytest.mark.parametrize(
    "kwargs",
    [
        {"records": 3, "tasks": 2},
        {"records": 0},
        {"file_records": 0},
        {"tasks": 0},
        {"value_size": -1},
        {"delta_rounds": 0},
        {"works": ()},
        {"works": ("nope",)},
    ],
)
def test_bad_configs_are_refused(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        BenchConfig(**kwargs)  # type: ignore[arg-type]


def test_as_dict_is_plain_json_data() -> None:
    data = BenchConfig(works=(FILE, DELTA)).as_dict()
    assert data["works"] == [FILE, DELTA]
    assert data["records"] == 1_000_000
    assert data["file_records"] == 3_000_000
