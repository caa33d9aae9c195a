"""The PostgresCdcSource connector (driver side): one task per database, as Debezium's."""

from __future__ import annotations

import logging
from typing import Any

from spark_eos_connect.api.config import ConfigDef
from spark_eos_connect.api.source import (
    ConnectorTransactionBoundaries,
    ExactlyOnceSupport,
    SourceConnector,
    SourceTask,
)
from spark_eos_connect.connectors.postgres.cdc.config import (
    CONFIG_DEF,
    SLOT_DROP_ON_STOP,
    SLOT_NAME,
    TOPIC_PREFIX,
    capture_filter,
    connection_settings,
    skipped_operations,
)
from spark_eos_connect.connectors.postgres.cdc.positions import (
    SERVER_FIELD,
    OffsetError,
    parse_offset,
)
from spark_eos_connect.errors import ConfigError, EosConnectError

__all__ = ["PostgresCdcSourceConnector"]

log = logging.getLogger(__name__)


class PostgresCdcSourceConnector(SourceConnector):
    """Captures a PostgreSQL database's changes through logical decoding (`pgoutput`) into
    Debezium-shaped topics, exactly once (see `connectors.postgres.task`)."""

    def __init__(self) -> None:
        self._props: dict[str, str] = {}
        self._config: dict[str, Any] = {}

    def version(self) -> str:
        """The Debezium release whose events this connector's follow."""
        from spark_eos_connect.connectors.postgres.cdc.envelope import CONNECTOR_VERSION

        return CONNECTOR_VERSION

    def config_def(self) -> ConfigDef:
        """Debezium's option names (`database.*`, `topic.prefix`, `slot.name`, ...)."""
        return CONFIG_DEF

    def start(self, props: dict[str, str]) -> None:
        """Check the options (the database is checked by the task, where it is reached)."""
        config = CONFIG_DEF.parse(props)
        capture_filter(config)
        skipped_operations(config)
        self._props, self._config = dict(props), config

    def stop(self) -> None:
        """With `slot.drop.on.stop=true`, drop the replication slot (Debezium's option; a
        task still reading it is given a moment, then its session is ended). A failure is
        logged: the slot stays, and loses nothing."""
        config, self._config = self._config, {}
        if not config.get(SLOT_DROP_ON_STOP):
            return
        import psycopg

        from spark_eos_connect.connectors.postgres.cdc import database as db

        slot = config[SLOT_NAME]
        try:
            connection = db.connect(connection_settings(config))
            try:
                dropped = db.drop_slot_when_free(connection, slot)
            finally:
                connection.close()
        except (EosConnectError, psycopg.Error) as error:
            log.warning("slot.drop.on.stop: replication slot %s stays: %s", slot, error)
            return
        if dropped:
            log.info("dropped replication slot %s (slot.drop.on.stop=true)", slot)

    def task_class(self) -> type[SourceTask]:
        """`PostgresCdcSourceTask`."""
        from spark_eos_connect.connectors.postgres.cdc.task import PostgresCdcSourceTask

        return PostgresCdcSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        """One task: a replication slot is read by one client."""
        return [dict(self._props)]

    def exactly_once_support(self, config: dict[str, str]) -> ExactlyOnceSupport:
        """SUPPORTED: the slot is advanced only past what Kafka committed."""
        return ExactlyOnceSupport.SUPPORTED

    def can_define_transaction_boundaries(
        self, config: dict[str, str]
    ) -> ConnectorTransactionBoundaries:
        """SUPPORTED: one Kafka transaction per database transaction."""
        return ConnectorTransactionBoundaries.SUPPORTED

    def alter_offsets(
        self, config: dict[str, str], offsets: list[tuple[dict[str, Any], dict[str, Any] | None]]
    ) -> bool:
        """Accept resets (the next start takes a new snapshot) and offsets of this connector's
        shape for `{"server": <topic.prefix>}`; True: the task moves the slot to an altered
        offset when it starts."""
        prefix = config.get(TOPIC_PREFIX)
        for partition, offset in offsets:
            if set(partition or {}) != {SERVER_FIELD} or (
                prefix and partition[SERVER_FIELD] != prefix
            ):
                raise ConfigError(
                    f"PostgresCdcSource partitions look like {{'{SERVER_FIELD}': "
                    f"{prefix or '<topic.prefix>'!r}}}, not {partition!r}"
                )
            try:
                parse_offset(offset)
            except OffsetError as error:
                raise ConfigError(str(error)) from error
        return True
