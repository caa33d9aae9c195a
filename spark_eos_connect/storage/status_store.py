"""The status topic in Kafka: connector and task states (formats in `protocol.status_records`).

Records are keyed ``status-connector-<name>`` / ``status-task-<name>-<n>`` and sent to the
partition Java's default partitioner picks for the key, so that a Connect worker sharing the topic
keeps every key's records in one partition, in order. Writes go through an idempotent producer;
a write the broker's ACLs refuse fails naming Write on the status topic.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Mapping
from typing import Any

from spark_eos_connect.errors import EosConnectError
from spark_eos_connect.kafka.clients import (
    KafkaTimeoutError,
    admin_client,
    partition_count,
    read_to_end,
)
from spark_eos_connect.kafka.errors import (
    PRODUCE_ERRORS,
    KafkaAuthorizationError,
    describe_client,
    is_fatal_placeholder,
    kafka_error_in,
    missing_acl,
)
from spark_eos_connect.kafka.internal_topics import InternalTopic, ensure_internal_topic
from spark_eos_connect.kafka.producers import idempotent_producer, produce
from spark_eos_connect.protocol.murmur2 import default_partition
from spark_eos_connect.protocol.status_records import (
    StatusSnapshot,
    StatusWrites,
)

STATUS_REPLICATION_OPTION = "status.storage.replication.factor"
DEFAULT_PARTITIONS = 5

log = logging.getLogger(__name__)


class StatusStoreError(EosConnectError):
    """The status topic could not be read or written."""


class KafkaStatusStore(StatusWrites):
    """The status topic `topic`, read and written through `kafka` (librdkafka settings)."""

    def __init__(self, kafka: Mapping[str, Any], topic: str) -> None:
        self.kafka = dict(kafka)
        self.topic = topic
        self._lock = threading.Lock()
        self._snapshot = StatusSnapshot()
        self._positions: dict[int, int] = {}
        self._partitions = 0
        self._producer: Any = None
        self._fatal_error: Any = None
        """The fatal error the current producer's `error_cb` received, if any."""

    def ensure_topic(
        self,
        partitions: int = DEFAULT_PARTITIONS,
        timeout_s: float = 30.0,
        replication_factor: int | None = None,
    ) -> bool:
        """Create the compacted topic (5 partitions by default; `status.storage.replication.
        factor` `replication_factor`, None for Connect's default) unless it exists."""
        spec = InternalTopic(self.topic, partitions, STATUS_REPLICATION_OPTION, replication_factor)
        ensured = ensure_internal_topic(self.kafka, spec, timeout_s)
        self._partitions = ensured.partitions
        return ensured.created

    def read_to_end(self, timeout_s: float = 30.0) -> StatusSnapshot:
        """Catch up with the topic's end; the live snapshot."""
        with self._lock:
            start = {(self.topic, p): o for p, o in self._positions.items()}
            try:
                records = read_to_end(self.kafka, [self.topic], "read_committed", timeout_s, start)
            except KafkaTimeoutError as exc:
                raise StatusStoreError(
                    f"Could not read the status topic {self.topic!r} to its end within "
                    f"{timeout_s:g}s: {exc}"
                ) from exc
            for record in records:
                key = None if record.key is None else bytes(record.key).decode("utf-8", "replace")
                if key is None:
                    self._snapshot.skipped += 1
                else:
                    self._snapshot.apply(key, record.value, record.timestamp)
                self._positions[record.partition] = record.offset + 1
            return self._snapshot

    def close(self) -> None:
        """Flush and drop the producer (a producer in a fatal state is dropped as it is)."""
        with self._lock:
            producer, self._producer = self._producer, None
            if producer is not None:
                try:
                    producer.flush(10)
                except PRODUCE_ERRORS as error:
                    log.warning("status topic producer closed after a fatal error: %s", error)

    def _send(self, key: str, value: bytes | None, timeout_s: float = 30.0) -> None:
        with self._lock:
            if self._partitions <= 0:
                self._partitions = partition_count(admin_client(self.kafka), self.topic)
                if self._partitions <= 0:
                    raise StatusStoreError(f"Status topic {self.topic!r} does not exist")
            if self._producer is None:
                self._fatal_error = None
                self._producer = idempotent_producer({**self.kafka, "error_cb": self._client_error})
            errors: list[Any] = []  # librdkafka's KafkaError per refused delivery

            def delivered(error: Any, message: Any) -> None:
                if error is not None:
                    errors.append(error)

            key_bytes = key.encode("utf-8")
            partition = default_partition(key_bytes, self._partitions)
            try:
                produce(
                    self._producer,
                    self.topic,
                    value,
                    key_bytes,
                    partition=partition,
                    on_delivery=delivered,
                )
                remaining = self._producer.flush(timeout_s)
            except PRODUCE_ERRORS as exc:  # SystemError among them: see `_failed`
                producer, self._producer = self._producer, None  # a fatal error leaves it unusable
                raise self._failed(key, exc, producer) from exc
            if remaining or errors:
                fatal = self._fatal_of(self._producer)
                if fatal is not None or remaining:  # unusable, or a record may still land
                    producer, self._producer = self._producer, None
                    with contextlib.suppress(*PRODUCE_ERRORS):
                        producer.purge()
                if fatal is not None:
                    raise self._failed(key, fatal)
                denied = missing_acl(errors[0], "Write", self.topic, self.kafka) if errors else None
                if denied is not None:
                    raise denied
                reason = "; ".join(map(str, errors)) or f"not delivered within {timeout_s:g}s"
                raise StatusStoreError(
                    f"Writing {key} to status topic {self.topic!r} failed: {reason}"
                )

    def _client_error(self, error: Any) -> None:
        """The producer's `error_cb`: keep a fatal error passed here (others are transient;
        librdkafka retries them)."""
        if error.fatal():
            self._fatal_error = error
        else:
            log.debug("status topic producer: %s", error)

    def _fatal_of(self, producer: Any) -> Any:
        """The fatal error `producer` is in, or None. Its delivery reports do not say
        (librdkafka purges the queued records, which reports no fatal error); confluent-kafka
        raises the error from the poll that serves it, or passes it to `error_cb`."""
        try:
            producer.poll(0)
        except PRODUCE_ERRORS as raised:
            self._fatal_error = kafka_error_in(raised) or self._fatal_error
        return self._fatal_error

    def _failed(self, key: str, exc: BaseException | Any, producer: Any = None) -> EosConnectError:
        """The error to raise when producing or flushing `key` raised `exc` (or when the
        producer turned out to be in the fatal state `exc`, a `KafkaError`).

        An idempotent producer needs a producer id first; with Write on no topic at all (and no
        IdempotentWrite on the cluster) the broker refuses it (KIP-679) and librdkafka reports a
        fatal CLUSTER_AUTHORIZATION_FAILED, raised from `flush`, where confluent-kafka turns it
        into the cause of a SystemError when a delivery callback runs at the same time. That
        refusal, like a refused topic, names Write on the status topic, the ACL table's row.
        When that fatal error came before `produce`, the call raises only `_FATAL`, and the
        error itself comes from `producer` (`_fatal_of`)."""
        error = kafka_error_in(exc)
        if is_fatal_placeholder(error) and producer is not None:
            error = self._fatal_of(producer) or error
        name = error.name() if error is not None else None
        if name == "CLUSTER_AUTHORIZATION_FAILED":
            return KafkaAuthorizationError(
                f"Kafka denied {describe_client(self.kafka)}: it needs Write on Topic "
                f"{self.topic!r} (Kafka refused the status topic's idempotent producer an id, "
                f"as it does when the principal may write no topic at all: {error})"
            )
        denied = missing_acl(error, "Write", self.topic, self.kafka) if error else None
        return denied or StatusStoreError(
            f"Writing {key} to status topic {self.topic!r} failed: {error or exc}"
        )
