"""Build a local SparkSession with Delta Lake from locally cached jars (no Ivy at run time)."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import Any

from spark_eos_connect.jars import jar_files

DELTA_SESSION_CONF: dict[str, str] = {
    "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
    "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
}


def use_this_interpreter_for_workers() -> None:
    """Make Spark's Python workers run this interpreter, which has the project's packages."""
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable


def local_session_conf(
    app_name: str = "spark_eos_connect", cores: int = 2, extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The configuration `local_spark_session` applies, for callers that build their own."""
    conf = {
        "spark.master": f"local[{cores},4]",  # 4 attempts per task, as on a cluster
        "spark.app.name": app_name,
        "spark.jars": ",".join(str(path) for path in jar_files("delta")),
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.databricks.delta.snapshotPartitions": str(cores),
        "spark.sql.shuffle.partitions": str(cores),
        "spark.driver.memory": "2g",
        "spark.sql.session.timeZone": "UTC",
        "spark.python.worker.reuse": "true",
        **DELTA_SESSION_CONF,
    }
    conf.update(extra or {})
    return conf


def local_spark_session(
    app_name: str = "spark_eos_connect",
    cores: int = 2,
    extra: Mapping[str, str] | None = None,
    register: bool = True,
) -> Any:
    """A local SparkSession with Delta enabled and the `eosconnect` data source registered."""
    use_this_interpreter_for_workers()
    from pyspark.sql import SparkSession

    builder = SparkSession.builder
    for key, value in local_session_conf(app_name, cores, extra).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    if register:
        import spark_eos_connect

        spark_eos_connect.register(spark)
    return spark
