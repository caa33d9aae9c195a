"""A source connector's offsets in the worker's global offsets topic and its dedicated one.

Reads replay both topics (read_committed, waiting for open transactions); the dedicated topic's
offsets take precedence. Writes follow KIP-875: with exactly-once support every earlier task
producer ``<group.id>-<connector>-<n>`` is fenced first, then the offsets go to the connector's
primary topic in ONE transaction with id ``<group.id>-<connector>``, and (when a dedicated topic
is used) to the global topic without a transaction.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from spark_eos_connect.herder.errors import HerderError
from spark_eos_connect.kafka.clients import KafkaTimeoutError, admin_client, partition_count
from spark_eos_connect.kafka.producers import (
    fence_transactional_id,
    idempotent_producer,
    produce,
    transactional_producer,
)
from spark_eos_connect.protocol.offsets_format import partition_key
from spark_eos_connect.storage.offsets import (
    OffsetMessage,
    OffsetsTopicView,
    ensure_offsets_topic,
    offset_messages,
)

log = logging.getLogger(__name__)

Pair = tuple[dict[str, Any], dict[str, Any] | None]


@dataclass(frozen=True)
class OffsetTopics:
    """Where a connector's offsets live: the global topic and an optional dedicated one."""

    global_topic: str
    dedicated: str | None = None

    @property
    def primary(self) -> str:
        """The topic tasks write transactionally: the dedicated one if any."""
        return self.dedicated or self.global_topic

    @property
    def secondary(self) -> str | None:
        """The global topic when a (different) dedicated topic is primary, else None."""
        if self.dedicated and self.dedicated != self.global_topic:
            return self.global_topic
        return None

    def all(self) -> list[str]:
        """Every topic holding the connector's offsets, global first."""
        if self.dedicated and self.secondary:
            return [self.global_topic, self.dedicated]
        return [self.global_topic]


class SourceOffsets:
    """Source offsets of the cluster reached through `kafka` (librdkafka settings)."""

    def __init__(
        self,
        kafka: Mapping[str, Any],
        group_id: str,
        topic_partitions: int,
        exactly_once: bool,
        timeout_s: float = 30.0,
        replication_factor: int | None = None,
    ) -> None:
        self.kafka = dict(kafka)
        self.replication_factor = replication_factor
        self.group_id = group_id
        self.topic_partitions = topic_partitions
        self.exactly_once = exactly_once
        self.timeout_s = timeout_s
        self._views: dict[str, OffsetsTopicView] = {}

    def _view(self, topic: str) -> OffsetsTopicView | None:
        view = self._views.get(topic)
        if view is None:
            if partition_count(admin_client(self.kafka), topic, self.timeout_s) == 0:
                return None
            view = self._views[topic] = OffsetsTopicView(self.kafka, topic)
        try:
            return view.catch_up(timeout_s=self.timeout_s)
        except KafkaTimeoutError as exc:
            raise HerderError(
                f"Could not read offsets topic {topic!r} to its end within {self.timeout_s:g}s: "
                f"{exc}"
            ) from exc

    def per_topic(self, connector: str, topics: OffsetTopics) -> dict[str, dict[str, Pair]]:
        """``{topic: {partition_key: (partition, offset)}}`` for every topic holding offsets."""
        found: dict[str, dict[str, Pair]] = {}
        for topic in topics.all():
            view = self._view(topic)
            found[topic] = {} if view is None else dict(view.snapshot.offsets_for(connector))
        return found

    def read(self, connector: str, topics: OffsetTopics) -> list[tuple[dict[str, Any], Any]]:
        """The connector's offsets; the dedicated topic's win over the global topic's."""
        merged: dict[str, Pair] = {}
        for entries in self.per_topic(connector, topics).values():
            merged.update(entries)  # global first, so the dedicated topic's entries win
        return [(p, o) for p, o in merged.values() if o is not None]

    def partitions(self, connector: str, topics: OffsetTopics) -> list[dict[str, Any]]:
        """Every source partition with an offset in any of the connector's topics."""
        known: dict[str, dict[str, Any]] = {}
        for entries in self.per_topic(connector, topics).values():
            for identity, (partition, _) in entries.items():
                known[identity] = partition
        return [known[identity] for identity in sorted(known)]

    def write(self, connector: str, topics: OffsetTopics, pairs: Sequence[Pair]) -> None:
        """Write `pairs` (None = tombstone) as KIP-875 says; raises `HerderError` on failure.

        Call `fence_tasks` first when exactly-once support is enabled.
        """
        try:
            primary_partitions = ensure_offsets_topic(
                self.kafka, topics.primary, self.topic_partitions, self.replication_factor
            )
            messages = offset_messages(topics.primary, primary_partitions, connector, pairs)
            if self.exactly_once:
                self._write_transaction(f"{self.group_id}-{connector}", messages)
            else:
                self._write_plain(messages)
            if topics.secondary is not None:
                partitions = ensure_offsets_topic(
                    self.kafka, topics.secondary, self.topic_partitions, self.replication_factor
                )
                self._write_plain(offset_messages(topics.secondary, partitions, connector, pairs))
        except HerderError:
            raise
        except Exception as exc:  # librdkafka and topic errors
            raise HerderError(
                f"Failed to modify offsets for source connector {connector}: {exc}"
            ) from exc

    def remaining(
        self, connector: str, topics: OffsetTopics, partitions: Sequence[Mapping[str, Any]]
    ) -> list[dict[str, Any]]:
        """Which of `partitions` still have an offset in any topic (after a reset: none)."""
        wanted = {partition_key(p) for p in partitions}
        left: list[dict[str, Any]] = []
        for entries in self.per_topic(connector, topics).values():
            left += [partition for key, (partition, _) in entries.items() if key in wanted]
        return left

    def fence_tasks(self, connector: str, task_count: int) -> None:
        """Fence task producers ``<group.id>-<connector>-0..task_count-1`` (exactly-once only)."""
        if not self.exactly_once:
            return
        try:
            for task in range(task_count):
                fence_transactional_id(
                    self.kafka, f"{self.group_id}-{connector}-{task}", self.timeout_s
                )
        except Exception as exc:
            raise HerderError(
                f"Could not fence the earlier task producers of connector {connector}: {exc}"
            ) from exc

    def _write_transaction(self, transactional_id: str, messages: list[OffsetMessage]) -> None:
        producer = transactional_producer(self.kafka, transactional_id, self.timeout_s)
        try:
            producer.begin_transaction()
            for message in messages:
                produce(
                    producer, message.topic, message.value, message.key, partition=message.partition
                )
            producer.commit_transaction(self.timeout_s)
        except Exception:
            try:
                producer.abort_transaction(self.timeout_s)
            except Exception as abort_exc:  # fenced or fatal: the broker aborts it anyway
                log.debug("Aborting the offsets transaction failed: %s", abort_exc)
            raise

    def _write_plain(self, messages: list[OffsetMessage]) -> None:
        producer = idempotent_producer(self.kafka)
        errors: list[str] = []

        def delivered(error: Any, message: Any) -> None:
            if error is not None:
                errors.append(str(error))

        for message in messages:
            produce(
                producer,
                message.topic,
                message.value,
                message.key,
                partition=message.partition,
                on_delivery=delivered,
            )
        if producer.flush(self.timeout_s) or errors:
            reason = "; ".join(errors) or f"not delivered within {self.timeout_s:g}s"
            raise HerderError(f"Writing offsets failed: {reason}")
