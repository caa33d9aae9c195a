"""The test run's Spark JVMs start with `testing.fast_jvm`'s options (`tests/conftest.py`)."""

from __future__ import annotations

from typing import Any

import pytest

from spark_eos_connect.testing.fast_jvm import FAST_START_JVM

pytestmark = pytest.mark.integration


def test_the_shared_sessions_driver_runs_with_the_fast_start_options(spark: Any) -> None:
    jvm = spark.sparkContext._jvm
    arguments = list(
        jvm.java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments()
    )
    executors = spark.sparkContext.getConf().get("spark.executor.extraJavaOptions")

    assert set(FAST_START_JVM.split()) <= set(arguments), arguments
    assert set(FAST_START_JVM.split()) <= set(executors.split()), executors  # after Spark's own
