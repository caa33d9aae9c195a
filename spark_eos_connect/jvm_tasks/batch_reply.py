"""A BATCH reply of the task host read into `ConvertedRecords` (layout: `TaskHostMain`)."""

from __future__ import annotations

import sys
from array import array

from spark_eos_connect.jvm_tasks.converted import (
    ConvertedRecords,
    DeliveryReceipts,
    TransactionRequest,
    parse_offsets,
)
from spark_eos_connect.jvm_tasks.wire import FrameReader

_PARTITIONS, _TIMESTAMPS, _HEADERS, _DROPPED, _SCHEMAS, _REQUESTS = 1, 2, 4, 8, 16, 32
_MID_POLL = 64
_REQUEST: dict[int, TransactionRequest | None] = {0: None, 1: "commit", 2: "abort"}


def _numbers(reply: FrameReader, code: str, count: int) -> array[int]:
    numbers = array(code)
    size = numbers.itemsize * count
    numbers.frombytes(reply.raw(size))
    if sys.byteorder == "big":
        numbers.byteswap()
    return numbers


def _column(reply: FrameReader, count: int) -> list[bytes | None]:
    """n lengths (-1: null), then the bytes one after another."""
    lengths = _numbers(reply, "i", count)
    if not count or max(lengths) < 0:
        return [None] * count
    body, at = reply.body, reply.at
    column: list[bytes | None] = []
    append = column.append
    for length in lengths:
        if length < 0:
            append(None)
        else:
            append(body[at : at + length])
            at += length
    reply.at = at
    return column


def read_batch(reply: FrameReader, receipts: DeliveryReceipts | None) -> ConvertedRecords:
    """The records of one BATCH reply; `receipts` collects their Kafka metadata if set."""
    first_seq, taken, n = reply.i64(), reply.i32(), reply.i32()
    names = [reply.text() or "" for _ in range(reply.i32())]
    ids = _numbers(reply, "i", n)
    topics = [names[0]] * n if len(names) == 1 else [names[i] for i in ids]
    flags = reply.i32()
    positions = list(_numbers(reply, "i", n)) if flags & _DROPPED else None
    partitions = list(_numbers(reply, "i", n)) if flags & _PARTITIONS else None
    timestamps = list(_numbers(reply, "q", n)) if flags & _TIMESTAMPS else None
    keys = _column(reply, n)
    values = _column(reply, n)
    headers: list[list[tuple[str, bytes | None]]] | None = None
    if flags & _HEADERS:
        headers = []
        for _ in range(n):
            count = reply.i32()
            headers.append([(reply.text() or "", _bytes(reply)) for _ in range(count)])
    pairs = [(reply.text(), reply.text()) for _ in range(reply.i32())]
    schemas = None
    if flags & _SCHEMAS:
        schemas = [(reply.i32(), reply.text() or "") for _ in range(reply.i32())]
    requests = reply.i32() if flags & _REQUESTS else 0
    return ConvertedRecords(
        first_seq=first_seq,
        taken=taken,
        topics=topics,
        keys=keys,
        values=values,
        offsets=parse_offsets(pairs),
        partitions=partitions,
        timestamps=timestamps,
        headers=headers,
        positions=positions,
        receipts=receipts,
        schemas=schemas,
        on_last=_REQUEST[requests & 3],
        after_poll=_REQUEST[requests >> 2 & 3],
        ends_poll=not flags & _MID_POLL,
    )


def _bytes(reply: FrameReader) -> bytes | None:
    size = reply.i32()
    return None if size < 0 else reply.raw(size)
