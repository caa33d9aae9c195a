"""jobs/end_to_end.py: --help, and how its arguments become each stage's options."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest


@pytest.fixture(scope="module")
def job(load_job: Callable[[str], ModuleType]) -> ModuleType:
    return load_job("end_to_end.py")


def test_help_lists_the_passthrough_options(run_job: Callable[..., Any]) -> None:
    shown = run_job("end_to_end.py", "--help")
    assert shown.returncode == 0, shown.stderr

    text = " ".join(shown.stdout.split())
    assert "exactly once end to end" in text
    for flag in ("--source-option", "--sink-option", "--kafka", "--conf", "--bootstrap-servers"):
        assert flag in text


def test_no_arguments_means_the_embedded_broker_and_defaults(job: ModuleType) -> None:
    args = job.parse_args([])

    assert args.bootstrap_servers is None
    source = job.source_options(args, "b:1")
    assert source == {
        "name": "end-to-end-source",
        "connector.class": "Generator",
        "topic": "end-to-end-events",
        "tasks.max": "2",
        "max.records": "20000",
        "kafka.bootstrap.servers": "b:1",
    }


def test_passthrough_options_reach_their_stage(job: ModuleType, tmp_path: Path) -> None:
    args = job.parse_args(
        [
            "--name", "e", "--topic", "t", "--tasks", "3", "--records-per-task", "7",
            "--source-option", "value.size=20", "--sink-option", "delta.mode=upsert",
            "--kafka", "acks=all", "--conf", "spark.sql.shuffle.partitions=2",
        ]
    )  # fmt: skip

    source = job.source_options(args, "b:1")
    sink = job.sink_options(args, "b:1", tmp_path)

    assert source["value.size"] == "20" and "delta.mode" not in source
    assert (source["tasks.max"], source["max.records"]) == ("3", "7")
    assert sink == {
        "name": "e-delta",
        "topics": "t",
        "path": str(tmp_path / "table"),
        "delta.mode": "upsert",
        "kafka.bootstrap.servers": "b:1",
        "kafka.acks": "all",
    }
    assert source["kafka.acks"] == "all"
    assert args.conf == [("spark.sql.shuffle.partitions", "2")]


def test_a_malformed_passthrough_is_a_usage_error(job: ModuleType) -> None:
    with pytest.raises(SystemExit) as exit_info:
        job.parse_args(["--sink-option", "delta.mode"])
    assert exit_info.value.code == 2
