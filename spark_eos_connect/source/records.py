"""Source records on their way to Kafka, and the rows a source micro-batch hands to Spark.

A source task's records never cross Spark: the task produces them itself. What Spark receives
is one row per record that Kafka acknowledged in a committed transaction, with where Kafka stored
it (`topic`, `partition`, `offset`), so that Spark's metrics count records and a downstream sink
can find them in Kafka.
"""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa

from spark_eos_connect.arrow_arrays import int_array, string_array

COMMITTED_ROW_DDL = "topic string, partition int, offset bigint"

COMMITTED_ROW_SCHEMA = pa.schema(
    [("topic", pa.string()), ("partition", pa.int32()), ("offset", pa.int64())]
)


def to_bytes(data: Any) -> bytes | None:
    """Kafka bytes for a key or value: bytes as is, str as UTF-8, other values as JSON."""
    if data is None or isinstance(data, bytes):
        return data
    if isinstance(data, str):
        return data.encode("utf-8")
    if isinstance(data, bytearray | memoryview):
        return bytes(data)
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def committed_rows(topics: list[str], partitions: list[int], offsets: list[int]) -> pa.RecordBatch:
    """One Arrow batch of committed-record rows from three parallel columns (built from their
    buffers: `arrow_arrays`; a task host makes them before its transaction commits)."""
    return pa.RecordBatch.from_arrays(
        [
            string_array(topics),
            int_array(partitions, pa.int32()),
            int_array(offsets, pa.int64()),
        ],
        schema=COMMITTED_ROW_SCHEMA,
    )
