"""What connector authors implement: connectors, tasks, records, contexts and option definitions.

Pure Python (no Kafka client, no Spark), modelled on Kafka Connect's `connect/api`.
"""

from __future__ import annotations

from spark_eos_connect.api.config import (
    HIDDEN,
    NO_DEFAULT,
    ConfigDef,
    ConfigKey,
    ConfigType,
    ConfigValueReport,
    Importance,
    InvalidConfigError,
    NonEmptyList,
    NonEmptyString,
    Password,
    Range,
    Validator,
    ValidString,
    props_with_prefix,
    unknown_options,
)
from spark_eos_connect.api.config_provider import ConfigProvider
from spark_eos_connect.api.connector import Connector, ConnectorContext, Task
from spark_eos_connect.api.sink import (
    SinkConnector,
    SinkRecord,
    SinkTask,
    SinkTaskContext,
    TopicPartition,
)
from spark_eos_connect.api.source import (
    ConnectorTransactionBoundaries,
    ExactlyOnceSupport,
    InMemoryOffsetStorageReader,
    OffsetStorageReader,
    RecordMetadata,
    SourceConnector,
    SourceRecord,
    SourceTask,
    SourceTaskContext,
    TransactionBoundaryConflictError,
    TransactionContext,
)

__all__ = [
    "HIDDEN",
    "NO_DEFAULT",
    "ConfigDef",
    "ConfigKey",
    "ConfigProvider",
    "ConfigType",
    "ConfigValueReport",
    "Connector",
    "ConnectorContext",
    "ConnectorTransactionBoundaries",
    "ExactlyOnceSupport",
    "Importance",
    "InMemoryOffsetStorageReader",
    "InvalidConfigError",
    "NonEmptyList",
    "NonEmptyString",
    "OffsetStorageReader",
    "Password",
    "Range",
    "RecordMetadata",
    "SinkConnector",
    "SinkRecord",
    "SinkTask",
    "SinkTaskContext",
    "SourceConnector",
    "SourceRecord",
    "SourceTask",
    "SourceTaskContext",
    "Task",
    "TopicPartition",
    "TransactionBoundaryConflictError",
    "TransactionContext",
    "ValidString",
    "Validator",
    "props_with_prefix",
    "unknown_options",
]
