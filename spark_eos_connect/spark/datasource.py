"""The `eosconnect` Spark data source (driver-side entry point).

Reading: `topics`/`topics.regex` without a source `connector.class` reads Kafka topics; otherwise
a source connector's records. Writing: a sink `connector.class` runs a sink connector's tasks
(the reader's options, which a sink stream's schema carries, count as the writer's:
`spark.reader_options`); otherwise the rows of a source connector are written to Kafka exactly
once.

A source connector's whole config is checked when the stream is defined (`load()` asks for the
schema): every problem is raised at once, before anything is written
(`source.validation`), and options nothing reads are logged as warnings.

Each of Spark's Python processes (the data source's planning, reading, writing and committing
ones) imports this module; the readers and writers are imported only where they are used, so
that a source job's processes do not load the Kafka reader's modules, and the other way round.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from functools import cached_property
from typing import Any

from pyspark.sql.datasource import DataSource, DataSourceStreamReader, DataSourceStreamWriter
from pyspark.sql.types import StructType

from spark_eos_connect.errors import EosConnectError
from spark_eos_connect.runtime.config.options import DataSourceOptions
from spark_eos_connect.spark.worker_gc import settle_heap
from spark_eos_connect.version import DATA_SOURCE_NAME

log = logging.getLogger(__name__)


def connector_kind(options: Mapping[str, Any] | DataSourceOptions) -> str | None:
    """`"source"`, `"sink"` or `"unknown"` for the options' `connector.class`; None if unset."""
    name = DataSourceOptions.read(options).get("connector.class")
    if not name:
        return None
    from spark_eos_connect.plugins.connectors import connector_type, resolve_connector_class

    return connector_type(resolve_connector_class(str(name)))


def _kind_or_none(options: Mapping[str, Any] | DataSourceOptions) -> str | None:
    """`connector_kind`, or "unknown" when the class cannot be resolved (validation says why)."""
    try:
        return connector_kind(options)
    except EosConnectError:
        return "unknown"


def reads_kafka(options: Mapping[str, Any] | DataSourceOptions) -> bool:
    """Whether reader options ask for Kafka topics rather than a source connector."""
    from spark_eos_connect.sink.kafka_input import is_kafka_read

    return is_kafka_read(options) and connector_kind(options) != "source"


class EosConnectDataSource(DataSource):
    """`format("eosconnect")`: Connect-style connectors as Spark streaming sources and sinks."""

    @classmethod
    def name(cls) -> str:
        return DATA_SOURCE_NAME

    @cached_property
    def read_options(self) -> DataSourceOptions:
        """The options, read once (`runtime.config.options`) and handed to the source and
        sink sides."""
        return DataSourceOptions.read(self.options)

    def schema(self) -> StructType | str:
        """Kafka records (`topics` given; a sink connector's ranges when its `connector.class`
        is given too, carrying the reader's options to the writer: `spark.reader_options`) or
        a source connector's committed records; a source connector's options are validated
        here, so that `load()` refuses a bad config."""
        if reads_kafka(self.read_options):
            from spark_eos_connect.sink.kafka_input import KAFKA_ROW_DDL, SINK_RANGE_SCHEMA
            from spark_eos_connect.spark.kafka_stream import sink_tasks
            from spark_eos_connect.spark.reader_options import sink_range_schema

            if sink_tasks(self.read_options) is None:
                return KAFKA_ROW_DDL
            return sink_range_schema(SINK_RANGE_SCHEMA, self.read_options)
        from spark_eos_connect.source.records import COMMITTED_ROW_DDL

        if _kind_or_none(self.read_options) not in (None, "sink"):
            from spark_eos_connect.source.validation import validate_source_options

            for warning in validate_source_options(self.read_options):
                log.warning("%s", warning)
        return COMMITTED_ROW_DDL

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        """Driver: Kafka topics' or a source connector's micro-batches. The reader's `stop`
        (the connector's UNASSIGNED status, aborting open transactions) survives the SIGTERM
        Spark sends this process when the query stops (`worker_signals`)."""
        from spark_eos_connect.spark.worker_signals import finish_stop_on_sigterm

        finish_stop_on_sigterm()
        if reads_kafka(self.read_options):
            from spark_eos_connect.spark.kafka_stream import EosConnectKafkaStreamReader

            return EosConnectKafkaStreamReader(self.read_options)
        from spark_eos_connect.spark.source_stream import EosConnectSourceStreamReader

        return EosConnectSourceStreamReader(self.read_options)

    def streamWriter(self, schema: StructType, overwrite: bool) -> DataSourceStreamWriter:
        """Driver: a sink connector's tasks, or a source connector's rows into Kafka. A sink
        connector's options are the reader's, which the stream's `schema` carries, completed
        with the writer's own (`spark.reader_options`)."""
        settle_heap()  # in a Python worker Spark runs again each micro-batch
        from spark_eos_connect.spark.reader_options import writer_options

        options = writer_options(self.read_options, schema)
        if connector_kind(options) == "sink":
            from spark_eos_connect.spark.sink_writer import EosConnectSinkStreamWriter

            return EosConnectSinkStreamWriter(options, schema)
        from spark_eos_connect.spark.source_writer import EosConnectSourceStreamWriter

        return EosConnectSourceStreamWriter(options)
