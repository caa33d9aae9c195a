"""The Kafka side of a sink's dead letter queue: creating its topic and producing to it.

DLQ writes are at least once, as in Kafka Connect: an idempotent producer, flushed before the
offsets of the records it carries are committed. The policy (which records, which headers) is
`runtime.errors_dlq`'s.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from confluent_kafka import KafkaException, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from spark_eos_connect.errors import EosConnectError
from spark_eos_connect.kafka.client_settings import with_client_defaults
from spark_eos_connect.kafka.errors import is_topic_exists
from spark_eos_connect.kafka.producers import idempotent_producer, produce

log = logging.getLogger(__name__)


def create_dlq_topic(
    kafka: Mapping[str, Any],
    topic: str,
    replication_factor: int,
    replication_option: str,
    timeout_s: float = 30.0,
) -> None:
    """Create `topic` (1 partition) if it does not exist. A replication factor above the
    cluster's broker count is capped to it, with a warning naming `replication_option`."""
    admin = AdminClient(with_client_defaults(kafka))
    metadata = admin.list_topics(timeout=timeout_s)
    if topic in metadata.topics:
        return
    replication = replication_factor
    if replication > len(metadata.brokers):
        log.warning(
            "%s=%d but the cluster has %d broker(s); creating %s with replication factor %d",
            replication_option,
            replication,
            len(metadata.brokers),
            topic,
            len(metadata.brokers),
        )
        replication = len(metadata.brokers)
    future = admin.create_topics(
        [NewTopic(topic, num_partitions=1, replication_factor=replication)],
        operation_timeout=timeout_s,
    )[topic]
    try:
        future.result()
    except KafkaException as error:
        if not is_topic_exists(error):
            raise EosConnectError(
                f"could not create dead letter queue topic {topic}: {error}"
            ) from None


class DlqProducer:
    """Writes failed records to a dead letter queue topic; the producer is made on first use.
    `flush` says what could not be written."""

    def __init__(
        self,
        kafka: Mapping[str, Any],
        topic: str,
        make_producer: Callable[[Mapping[str, Any]], Producer] = idempotent_producer,
    ) -> None:
        """`make_producer` builds the producer from `kafka` (an idempotent one)."""
        self.kafka = dict(kafka)
        self.topic = topic
        self._make_producer = make_producer
        self._producer: Producer | None = None
        self.delivery_errors: list[str] = []

    def send(
        self,
        value: bytes | None,
        key: bytes | None,
        headers: Sequence[tuple[str, bytes | None]],
        timestamp_ms: int | None,
    ) -> None:
        """Queue one record (its original key, value, headers and timestamp)."""
        if self._producer is None:
            self._producer = self._make_producer(self.kafka)
        extra: dict[str, Any] = {"headers": list(headers), "on_delivery": self._delivered}
        if timestamp_ms is not None:
            extra["timestamp"] = timestamp_ms
        produce(self._producer, self.topic, value, key, **extra)

    def _delivered(self, error: Any, message: Any) -> None:
        if error is not None:
            self.delivery_errors.append(str(error))

    def flush(self, timeout_s: float) -> int | None:
        """Flush what was sent and let the producer go: the records still undelivered after
        `timeout_s` (None when nothing was ever sent); failed deliveries are in
        `delivery_errors`."""
        producer, self._producer = self._producer, None
        if producer is None:
            return None
        return int(producer.flush(timeout_s))
