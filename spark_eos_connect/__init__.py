"""spark_eos_connect: Kafka Connect's exactly-once machinery for Spark Structured Streaming."""

from __future__ import annotations

from typing import Any

from spark_eos_connect.version import DATA_SOURCE_NAME, __version__


def register(spark: Any) -> None:
    """Register the `eosconnect` data source with a SparkSession (driver side)."""
    from spark_eos_connect.spark.datasource import EosConnectDataSource

    spark.dataSource.register(EosConnectDataSource)


__all__ = ["DATA_SOURCE_NAME", "__version__", "register"]
