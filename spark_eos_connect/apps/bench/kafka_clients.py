"""The benchmark's own Kafka clients: a plain producer spreading values over
partitions, a read_committed consumer of a whole topic from its beginning, and a sampler of the
last stable offsets. The bench's counting and timing stay in `apps.bench.kafka_io`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from confluent_kafka import OFFSET_BEGINNING, Consumer, IsolationLevel, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec

from spark_eos_connect.kafka.clients import watermarks


def produce_spread(
    kafka: Mapping[str, Any], topic: str, values: Iterable[bytes], partitions: int
) -> int:
    """Produce `values` (no transaction), value number i to partition i mod `partitions`,
    waiting while the producer's queue is full; the number left undelivered after 120 s."""
    producer = Producer(
        {**kafka, "linger.ms": 50, "batch.size": 1_000_000, "enable.idempotence": True}
    )
    for number, value in enumerate(values):
        while True:
            try:
                producer.produce(topic, value, partition=number % partitions)
                break
            except BufferError:
                producer.poll(0.05)
    return int(producer.flush(120))


class WholeTopicConsumer:
    """A read_committed consumer assigned every partition of a topic (0 to `partitions` - 1)
    from the beginning, in a group of its own that it never commits to."""

    def __init__(self, kafka: Mapping[str, Any], topic: str, partitions: int, group: str) -> None:
        self.consumer = Consumer(
            {
                **kafka,
                "group.id": group,
                "enable.auto.commit": False,
                "isolation.level": "read_committed",
                "fetch.max.bytes": 64 * 1024 * 1024,
            }
        )
        self.partitions = [TopicPartition(topic, p) for p in range(partitions)]
        self.consumer.assign(
            [TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)]
        )

    def consume(self, max_records: int, timeout_s: float) -> list[Any]:
        """Up to `max_records` messages, waiting up to `timeout_s` (librdkafka's `consume`)."""
        return self.consumer.consume(num_messages=max_records, timeout=timeout_s)

    def watermarks(self, timeout_s: float) -> dict[int, tuple[int, int]]:
        """(low, high) watermarks of each partition."""
        return {tp.partition: watermarks(self.consumer, tp, timeout_s) for tp in self.partitions}

    def behind(self, ends: Mapping[int, int]) -> list[Any]:
        """The partitions (with their positions) not yet at their end in `ends` (0 if absent)."""
        positions = self.consumer.position(self.partitions)
        return [tp for tp in positions if tp.offset < ends.get(tp.partition, 0)]

    def close(self) -> None:
        """Leave."""
        self.consumer.close()


class StableOffsets:
    """Asks for a topic's last stable offsets (what read_committed consumers may read up to)."""

    def __init__(self, kafka: Mapping[str, Any], topic: str, partitions: int) -> None:
        self.admin = AdminClient(dict(kafka))
        self.requests = {TopicPartition(topic, p): OffsetSpec.latest() for p in range(partitions)}

    def ask(self, timeout_s: float = 10) -> dict[int, int]:
        """The last stable offset of each partition, as one ListOffsets request answers."""
        futures = self.admin.list_offsets(
            self.requests, isolation_level=IsolationLevel.READ_COMMITTED, request_timeout=timeout_s
        )
        return {tp.partition: future.result().offset for tp, future in futures.items()}
