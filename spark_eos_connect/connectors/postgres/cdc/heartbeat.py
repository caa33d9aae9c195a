"""Debezium's heartbeat records (`heartbeat.interval.ms`): while the captured tables are quiet,
a record on `<topic.heartbeat.prefix>.<topic.prefix>` now and then, keyed by the server name,
whose offset says how far the slot has been read, so that the slot moves past other tables'
WAL once Kafka holds it. `heartbeat.action.query` runs on the database before each one. Pure
apart from the clock given to it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from spark_eos_connect.api.data import Schema, SchemaBuilder, Struct

__all__ = ["HEARTBEAT_KEY_SCHEMA", "HEARTBEAT_VALUE_SCHEMA", "Heartbeats"]

HEARTBEAT_KEY_SCHEMA: Final = (
    SchemaBuilder.struct()
    .name("io.debezium.connector.common.ServerNameKey")
    .version(1)
    .field("serverName", Schema.STRING)
    .build()
)
HEARTBEAT_VALUE_SCHEMA: Final = (
    SchemaBuilder.struct()
    .name("io.debezium.connector.common.Heartbeat")
    .version(1)
    .field("ts_ms", Schema.INT64)
    .build()
)


@dataclass
class Heartbeats:
    """When the next heartbeat is due, and what it holds."""

    interval_ms: int
    topic: str
    server: str
    last_ms: int = 0

    @property
    def enabled(self) -> bool:
        """Whether heartbeats are asked for (`heartbeat.interval.ms` above 0)."""
        return self.interval_ms > 0

    def due(self, now_ms: int) -> bool:
        """Whether a heartbeat is due at `now_ms`; if so, the next one is an interval later."""
        if not self.enabled or now_ms - self.last_ms < self.interval_ms:
            return False
        self.last_ms = now_ms
        return True

    def key(self) -> Struct:
        """`{serverName: <topic.prefix>}`."""
        return Struct(HEARTBEAT_KEY_SCHEMA, {"serverName": self.server})

    def value(self, now_ms: int) -> Struct:
        """`{ts_ms: <now>}`."""
        return Struct(HEARTBEAT_VALUE_SCHEMA, {"ts_ms": now_ms})
