"""The `eosconnect` Spark data source (driver-side entry point)."""

from __future__ import annotations

from pyspark.sql.datasource import DataSource, DataSourceStreamReader, DataSourceStreamWriter
from pyspark.sql.types import StructType

from spark_eos_connect import DATA_SOURCE_NAME
from spark_eos_connect.runtime.records import SOURCE_ROW_DDL


class EosConnectDataSource(DataSource):
    """`format("eosconnect")`: Connect-style connectors as Spark streaming sources and sinks."""

    @classmethod
    def name(cls) -> str:
        return DATA_SOURCE_NAME

    def schema(self) -> str:
        """Rows of a source connector (DESIGN §2)."""
        return SOURCE_ROW_DDL

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        """Driver: a source connector's micro-batches."""
        from spark_eos_connect.spark.source_stream import EosConnectSourceStreamReader

        return EosConnectSourceStreamReader(self.options)

    def streamWriter(self, schema: StructType, overwrite: bool) -> DataSourceStreamWriter:
        """Driver: writes a source connector's rows to Kafka exactly once."""
        from spark_eos_connect.spark.source_writer import EosConnectSourceStreamWriter

        return EosConnectSourceStreamWriter(self.options)
