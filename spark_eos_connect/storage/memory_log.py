"""An in-memory Kafka log and the clients a source task uses on it, to unit-test the exactly-once
loop without a broker.

`MemoryLog` holds topics of partitions of records (headers included) as a broker does, with
transactions: a transactional producer's records sit in the log from `produce` on, and a
read_committed reader sees them only once their transaction commits, never once it aborts, and
never past the first record of a transaction still open (the last stable offset). Each commit
or abort leaves a control marker taking one offset, as Kafka's do. Claiming a transactional id
(what `init_transactions` does) fences every older producer of it and aborts its open
transaction.

`MemoryProducer` implements `ports.TransactionalProducer` on it: delivery reports are served
by `poll` and `flush`, failures raise `kafka.producers.ProducerRequestError` named as Kafka
names them (a fenced producer's `PRODUCER_FENCED`), which `kafka.producers` reads as it reads
librdkafka's. `MemoryOffsetsLog` implements `ports.OffsetsLog`; `MemoryTaskClients` hands a
source task all of these, and `ManualClock` is a clock that moves only when told to.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from spark_eos_connect.kafka.clients import ConsumedRecord
from spark_eos_connect.kafka.producers import ProducerRequestError
from spark_eos_connect.kafka.retry import KafkaTimeoutError
from spark_eos_connect.ports import ConfigStore, DeliveryCallback
from spark_eos_connect.protocol.murmur2 import default_partition
from spark_eos_connect.protocol.offsets_format import OffsetsSnapshot

Headers = tuple[tuple[str, bytes | None], ...]


@dataclass
class _Transaction:
    """One transaction of one producer: open until committed or aborted."""

    transactional_id: str
    state: str = "open"
    partitions: set[tuple[str, int]] = field(default_factory=set)


@dataclass(frozen=True)
class _Entry:
    """One offset of a partition: a record (of a transaction or none), or a control marker."""

    record: ConsumedRecord | None
    transaction: _Transaction | None


class MemoryLog:
    """Topics → partitions → records, with transactions and read_committed reads. Thread-safe.

    A topic not created explicitly is created on first use with `default_partitions`.
    """

    def __init__(self, default_partitions: int = 1) -> None:
        self.default_partitions = default_partitions
        self._topics: dict[str, list[list[_Entry]]] = {}
        self._epochs: dict[str, int] = {}
        self._open: dict[str, _Transaction] = {}
        self._lock = threading.RLock()

    # -- topics ----------------------------------------------------------------------------------

    def create_topic(self, topic: str, partitions: int) -> None:
        """Create `topic` with `partitions` partitions (nothing if it exists)."""
        with self._lock:
            self._topics.setdefault(topic, [[] for _ in range(partitions)])

    def partitions(self, topic: str) -> int:
        """How many partitions `topic` has (created with the default count if new)."""
        with self._lock:
            return len(self._partitions_of(topic))

    def _partitions_of(self, topic: str) -> list[list[_Entry]]:
        if topic not in self._topics:
            self.create_topic(topic, self.default_partitions)
        return self._topics[topic]

    # -- writing ---------------------------------------------------------------------------------

    def append(
        self,
        topic: str,
        partition: int,
        key: bytes | None,
        value: bytes | None,
        headers: Headers = (),
        timestamp: int = 0,
        transaction: _Transaction | None = None,
    ) -> int:
        """Add one record at the end of `topic`'s `partition`; its offset."""
        with self._lock:
            log = self._partitions_of(topic)[partition]
            offset = len(log)
            record = ConsumedRecord(topic, partition, offset, key, value, headers, timestamp)
            log.append(_Entry(record, transaction))
            if transaction is not None:
                transaction.partitions.add((topic, partition))
            return offset

    def claim(self, transactional_id: str) -> int:
        """A new epoch for `transactional_id`: older producers of it are fenced from now on
        and its open transaction, if any, is aborted (`init_transactions`)."""
        with self._lock:
            open_transaction = self._open.get(transactional_id)
            if open_transaction is not None:
                self._end(open_transaction, commit=False)
            self._epochs[transactional_id] = self._epochs.get(transactional_id, 0) + 1
            return self._epochs[transactional_id]

    def epoch(self, transactional_id: str) -> int:
        """The newest epoch claimed for `transactional_id` (0: never claimed)."""
        with self._lock:
            return self._epochs.get(transactional_id, 0)

    def begin(self, transactional_id: str) -> _Transaction:
        """Open a transaction for `transactional_id`."""
        with self._lock:
            transaction = _Transaction(transactional_id)
            self._open[transactional_id] = transaction
            return transaction

    def end(self, transaction: _Transaction, commit: bool) -> None:
        """Commit or abort `transaction`: a control marker in each partition it wrote to."""
        with self._lock:
            self._end(transaction, commit)

    def _end(self, transaction: _Transaction, commit: bool) -> None:
        if transaction.state != "open":
            return
        transaction.state = "committed" if commit else "aborted"
        for topic, partition in sorted(transaction.partitions):
            self._topics[topic][partition].append(_Entry(None, transaction))
        if self._open.get(transaction.transactional_id) is transaction:
            del self._open[transaction.transactional_id]

    # -- reading ---------------------------------------------------------------------------------

    def high_watermark(self, topic: str, partition: int) -> int:
        """The offset after the last one written (markers included)."""
        with self._lock:
            return len(self._partitions_of(topic)[partition])

    def last_stable_offset(self, topic: str, partition: int) -> int:
        """The first offset of a transaction still open, else the high watermark."""
        with self._lock:
            log = self._partitions_of(topic)[partition]
            for offset, entry in enumerate(log):
                if entry.transaction is not None and entry.transaction.state == "open":
                    return offset
            return len(log)

    def read(
        self,
        topic: str,
        partition: int,
        start: int = 0,
        end: int | None = None,
        committed_only: bool = True,
    ) -> list[ConsumedRecord]:
        """The records at offsets `start` to `end` (by default, the last stable offset when
        `committed_only`, else the high watermark): read_committed skips aborted ones."""
        with self._lock:
            if end is None:
                end = (
                    self.last_stable_offset(topic, partition)
                    if committed_only
                    else self.high_watermark(topic, partition)
                )
            entries = self._partitions_of(topic)[partition][start:end]
            return [
                entry.record
                for entry in entries
                if entry.record is not None
                and (
                    not committed_only
                    or entry.transaction is None
                    or entry.transaction.state == "committed"
                )
            ]

    def read_committed(self, topic: str) -> list[ConsumedRecord]:
        """Every record of `topic` a read_committed consumer sees now, partition by partition."""
        with self._lock:
            return [r for p in range(self.partitions(topic)) for r in self.read(topic, p)]

    def read_uncommitted(self, topic: str) -> list[ConsumedRecord]:
        """Every record of `topic`, aborted and open ones included."""
        with self._lock:
            return [
                r
                for p in range(self.partitions(topic))
                for r in self.read(topic, p, committed_only=False)
            ]


