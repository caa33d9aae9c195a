"""The driver's questions to a Kafka cluster about topics it reads: partitions, last stable and
earliest offsets (Admin ListOffsets, read_committed), a consumer group's committed offsets, and
the group commits (through consumers outside the group, `kafka.group_offsets`).

Every request is retried while leadership moves (`kafka.retry`); refusals name the missing ACL.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from confluent_kafka import (
    ConsumerGroupTopicPartitions,
    IsolationLevel,
    KafkaError,
    KafkaException,
    TopicCollection,
)
from confluent_kafka import TopicPartition as KafkaTopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec

from spark_eos_connect.errors import EosConnectError
from spark_eos_connect.kafka.client_settings import with_client_defaults
from spark_eos_connect.kafka.clients import OFFSETS_REQUEST_TIMEOUT_S, listed_offsets
from spark_eos_connect.kafka.errors import (
    is_no_group,
    is_topic_denied,
    missing_acl,
    needs_new_metadata,
)
from spark_eos_connect.kafka.group_offsets import (
    OutsiderFactory,
    commit_group_offsets,
    outsider_consumer,
)
from spark_eos_connect.kafka.retry import call_with_retries

log = logging.getLogger(__name__)

TP = tuple[str, int]
"""(topic, partition)."""


def _failed(error: KafkaException, what: str) -> EosConnectError:
    return EosConnectError(f"{what} failed: {error}")


class TopicOffsets:
    """Driver: partitions, watermarks and consumer group offsets through one AdminClient; the
    group commits through consumers outside the group."""

    def __init__(
        self,
        kafka: Mapping[str, Any],
        timeout_s: float = 30.0,
        outsider: OutsiderFactory = outsider_consumer,
        admin: Any = None,
    ) -> None:
        """`outsider` makes the consumers that commit a group's offsets
        (`kafka.group_offsets`); `admin` is the AdminClient to start with (one for `kafka` by
        default)."""
        self.timeout_s = timeout_s
        self.kafka = dict(kafka)
        self.admin = admin if admin is not None else AdminClient(with_client_defaults(self.kafka))
        self._outsider = outsider

    def _renew_if_stale(self, error: KafkaError | None) -> None:
        """A new admin client, with fresh metadata, when `error` says the cached is old."""
        if needs_new_metadata(error):
            self.admin = AdminClient(with_client_defaults(self.kafka))

    def topic_partitions(
        self, subscribed: Callable[[str], bool], named: Sequence[str] | None = None
    ) -> list[TP]:
        """Every partition of the topics that exist now and `subscribed` accepts.

        The broker leaves the topics the principal may not Describe out of the topic list. A
        topic of `named` (the topics asked for by name) missing from it is asked about by name:
        if the broker refuses it, this fails naming the ACL (else it does not exist yet and is
        read once it does). Without `named` (a pattern) a topic the principal cannot see just
        does not match, as in Kafka's own pattern subscription.
        """
        topics = call_with_retries(
            lambda limit: self.admin.list_topics(timeout=limit).topics,
            "asking the cluster for its topics",
            self.timeout_s,
        )
        found: list[TP] = []
        for name, metadata in topics.items():
            if metadata.error is None and subscribed(name):
                found += [(name, p) for p in metadata.partitions]
        if named is not None:
            self._check_visible([t for t in named if t not in topics])
        return sorted(found)

    def _check_visible(self, topics: list[str]) -> None:
        """Raise naming the ACL when the broker refuses to describe one of `topics`; any other
        answer (it does not exist yet, ...) leaves it out of this micro-batch as before.

        `describe_topics`, unlike a metadata request for the topic (`list_topics(topic=...)`),
        never has the broker auto-create a topic that does not exist."""
        if not topics:
            return
        futures = self.admin.describe_topics(
            TopicCollection(topics), request_timeout=self.timeout_s
        )
        for topic, future in futures.items():
            try:
                future.result()
            except KafkaException as error:
                denied = missing_acl(error, "Read and Describe", topic, self.kafka)
                if denied is not None:
                    raise denied from None
                log.debug("subscribed topic %s is not readable yet: %s", topic, error)

    def _list_offsets(self, tps: list[TP], spec: OffsetSpec) -> dict[TP, int]:
        if not tps:
            return {}
        request = {KafkaTopicPartition(t, p): spec for t, p in tps}

        def listed(limit: float) -> dict[TP, int]:
            return listed_offsets(self.admin, request, IsolationLevel.READ_COMMITTED, limit)

        try:
            return call_with_retries(
                listed,
                "listing offsets",
                self.timeout_s,
                OFFSETS_REQUEST_TIMEOUT_S,
                before_retry=self._renew_if_stale,
            )
        except KafkaException as error:
            raise _failed(error, f"listing offsets of {sorted(tps)}") from None

    def last_stable_offsets(self, tps: list[TP]) -> dict[TP, int]:
        """The read_committed end of each partition: records below it are decided."""
        return self._list_offsets(tps, OffsetSpec.latest())

    def earliest_offsets(self, tps: list[TP]) -> dict[TP, int]:
        """The first offset still present in each partition."""
        return self._list_offsets(tps, OffsetSpec.earliest())

    def group_offsets(self, group: str) -> dict[TP, int]:
        """The consumer group's committed offsets (next offset to read), `{}` if none (also
        when the group does not exist, e.g. after its offsets were reset). Retried while the
        group's coordinator is not ready (a fresh broker loading its offsets topic), up to the
        client timeout.

        Read once when a query starts, with the Admin API: unlike a consumer's OffsetFetch
        (which only times out), it names a missing Read on the group at once. The commits after
        every micro-batch go through a consumer (`commit_group_offsets`)."""

        def listed_offsets(limit: float) -> Any:
            futures = self.admin.list_consumer_group_offsets(
                [ConsumerGroupTopicPartitions(group)], request_timeout=limit
            )
            return futures[group].result()

        try:
            listed = call_with_retries(
                listed_offsets,
                f"reading offsets of consumer group {group}",
                self.timeout_s,
                before_retry=self._renew_if_stale,
            )
        except KafkaException as error:
            if is_no_group(error):
                return {}
            denied = missing_acl(error, "Read", group, self.kafka)
            raise denied or _failed(error, f"reading offsets of consumer group {group}") from None
        return {
            (tp.topic, tp.partition): tp.offset
            for tp in listed.topic_partitions or []
            if tp.offset >= 0
        }

    def commit_group_offsets(self, group: str, offsets: Mapping[TP, int]) -> None:
        """Set the consumer group's offsets (the group must have no active members).

        A partition the broker refuses fails the commit (the request as a whole may succeed
        with per-partition errors, e.g. Describe but not Read on the group)."""
        try:
            answer = commit_group_offsets(
                self.kafka, group, offsets, self.timeout_s, self._outsider
            )
        except KafkaException as error:
            raise self._commit_failed(group, error, str(error)) from None
        refused = [tp for tp in answer if tp.error is not None]
        if refused:
            detail = "; ".join(f"{tp.topic}-{tp.partition}: {tp.error}" for tp in refused)
            raise self._commit_failed(group, refused[0].error, detail, refused[0].topic)

    def _commit_failed(
        self, group: str, error: Any, detail: str, topic: str | None = None
    ) -> EosConnectError:
        """The error of a refused group commit: a missing ACL is named (Read on the group, or
        on the topic when the topic was refused)."""
        refused_topic = is_topic_denied(error)
        denied = missing_acl(error, "Read", topic if topic and refused_topic else group, self.kafka)
        return denied or EosConnectError(
            f"committing offsets to consumer group {group} failed: {detail} (a group with "
            "active members, e.g. a running Kafka Connect worker, cannot be written)"
        )
