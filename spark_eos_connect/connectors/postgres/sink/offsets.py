"""The sink's offsets table: the next Kafka offset of each (connector, topic, partition) whose
records are in PostgreSQL, written in the same transaction as those records.

`lock_offsets` inserts missing rows and locks them (`SELECT ... FOR UPDATE`): a second writer of
the same partitions (a retried, speculative or zombie attempt) waits for the first to commit, then
reads the offsets it wrote and drops what is already written.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from spark_eos_connect.api.sink import TopicPartition
from spark_eos_connect.connectors.postgres.sink.sql import TableName

__all__ = [
    "advance_offsets",
    "create_offsets_table_sql",
    "delete_offsets",
    "lock_offsets",
    "read_offsets",
    "write_offsets",
]


def create_offsets_table_sql(table: TableName) -> str:
    """CREATE TABLE IF NOT EXISTS for the offsets table."""
    return (
        f"CREATE TABLE IF NOT EXISTS {table.sql} (connector TEXT NOT NULL, topic TEXT NOT NULL, "
        '"partition" INTEGER NOT NULL, next_offset BIGINT NOT NULL, '
        'PRIMARY KEY (connector, topic, "partition"))'
    )


def _columns(partitions: Iterable[TopicPartition]) -> tuple[list[str], list[int]]:
    ordered = sorted(set(partitions))
    return [tp.topic for tp in ordered], [tp.partition for tp in ordered]


def _rows(rows: Iterable[tuple[str, int, int]]) -> dict[TopicPartition, int]:
    return {TopicPartition(topic, partition): offset for topic, partition, offset in rows}


def lock_offsets(
    cursor: Any, table: TableName, connector: str, partitions: Iterable[TopicPartition]
) -> dict[TopicPartition, int]:
    """In a transaction: the stored next offset of each partition (0 for a new one), the rows
    locked until the transaction ends. Rows are inserted only for partitions that have none (one
    statement when they all have one)."""
    wanted = set(partitions)
    found = _select_for_update(cursor, table, connector, wanted)
    if len(found) < len(wanted):
        topics, numbers = _columns(wanted - set(found))
        cursor.execute(
            f'INSERT INTO {table.sql} (connector, topic, "partition", next_offset) '
            "SELECT %s, t, p, 0 FROM unnest(%s::text[], %s::int[]) AS u(t, p) "
            "ORDER BY t, p ON CONFLICT DO NOTHING",
            (connector, topics, numbers),
        )
        found = _select_for_update(cursor, table, connector, wanted)
    return found


def _select_for_update(
    cursor: Any, table: TableName, connector: str, partitions: Iterable[TopicPartition]
) -> dict[TopicPartition, int]:
    topics, numbers = _columns(partitions)
    cursor.execute(
        f'SELECT topic, "partition", next_offset FROM {table.sql} '
        'WHERE connector = %s AND (topic, "partition") IN '
        "(SELECT * FROM unnest(%s::text[], %s::int[])) "
        'ORDER BY topic, "partition" FOR UPDATE',
        (connector, topics, numbers),
    )
    return _rows(cursor.fetchall())


def write_offsets(
    cursor: Any, table: TableName, connector: str, offsets: Mapping[TopicPartition, int]
) -> None:
    """In the transaction that locked them: set the partitions' next offsets."""
    topics, numbers = _columns(offsets)
    values = [offsets[TopicPartition(t, p)] for t, p in zip(topics, numbers, strict=True)]
    cursor.execute(
        f"UPDATE {table.sql} AS o SET next_offset = u.n "
        "FROM unnest(%s::text[], %s::int[], %s::bigint[]) AS u(t, p, n) "
        'WHERE o.connector = %s AND o.topic = u.t AND o."partition" = u.p',
        (topics, numbers, values, connector),
    )


def advance_offsets(
    cursor: Any, table: TableName, connector: str, offsets: Mapping[TopicPartition, int]
) -> dict[TopicPartition, int]:
    """Raise the partitions' next offsets to at least `offsets` (never lower them); the stored
    offsets after that."""
    topics, numbers = _columns(offsets)
    values = [offsets[TopicPartition(t, p)] for t, p in zip(topics, numbers, strict=True)]
    cursor.execute(
        f'INSERT INTO {table.sql} AS o (connector, topic, "partition", next_offset) '
        "SELECT %s, t, p, n FROM unnest(%s::text[], %s::int[], %s::bigint[]) AS u(t, p, n) "
        'ORDER BY t, p ON CONFLICT (connector, topic, "partition") '
        "DO UPDATE SET next_offset = GREATEST(o.next_offset, EXCLUDED.next_offset) "
        'RETURNING topic, "partition", next_offset',
        (connector, topics, numbers, values),
    )
    return _rows(cursor.fetchall())


def read_offsets(cursor: Any, table: TableName, connector: str) -> dict[TopicPartition, int]:
    """Every stored next offset of the connector."""
    cursor.execute(
        f'SELECT topic, "partition", next_offset FROM {table.sql} WHERE connector = %s',
        (connector,),
    )
    return _rows(cursor.fetchall())


def delete_offsets(
    cursor: Any, table: TableName, connector: str, partitions: Iterable[TopicPartition]
) -> None:
    """Forget the partitions' offsets (their next records are written whatever their offset)."""
    topics, numbers = _columns(partitions)
    cursor.execute(
        f'DELETE FROM {table.sql} WHERE connector = %s AND (topic, "partition") IN '
        "(SELECT * FROM unnest(%s::text[], %s::int[]))",
        (connector, topics, numbers),
    )
