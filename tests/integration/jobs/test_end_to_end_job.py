"""`spark-submit jobs/end_to_end.py` with no arguments: embedded broker, source -> Kafka ->
Delta, and a verification line with no duplicates and nothing missing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from .test_source_to_kafka_job import spark_log_lines

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[3]


def test_spark_submit_end_to_end_with_no_arguments() -> None:
    spark_submit = Path(sys.executable).parent / "spark-submit"  # installed by pyspark
    assert spark_submit.exists()
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
    result = subprocess.run(
        [spark_submit, str(REPO / "jobs" / "end_to_end.py")],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )

    assert result.returncode == 0, result.stderr[-3000:]
    # spark-submit logs its own start-up; from the first micro-batch on, only the job speaks
    after_start = result.stderr.split("Setting Spark log level", 1)[-1]
    assert "Setting Spark log level" in result.stderr
    assert not spark_log_lines(after_start), after_start[-3000:]
    assert "verification: source records 40000, Delta rows 40000, duplicates 0, missing 0" in (
        result.stdout
    )