@dataclass(frozen=True)
class MemoryMessage:
    """What a delivery report carries, shaped like librdkafka's `Message`."""

    record: ConsumedRecord

    def topic(self) -> str:
        """The record's topic."""
        return self.record.topic

    def partition(self) -> int:
        """The record's partition."""
        return self.record.partition

    def offset(self) -> int:
        """The record's offset."""
        return self.record.offset

    def key(self) -> bytes | None:
        """The record's key."""
        return self.record.key

    def value(self) -> bytes | None:
        """The record's value."""
        return self.record.value

    def headers(self) -> Headers:
        """The record's headers."""
        return self.record.headers


def _fenced(transactional_id: str) -> ProducerRequestError:
    return ProducerRequestError(
        "PRODUCER_FENCED",
        f"There is a newer producer with the same transactional.id {transactional_id!r}",
    )


def _as_bytes(data: Any) -> bytes | None:
    return data.encode() if isinstance(data, str) else data


class MemoryProducer:
    """A producer writing to a `MemoryLog` (`ports.TransactionalProducer`).

    With a `transactional_id` it claims it when built, as `kafka.producers.transactional_producer`
    does, fencing every older producer of it; once fenced, every call raises a `PRODUCER_FENCED`
    `ProducerRequestError`. Without one, it is idempotent: records are committed at once.
    `refuse(topic, name, reason)` makes the log refuse that topic's records in their delivery
    reports, as a broker refusing them does.
    """

    def __init__(
        self,
        log: MemoryLog,
        transactional_id: str | None = None,
        on_delivery: DeliveryCallback | None = None,
    ) -> None:
        self.log = log
        self.transactional_id = transactional_id
        self.on_delivery = on_delivery
        self.epoch = log.claim(transactional_id) if transactional_id is not None else 0
        self.refusals: dict[str, ProducerRequestError] = {}
        self._transaction: _Transaction | None = None
        self._refused_in_transaction = False
        self._reports: list[tuple[DeliveryCallback | None, Any, MemoryMessage]] = []
        self._sticky = itertools.count()

    @property
    def fenced(self) -> bool:
        """Whether a newer producer claimed this one's transactional id."""
        return (
            self.transactional_id is not None
            and self.log.epoch(self.transactional_id) != self.epoch
        )

    def refuse(self, topic: str, name: str, reason: str) -> None:
        """Refuse every later record of `topic` (in its delivery report)."""
        self.refusals[topic] = ProducerRequestError(name, reason)

    def produce(
        self,
        topic: str,
        value: Any = None,
        key: Any = None,
        partition: int = -1,
        on_delivery: DeliveryCallback | None = None,
        timestamp: int = 0,
        headers: Any = None,
    ) -> None:
        """Hand a record over; its delivery report waits for `poll` or `flush`."""
        self._check_usable()
        if self.transactional_id is not None and self._transaction is None:
            raise ProducerRequestError("_STATE", "Operation not valid in state Ready")
        key, value = _as_bytes(key), _as_bytes(value)
        if partition < 0:
            count = self.log.partitions(topic)
            partition = default_partition(key, count) if key else next(self._sticky) % count
        header_tuple = tuple((name, _as_bytes(data)) for name, data in headers or ())
        callback = on_delivery or self.on_delivery
        refusal = self.refusals.get(topic)
        if refusal is not None:
            record = ConsumedRecord(topic, partition, -1, key, value, header_tuple, timestamp)
            self._reports.append((callback, refusal, MemoryMessage(record)))
            self._refused_in_transaction = self._transaction is not None
            return
        offset = self.log.append(
            topic, partition, key, value, header_tuple, timestamp, self._transaction
        )
        record = ConsumedRecord(topic, partition, offset, key, value, header_tuple, timestamp)
        self._reports.append((callback, None, MemoryMessage(record)))

    def poll(self, timeout: float = 0) -> int:
        """Serve the delivery reports waiting; how many."""
        reports, self._reports = self._reports, []
        for callback, error, message in reports:
            if callback is not None:
                callback(error, message)
        return len(reports)

    def flush(self, timeout: float = 0) -> int:
        """Serve every delivery report; what is left (always 0)."""
        self.poll()
        return 0

    def begin_transaction(self) -> None:
        """Open a transaction."""
        self._check_usable()
        assert self.transactional_id is not None, "an idempotent producer has no transactions"
        if self._transaction is not None:
            raise ProducerRequestError("_STATE", "Operation not valid in state InTransaction")
        self._transaction = self.log.begin(self.transactional_id)

    def commit_transaction(self, timeout: float = 0) -> None:
        """Serve the delivery reports, then commit (nothing is committed if a record was
        refused: the transaction is then to be aborted)."""
        self._check_usable()
        transaction = self._open_transaction()
        self.flush()
        if self._refused_in_transaction:
            raise ProducerRequestError(
                "_INCONSISTENT",
                "Unable to commit: a record of the transaction was refused",
                txn_requires_abort=True,
            )
        self.log.end(transaction, commit=True)
        self._transaction = None

    def abort_transaction(self, timeout: float = 0) -> None:
        """Abort the open transaction: none of its records will be read_committed."""
        self._check_usable()
        transaction = self._open_transaction()
        self.flush()
        self.log.end(transaction, commit=False)
        self._transaction = None
        self._refused_in_transaction = False

    def _open_transaction(self) -> _Transaction:
        if self._transaction is None:
            raise ProducerRequestError("_STATE", "No transaction is open")
        return self._transaction

    def _check_usable(self) -> None:
        if self.fenced:
            assert self.transactional_id is not None
            raise _fenced(self.transactional_id)


