"""What a re-run of a source task's micro-batch emits when an earlier attempt already committed.

Spark re-runs a task of a micro-batch when an attempt failed, on the same executor or on
another one (the first lost with its task host). The re-run must emit the rows of the records
the earlier attempt committed, no more and no fewer, or a downstream sink other than Kafka
misses them. So every transaction of an exactly-once task names its attempt and its records in
a header of its first offsets-topic record, in the same transaction:

    eosconnect.committed.rows = zlib(JSON {"v": 1, "attempt": <digest>, "topics": [...],
                                           "runs": [[topic index, partition, first offset,
                                                     count], ...]})

`runs` lists the committed records in the order Kafka acknowledged them, consecutive offsets
of one partition folded into one run (a transaction's records are mostly a few runs per
partition). The attempt digest covers the batch id and the driver's plan (generation,
committed offsets, offsets-topic positions), which every attempt of the micro-batch shares.
Kafka Connect reads offsets records by key and value only, so the header changes nothing for
a Connect worker sharing the topic.

A fresh task reads the offsets topic from the plan's positions once its transactional producer
is initialised (no earlier attempt can commit after that): the headers with its digest are the
rows to emit, and the attempt then runs nothing.
"""

from __future__ import annotations

import hashlib
import json
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from spark_eos_connect.arrow_arrays import int_array, int_values, string_array
from spark_eos_connect.kafka.clients import ConsumedRecord
from spark_eos_connect.protocol.offsets_format import partition_key
from spark_eos_connect.source.plan import SourceTaskPlan
from spark_eos_connect.source.records import COMMITTED_ROW_SCHEMA

ROWS_HEADER = "eosconnect.committed.rows"
FORMAT_VERSION = 1
MAX_HEADER_BYTES = 512 * 1024
"""A transaction whose runs do not fit in this (extremely fragmented offsets) records its
attempt without them: a re-run then knows the attempt committed, writes nothing and emits no
rows for that transaction (logged)."""


def attempt_digest(plan: SourceTaskPlan, batch_id: Any) -> str:
    """What every attempt of one task's micro-batch shares: the batch id and the driver's plan."""
    identity = [
        batch_id,
        plan.transactional_id,
        plan.generation_commit_offset,
        sorted(
            [partition_key(partition), json.dumps(offset, sort_keys=True)]
            for partition, offset in plan.committed
        ),
        sorted(plan.offsets_positions.items()),
    ]
    return hashlib.sha256(json.dumps(identity, default=str).encode()).hexdigest()[:32]


def encode_rows_header(attempt: str, rows: pa.RecordBatch) -> bytes:
    """The header value naming `attempt` and the committed `rows` (see `MAX_HEADER_BYTES`)."""
    topics = rows.column(0).dictionary_encode()
    topic_index = int_values(topics.indices).astype(np.int64)
    partitions = int_values(rows.column(1)).astype(np.int64)
    offsets = int_values(rows.column(2)).astype(np.int64)
    starts = np.flatnonzero(
        np.concatenate(
            (
                [len(offsets) > 0],
                (topic_index[1:] != topic_index[:-1])
                | (partitions[1:] != partitions[:-1])
                | (offsets[1:] != offsets[:-1] + 1),
            )
        )
    )
    counts = np.diff(np.append(starts, len(offsets)))
    runs = np.stack(
        [topic_index[starts], partitions[starts], offsets[starts], counts], axis=1
    ).tolist()
    payload = {
        "v": FORMAT_VERSION,
        "attempt": attempt,
        "topics": topics.dictionary.to_pylist(),
        "runs": runs,
    }
    value = _compressed(payload)
    if len(value) > MAX_HEADER_BYTES:
        value = _compressed({**payload, "topics": [], "runs": None})
    return value


def _compressed(payload: dict[str, Any]) -> bytes:
    return zlib.compress(json.dumps(payload, separators=(",", ":")).encode(), 1)


def decode_rows_header(value: bytes) -> tuple[str, pa.RecordBatch | None]:
    """The attempt digest and the committed rows of one header value (None: not recorded)."""
    payload = json.loads(zlib.decompress(value))
    if payload.get("v") != FORMAT_VERSION:
        raise ValueError(f"{ROWS_HEADER} version {payload.get('v')!r} is not {FORMAT_VERSION}")
    if payload["runs"] is None:
        return payload["attempt"], None
    runs = np.asarray(payload["runs"], dtype=np.int64).reshape(-1, 4)
    counts = runs[:, 3]
    run_of_row = np.repeat(np.arange(len(runs)), counts)
    within_run = np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)
    topics = pa.DictionaryArray.from_arrays(
        int_array(runs[run_of_row, 0], pa.int32()), string_array(payload["topics"])
    ).cast(pa.string())
    rows = pa.RecordBatch.from_arrays(
        [
            topics,
            int_array(runs[run_of_row, 1], pa.int32()),
            int_array(runs[run_of_row, 2] + within_run, pa.int64()),
        ],
        schema=COMMITTED_ROW_SCHEMA,
    )
    return payload["attempt"], rows


@dataclass
class EarlierAttempt:
    """What earlier attempts of a micro-batch committed, as found in the offsets topic."""

    rows: list[pa.RecordBatch] = field(default_factory=list)
    transactions: int = 0
    unrecorded: int = 0
    """Transactions whose rows did not fit in their header."""


def committed_by(attempt: str, records: Iterable[ConsumedRecord]) -> EarlierAttempt | None:
    """What transactions of `attempt` among the offsets-topic `records` committed, or None if
    there are none."""
    found: EarlierAttempt | None = None
    for record in records:
        for name, value in record.headers or ():
            if name != ROWS_HEADER or value is None:
                continue
            digest, rows = decode_rows_header(value)
            if digest != attempt:
                continue
            found = found or EarlierAttempt()
            found.transactions += 1
            if rows is None:
                found.unrecorded += 1
            elif rows.num_rows:
                found.rows.append(rows)
    return found
