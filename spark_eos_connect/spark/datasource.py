"""The `eosconnect` Spark data source (driver-side entry point)."""

from __future__ import annotations

from pyspark.sql.datasource import DataSource

from spark_eos_connect import DATA_SOURCE_NAME


class EosConnectDataSource(DataSource):
    """`format("eosconnect")`: Connect-style connectors as Spark streaming sources and sinks."""

    @classmethod
    def name(cls) -> str:
        return DATA_SOURCE_NAME