class MemoryOffsetsLog:
    """A read_committed replay of one topic of a `MemoryLog` into an `OffsetsSnapshot` that
    catches up from where it stopped (`ports.OffsetsLog`, as `storage.offsets.OffsetsTopicView`)."""

    def __init__(self, log: MemoryLog, topic: str) -> None:
        self.log = log
        self.topic = topic
        self.snapshot = OffsetsSnapshot()
        self._positions: dict[int, int] = {}
        self.reads = 0
        self.closed = False

    @property
    def positions(self) -> dict[int, int]:
        """Next offset to read per partition of the topic."""
        return self._positions

    @positions.setter
    def positions(self, positions: dict[int, int]) -> None:
        self._positions = dict(positions)

    def read_new(
        self,
        partitions: Iterable[int] | None = None,
        timeout_s: float = 60.0,
        wait_for_open_transactions: bool = True,
    ) -> Sequence[ConsumedRecord]:
        """The records committed since the last read, applied to `snapshot`: up to the high
        watermark, or only to the last stable offsets unless `wait_for_open_transactions`.
        Nobody ends a transaction while this waits, so waiting for one raises
        `KafkaTimeoutError` at once."""
        self.reads += 1
        count = self.log.partitions(self.topic)
        wanted = range(count) if partitions is None else sorted(set(partitions) & set(range(count)))
        records: list[ConsumedRecord] = []
        for partition in wanted:
            stable = self.log.last_stable_offset(self.topic, partition)
            if wait_for_open_transactions and stable < self.log.high_watermark(
                self.topic, partition
            ):
                raise KafkaTimeoutError(
                    f"a transaction on {self.topic}-{partition} stayed open for {timeout_s:g}s"
                )
            start = self._positions.get(partition, 0)
            if stable <= start:
                continue
            records += self.log.read(self.topic, partition, start, stable)
            self._positions[partition] = stable
        for record in records:
            if record.key is not None:
                self.snapshot.apply(record.key, record.value)
        return records

    def close(self) -> None:
        """Nothing to release (a later read works as before)."""
        self.closed = True


