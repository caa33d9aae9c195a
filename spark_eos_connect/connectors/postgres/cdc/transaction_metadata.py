"""Debezium's transaction metadata (`provide.transaction.metadata=true`): a BEGIN record before a
database transaction's first change event and an END record after its last, on
`<topic.prefix>.<topic.transaction>`, keyed by the transaction id (PostgreSQL's xid as text),
and in each change event a `transaction` block: the id, the event's place among the
transaction's events (`total_order`) and among those of its table (`data_collection_order`).
A transaction without change events has no BEGIN or END. Pure; no I/O."""

from __future__ import annotations

from collections import Counter
from typing import Final

from spark_eos_connect.api.data import Schema, SchemaBuilder, Struct
from spark_eos_connect.connectors.postgres.cdc.envelope import TRANSACTION_SCHEMA, ChangeEvent

__all__ = ["TRANSACTION_KEY_SCHEMA", "TRANSACTION_VALUE_SCHEMA", "TransactionMetadata"]

TRANSACTION_KEY_SCHEMA: Final = (
    SchemaBuilder.struct()
    .name("io.debezium.connector.common.TransactionMetadataKey")
    .version(1)
    .field("id", Schema.STRING)
    .build()
)
_EVENT_COUNT_SCHEMA: Final = (
    SchemaBuilder.struct()
    .optional()
    .name("event.collection")
    .version(1)
    .field("data_collection", Schema.STRING)
    .field("event_count", Schema.INT64)
    .build()
)
TRANSACTION_VALUE_SCHEMA: Final = (
    SchemaBuilder.struct()
    .name("io.debezium.connector.common.TransactionMetadataValue")
    .version(1)
    .field("status", Schema.STRING)
    .field("id", Schema.STRING)
    .field("event_count", Schema.OPTIONAL_INT64)
    .field("data_collections", SchemaBuilder.array(_EVENT_COUNT_SCHEMA).optional().build())
    .field("ts_ms", Schema.INT64)
    .build()
)


class TransactionMetadata:
    """The metadata of one database transaction, made as its events are."""

    def __init__(self, topic: str, xid: int, commit_ms: int) -> None:
        self.topic = topic
        self.id = str(xid)
        self.commit_ms = commit_ms
        self._per_table: Counter[str] = Counter()
        self.total = 0

    def _record(self, value: Struct) -> ChangeEvent:
        key = Struct(TRANSACTION_KEY_SCHEMA, {"id": self.id})
        return ChangeEvent(
            self.topic, key, TRANSACTION_KEY_SCHEMA, value, TRANSACTION_VALUE_SCHEMA, self.commit_ms
        )

    def begin(self) -> ChangeEvent:
        """The BEGIN record."""
        return self._record(
            Struct(
                TRANSACTION_VALUE_SCHEMA,
                {"status": "BEGIN", "id": self.id, "ts_ms": self.commit_ms},
            )
        )

    def mark(self, event: ChangeEvent, table: str) -> None:
        """Count `event`, a change of `table` (`schema.table`), and put its block in it."""
        self.total += 1
        self._per_table[table] += 1
        assert event.value is not None
        event.value.put(
            "transaction",
            Struct(
                TRANSACTION_SCHEMA,
                {
                    "id": self.id,
                    "total_order": self.total,
                    "data_collection_order": self._per_table[table],
                },
            ),
        )

    def end(self) -> ChangeEvent:
        """The END record: how many events, in all and per table."""
        collections = [
            Struct(_EVENT_COUNT_SCHEMA, {"data_collection": table, "event_count": count})
            for table, count in self._per_table.items()
        ]
        return self._record(
            Struct(
                TRANSACTION_VALUE_SCHEMA,
                {
                    "status": "END",
                    "id": self.id,
                    "event_count": self.total,
                    "data_collections": collections,
                    "ts_ms": self.commit_ms,
                },
            )
        )
