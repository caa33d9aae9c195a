"""Records that reach the task loop already converted to Kafka bytes, in columns (a Java
task's: the task host ran its transforms and converters), and the task kind that returns them.

The task loop's one seam for them: a `ConvertingSourceTask` is asked `poll_converted(limit,
wait_s)` instead of `poll()`, and its `ConvertedRecords` go to the producer as they are
(`source.sender`), skipping the Python `RecordPreparer`; everything else (the transaction, the
offsets-topic records, fencing, the replay guard, `commit()` after the commit) is the loop's.
"""

from __future__ import annotations

import json
from abc import abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from spark_eos_connect.api.source import SourceTask

DeliveryCallback = Callable[[Any, Any], None]
TransactionRequest = Literal["commit", "abort"]


class DeliveryReceipts:
    """Where Kafka stored each record a task wants `commitRecord` metadata for, by the record's
    sequence number: (Kafka partition, Kafka offset)."""

    def __init__(self) -> None:
        self.stored: dict[int, tuple[int, int]] = {}

    def delivered(self, default: DeliveryCallback, seq: int, error: Any, message: Any) -> None:
        """The delivery report of record `seq`; `default` (the task's bookkeeping) gets it too."""
        default(error, message)
        if error is None:
            self.stored[seq] = (message.partition(), message.offset())

    def take(self, through: int) -> list[tuple[int, int, int]]:
        """(seq, partition, offset) of the records up to `through`, forgotten here."""
        taken = [(seq, *where) for seq, where in self.stored.items() if seq <= through]
        for seq, _, _ in taken:
            del self.stored[seq]
        return taken


@dataclass
class ConvertedRecords:
    """One batch of records taken from a task, as columns of what to produce.

    `taken` counts every record the task returned (a transform may have dropped some: only the
    `n` others are produced; `positions` gives their places among the taken, None when none was
    dropped). `offsets` holds the last source offset of each source partition among all the
    taken records: the task loop submits them with the batch. Records carry sequence numbers
    from `first_seq`; `receipts`, when set, collects their Kafka metadata. `schemas` holds the
    (number, JSON text) of the schemas the batch's handed-over keys or values first use
    (`stand_ins`), None when there are none.

    With connector-defined transaction boundaries, a batch ends at the task's first request
    (`TransactionContext`): `on_last` is the one on its last taken record, `after_poll` the one
    for the `poll()` that record ends; the boundary applies `on_last`, then `after_poll`.
    `ends_poll` is False when the batch stops inside a `poll()` whose other records wait in
    the task host (`poll_converted(rest_of_poll=True)` takes them).
    """

    first_seq: int
    taken: int
    topics: list[str]
    keys: list[bytes | None]
    values: list[bytes | None]
    offsets: list[tuple[dict[str, Any], dict[str, Any] | None]]
    partitions: list[int] | None = None
    timestamps: list[int] | None = None
    headers: list[list[tuple[str, bytes | None]]] | None = None
    positions: list[int] | None = None
    receipts: DeliveryReceipts | None = field(default=None, repr=False)
    schemas: list[tuple[int, str]] | None = None
    on_last: TransactionRequest | None = None
    after_poll: TransactionRequest | None = None
    ends_poll: bool = True

    def __len__(self) -> int:
        """The records taken from the task (what the micro-batch's record budget counts)."""
        return self.taken

    @property
    def plain(self) -> bool:
        """Whether every record goes with topic, key and value only."""
        return (
            self.partitions is None
            and self.timestamps is None
            and self.headers is None
            and self.receipts is None
        )

    def without(self, dropped: set[int]) -> None:
        """Drop the records at the indexes `dropped` (among the `n` to produce): they are not
        produced, their offsets still count (as a record a transform dropped)."""
        if not dropped:
            return
        kept = [i for i in range(len(self.topics)) if i not in dropped]
        positions = self.positions
        self.positions = [i if positions is None else positions[i] for i in kept]
        self.topics = [self.topics[i] for i in kept]
        self.keys = [self.keys[i] for i in kept]
        self.values = [self.values[i] for i in kept]
        if self.partitions is not None:
            self.partitions = [self.partitions[i] for i in kept]
        if self.timestamps is not None:
            self.timestamps = [self.timestamps[i] for i in kept]
        if self.headers is not None:
            self.headers = [self.headers[i] for i in kept]

    def extras(self, index: int, default: DeliveryCallback) -> dict[str, Any]:
        """The producer's keyword arguments for record `index` beyond topic, value and key
        (`default`: the producer's own delivery callback, also called for a receipt)."""
        extra: dict[str, Any] = {}
        if self.partitions is not None and self.partitions[index] >= 0:
            extra["partition"] = self.partitions[index]
        if self.timestamps is not None and self.timestamps[index] >= 0:
            extra["timestamp"] = self.timestamps[index]
        if self.headers is not None and self.headers[index]:
            extra["headers"] = self.headers[index]
        if self.receipts is not None:
            position = index if self.positions is None else self.positions[index]
            seq = self.first_seq + position
            receipts = self.receipts
            extra["on_delivery"] = lambda error, message: receipts.delivered(
                default, seq, error, message
            )
        return extra


def parse_offsets(
    pairs: list[tuple[str | None, str | None]],
) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
    """(partition, offset) dicts from their JSON texts (Connect's schemaless JSON)."""
    return [(json.loads(p or "{}"), None if o is None else json.loads(o)) for p, o in pairs]


class ConvertingSourceTask(SourceTask):
    """A source task whose records come converted (`ConvertedRecords`): the task loop calls
    `poll_converted` instead of `poll`, and `commit()` after each committed transaction.

    Built with the plan's `extra` settings and a function that resolves config references
    (the task loop passes `plan.extra` and `plan.providers.resolve`).
    """

    def __init__(
        self,
        settings: Mapping[str, Any] | None = None,
        resolve: Callable[[Mapping[str, Any]], dict[str, Any]] | None = None,
    ) -> None:
        self.settings = dict(settings or {})
        self.resolve = resolve if resolve is not None else dict

    @abstractmethod
    def poll_converted(
        self, limit: int, wait_s: float, rest_of_poll: bool = False
    ) -> ConvertedRecords:
        """At most `limit` records, waiting up to `wait_s` for the first (none: an empty batch);
        with `rest_of_poll`, only those left of the `poll()` the last batch stopped in."""