class ManualClock:
    """A monotonic clock (`ports.Clock`) that moves only by `advance`."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def monotonic(self) -> float:
        """The current time."""
        return self.now

    def advance(self, seconds: float) -> None:
        """Move the time on by `seconds`."""
        self.now += seconds


class MemoryTaskClients:
    """A source task's clients on a `MemoryLog` (`source.task_clients.SourceTaskClients`): its
    producer, the mirror producer, the offsets log and the config store, and a `ManualClock`.
    `producers` lists every producer built, oldest first."""

    def __init__(
        self,
        log: MemoryLog,
        config_store: ConfigStore | None = None,
        clock: ManualClock | None = None,
    ) -> None:
        self.log = log
        self._config_store = config_store
        self.clock = clock if clock is not None else ManualClock()
        self.producers: list[MemoryProducer] = []
        self.offsets_logs: list[MemoryOffsetsLog] = []

    def config_store(self, topic: str, group_id: str) -> ConfigStore:
        """The config store given (a plan naming a config topic needs one)."""
        if self._config_store is None:
            raise LookupError(f"no config store for config topic {topic!r} was given")
        return self._config_store

    def task_producer(
        self, transactional_id: str | None, on_delivery: DeliveryCallback
    ) -> MemoryProducer:
        """The task's producer: transactional (claiming `transactional_id`) or idempotent."""
        producer = MemoryProducer(self.log, transactional_id, on_delivery)
        self.producers.append(producer)
        return producer

    def mirror_producer(self) -> MemoryProducer:
        """An idempotent producer for the mirrored offsets."""
        producer = MemoryProducer(self.log)
        self.producers.append(producer)
        return producer

    def offsets_log(self, topic: str) -> MemoryOffsetsLog:
        """A fresh replay of `topic`."""
        view = MemoryOffsetsLog(self.log, topic)
        self.offsets_logs.append(view)
        return view
