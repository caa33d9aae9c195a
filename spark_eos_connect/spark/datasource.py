"""The `eosconnect` Spark data source (driver-side entry point).

Reading: `topics`/`topics.regex` without a source `connector.class` reads Kafka topics; otherwise
a source connector's records. Writing: a sink `connector.class` runs a sink connector's tasks;
otherwise the rows of a source connector are written to Kafka exactly once.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pyspark.sql.datasource import DataSource, DataSourceStreamReader, DataSourceStreamWriter
from pyspark.sql.types import StructType

from spark_eos_connect import DATA_SOURCE_NAME
from spark_eos_connect.runtime.kafka_source import KAFKA_ROW_DDL, is_kafka_read
from spark_eos_connect.runtime.records import COMMITTED_ROW_DDL


def connector_kind(options: Mapping[str, Any]) -> str | None:
    """`"source"`, `"sink"` or `"unknown"` for the options' `connector.class`; None if unset."""
    name = {str(k).lower(): v for k, v in options.items()}.get("connector.class")
    if not name:
        return None
    from spark_eos_connect.connectors.registry import connector_type, resolve_connector_class

    return connector_type(resolve_connector_class(str(name)))


def reads_kafka(options: Mapping[str, Any]) -> bool:
    """Whether reader options ask for Kafka topics rather than a source connector."""
    return is_kafka_read(options) and connector_kind(options) != "source"


class EosConnectDataSource(DataSource):
    """`format("eosconnect")`: Connect-style connectors as Spark streaming sources and sinks."""

    @classmethod
    def name(cls) -> str:
        return DATA_SOURCE_NAME

    def schema(self) -> str:
        """Kafka records (`topics` given) or a source connector's committed records."""
        return KAFKA_ROW_DDL if reads_kafka(self.options) else COMMITTED_ROW_DDL

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        """Driver: Kafka topics' or a source connector's micro-batches."""
        if reads_kafka(self.options):
            from spark_eos_connect.spark.kafka_stream import EosConnectKafkaStreamReader

            return EosConnectKafkaStreamReader(self.options)
        from spark_eos_connect.spark.source_stream import EosConnectSourceStreamReader

        return EosConnectSourceStreamReader(self.options)

    def streamWriter(self, schema: StructType, overwrite: bool) -> DataSourceStreamWriter:
        """Driver: a sink connector's tasks, or a source connector's rows into Kafka."""
        if connector_kind(self.options) == "sink":
            from spark_eos_connect.spark.sink_writer import EosConnectSinkStreamWriter

            return EosConnectSinkStreamWriter(self.options, schema)
        from spark_eos_connect.spark.source_writer import EosConnectSourceStreamWriter

        return EosConnectSourceStreamWriter(self.options)
