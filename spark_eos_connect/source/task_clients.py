"""What a live source task builds to reach the world, behind one factory: its producer, the
mirror producer, the offsets log, the config store and the clock (Kafka Connect's worker
tasks take these collaborators in their constructors).

`KafkaTaskClients` builds the Kafka ones, the default; `storage.memory_log.MemoryTaskClients`
builds in-memory twins, on which the exactly-once loop is unit-tested without a broker. Nothing
is built before it is asked for.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any, Protocol

from spark_eos_connect.kafka.producers import idempotent_producer, transactional_producer
from spark_eos_connect.ports import (
    Clock,
    ConfigStore,
    DeliveryCallback,
    OffsetsLog,
    TransactionalProducer,
)
from spark_eos_connect.storage.config_store import KafkaConfigStore
from spark_eos_connect.storage.offsets import OffsetsTopicView


class SourceTaskClients(Protocol):
    """The collaborators of a `LiveSourceTask`, built when the task needs them."""

    @property
    def clock(self) -> Clock:
        """The time the task's poll budget and transaction interval are measured in."""
        ...

    def config_store(self, topic: str, group_id: str) -> ConfigStore:
        """The config topic `topic` of the Connect cluster `group_id` (read side)."""
        ...

    def task_producer(
        self, transactional_id: str | None, on_delivery: DeliveryCallback
    ) -> TransactionalProducer:
        """The task's producer, reporting deliveries to `on_delivery`: transactional, having
        claimed `transactional_id` (every older producer of it fenced), or idempotent for
        None."""
        ...

    def mirror_producer(self) -> TransactionalProducer:
        """An idempotent producer mirroring offsets to the global offsets topic."""
        ...

    def offsets_log(self, topic: str) -> OffsetsLog:
        """A read_committed replay of the offsets topic `topic`."""
        ...


class MonotonicClock:
    """`time.monotonic` (`ports.Clock`)."""

    def monotonic(self) -> float:
        """Seconds of a clock that never goes back."""
        return time.monotonic()


class KafkaTaskClients:
    """A source task's clients on the Kafka cluster reached through `kafka` (librdkafka
    settings, references resolved)."""

    def __init__(self, kafka: Mapping[str, Any]) -> None:
        self.kafka = dict(kafka)
        self.clock: Clock = MonotonicClock()

    def config_store(self, topic: str, group_id: str) -> ConfigStore:
        """A `KafkaConfigStore` of `topic`."""
        return KafkaConfigStore(self.kafka, topic, group_id)

    def task_producer(
        self, transactional_id: str | None, on_delivery: DeliveryCallback
    ) -> TransactionalProducer:
        """`kafka.producers.transactional_producer` (after `init_transactions`), or
        `idempotent_producer` for None."""
        settings = {**self.kafka, "on_delivery": on_delivery}
        if transactional_id is not None:
            return transactional_producer(settings, transactional_id)
        return idempotent_producer(settings)

    def mirror_producer(self) -> TransactionalProducer:
        """An `idempotent_producer`."""
        return idempotent_producer(self.kafka)

    def offsets_log(self, topic: str) -> OffsetsLog:
        """An `OffsetsTopicView` of `topic`."""
        return OffsetsTopicView(self.kafka, topic)
