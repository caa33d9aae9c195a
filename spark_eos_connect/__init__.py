"""spark_eos_connect: Kafka Connect's exactly-once machinery for Spark Structured Streaming."""

from __future__ import annotations

from typing import Any

from spark_eos_connect.version import DATA_SOURCE_NAME, __version__


def register(spark: Any) -> None:
    """Register the `eosconnect` data source with a SparkSession (driver side); streaming
    queries still running when Python exits are stopped first (`spark.exit_hook`)."""
    from spark_eos_connect.spark.datasource import EosConnectDataSource
    from spark_eos_connect.spark.exit_hook import stop_queries_at_exit

    spark.dataSource.register(EosConnectDataSource)
    stop_queries_at_exit(spark)


__all__ = ["DATA_SOURCE_NAME", "__version__", "register"]
