"""The driver's questions to a Kafka cluster about topics it reads: partitions, last stable and
earliest offsets (Admin ListOffsets, read_committed). A consumer group's offsets are
`kafka.group_offsets`'.

Every request is retried while leadership moves (`kafka.retry`); refusals name the missing ACL.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from confluent_kafka import IsolationLevel, KafkaError, KafkaException, TopicCollection
from confluent_kafka import TopicPartition as KafkaTopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec

from spark_eos_connect.errors import EosConnectError
from spark_eos_connect.kafka.client_settings import with_client_defaults
from spark_eos_connect.kafka.clients import OFFSETS_REQUEST_TIMEOUT_S, listed_offsets
from spark_eos_connect.kafka.errors import missing_acl, needs_new_metadata
from spark_eos_connect.kafka.retry import call_with_retries

log = logging.getLogger(__name__)

TP = tuple[str, int]
"""(topic, partition)."""


def _failed(error: KafkaException, what: str) -> EosConnectError:
    return EosConnectError(f"{what} failed: {error}")


class TopicOffsets:
    """Driver: the partitions and watermarks of topics through one AdminClient."""

    def __init__(
        self, kafka: Mapping[str, Any], timeout_s: float = 30.0, admin: Any = None
    ) -> None:
        """`admin` is the AdminClient to start with (one for `kafka` by default)."""
        self.timeout_s = timeout_s
        self.kafka = dict(kafka)
        self.admin = admin if admin is not None else AdminClient(with_client_defaults(self.kafka))

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
