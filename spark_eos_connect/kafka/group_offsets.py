"""A consumer group's offsets on a Kafka cluster: the one module that reads, commits, alters
and deletes them (the sink connectors' groups ``connect-<name>``; `protocol.sink_groups` has
the pure rules: the group's name, what tasks may commit).

Who uses it: the sink reader, where a new query starts (`committed`); a live sink task opening
partitions (`committed`); the driver after each micro-batch, sink and Delta queries alike
(`commit`); the herder's KIP-875 offsets endpoints and the CLI (`committed`, `alter`,
`delete`: the `GroupOffsets` port).

Two paths, on purpose. Reads, alterations and deletions use the Admin API: a read names a
missing Read on the group at once, where a consumer's OffsetFetch only times out. The commit
after every micro-batch uses a consumer that never joins the group: the Admin API's
AlterConsumerGroupOffsets takes librdkafka's admin coordinator path, which aborts the whole
process when the coordinator's connection drops in the middle of a request (the assertion
`eonce->refcnt > 0` in `rd_kafka_enq_once_del_source_return`: a broker killed under a sink
query's commit took the query down with it); a consumer's OffsetCommit waits for the group's
new coordinator instead. Either way a change from outside the group is refused while the group
has members (UNKNOWN_MEMBER_ID).

Requests are retried while the group's coordinator moves or loads (`kafka.retry`). Failures
raise `ConsumerGroupError` (`ConsumerGroupRefusedError` when the request is at fault), or
`KafkaAuthorizationError` naming the ACL the principal lacks.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from confluent_kafka import Consumer, ConsumerGroupTopicPartitions, KafkaError, KafkaException
from confluent_kafka import TopicPartition as KafkaTopicPartition

from spark_eos_connect.api.sink import TopicPartition
from spark_eos_connect.kafka.client_settings import with_client_defaults
from spark_eos_connect.kafka.clients import admin_client
from spark_eos_connect.kafka.errors import (
    KafkaAuthorizationError,
    error_code,
    is_no_group,
    is_topic_denied,
    missing_acl,
    needs_new_metadata,
)
from spark_eos_connect.kafka.group_errors import (
    ConsumerGroupError,
    ConsumerGroupRefusedError,
    group_in_use,
)
from spark_eos_connect.kafka.retry import call_with_retries

TP = tuple[str, int]
"""(topic, partition)."""

OutsiderFactory = Callable[[Mapping[str, Any], str], Any]
"""`(client settings, group) -> consumer` with `commit` and `close`."""


def outsider_consumer(kafka: Mapping[str, Any], group: str) -> Consumer:
    """A consumer of `group` that never subscribes: it only commits offsets."""
    return Consumer(
        {
            **with_client_defaults(kafka),
            "group.id": group,
            "enable.auto.commit": False,
            "enable.auto.offset.store": False,
        }
    )


def _refuse_unknown_partitions(connector: str, refused: list[KafkaTopicPartition]) -> None:
    """`ConsumerGroupRefusedError` naming the partitions the broker does not know."""
    unknown = [
        f"{tp.topic}-{tp.partition}"
        for tp in refused
        if tp.error is not None and tp.error.code() == KafkaError.UNKNOWN_TOPIC_OR_PART
    ]
    if unknown:
        raise ConsumerGroupRefusedError(
            f"The offsets of sink connector {connector} cannot be altered: these topic "
            f"partitions do not exist: {', '.join(unknown)}"
        )


class KafkaGroupOffsets:
    """The consumer groups of the cluster reached through `kafka`: committed offsets, the
    driver's commits, and KIP-875's alterations and deletions (the `GroupOffsets` port)."""

    def __init__(
        self,
        kafka: Mapping[str, Any],
        timeout_s: float = 30.0,
        admin: Any = None,
        outsider: OutsiderFactory = outsider_consumer,
    ) -> None:
        """`admin`: the AdminClient to start with (one for `kafka`, made when first needed, by
        default); `outsider` makes the consumers that commit (`outsider_consumer`)."""
        self._kafka = dict(kafka)  # also names the principal when an ACL is missing
        self._admin = admin
        self._timeout_s = timeout_s
        self._outsider = outsider

    @property
    def admin(self) -> Any:
        """The AdminClient of the Admin API requests."""
        if self._admin is None:
            self._admin = admin_client(self._kafka)
        return self._admin

    def _renew_if_stale(self, error: KafkaError | None) -> None:
        """A new admin client, with fresh metadata, when `error` says the cached is old."""
        if needs_new_metadata(error):
            self._admin = admin_client(self._kafka)

    def _ask(
        self,
        request: str,
        argument: Any,
        group: str,
        what: str,
        before_retry: Callable[[KafkaError | None], None] | None = None,
    ) -> Any:
        """The result for `group` of the Admin API's `request` (the name of its method, whose
        futures are by group) with `argument`, retried while it fails for a passing reason (a
        group coordinator moving or loading) up to the timeout."""

        def send(limit: float) -> Any:
            return getattr(self.admin, request)(argument, request_timeout=limit)[group].result()

        return call_with_retries(send, what, self._timeout_s, before_retry=before_retry)

    def _failed(
        self, error: KafkaException, operation: str, group: str, message: str
    ) -> KafkaAuthorizationError | ConsumerGroupError:
        """The error of a failed Admin request: the missing ACL (`operation` on the group)
        named, else `ConsumerGroupError(message)`."""
        return missing_acl(error, operation, group, self._kafka) or ConsumerGroupError(message)

    # -- committed offsets ---------------------------------------------------------------------

    def committed(self, group: str) -> dict[TopicPartition, int]:
        """The group's committed offsets (the next offset to read), empty when it has none
        (also when the group does not exist, e.g. after its offsets were reset)."""
        request = [ConsumerGroupTopicPartitions(group)]
        try:
            result = self._ask(
                "list_consumer_group_offsets",
                request,
                group,
                f"listing the offsets of consumer group {group}",
                before_retry=self._renew_if_stale,
            )
        except KafkaException as exc:
            if is_no_group(exc):
                return {}
            message = f"Could not list the offsets of consumer group {group}: {exc}"
            raise self._failed(exc, "Read", group, message) from exc
        return {
            TopicPartition(tp.topic, tp.partition): tp.offset
            for tp in result.topic_partitions or []
            if tp.offset >= 0 and tp.error is None
        }

    def commit(self, group: str, offsets: Mapping[TP, int]) -> None:
        """The driver's commit after a micro-batch: `offsets` to `group`, through a consumer
        outside the group (the group must have no active members). Nothing to commit asks
        nothing.

        A partition the broker refuses fails the commit (the request as a whole may succeed
        with per-partition errors, e.g. Describe but not Read on the group)."""
        if not offsets:
            return
        request = [KafkaTopicPartition(t, p, int(o)) for (t, p), o in sorted(offsets.items())]
        consumer = self._outsider(self._kafka, group)
        try:
            answer: list[KafkaTopicPartition] = call_with_retries(
                lambda _limit: consumer.commit(offsets=request, asynchronous=False),
                f"committing offsets to consumer group {group}",
                self._timeout_s,
            )
        except KafkaException as error:
            raise self._commit_failed(group, error, str(error)) from None
        finally:
            consumer.close()
        refused = [tp for tp in answer if tp.error is not None]
        if refused:
            detail = "; ".join(f"{tp.topic}-{tp.partition}: {tp.error}" for tp in refused)
            raise self._commit_failed(group, refused[0].error, detail, refused[0].topic)

    def _commit_failed(
        self, group: str, error: Any, detail: str, topic: str | None = None
    ) -> ConsumerGroupError | KafkaAuthorizationError:
        """The error of a refused commit: a missing ACL is named (`_denied`)."""
        return self._denied(group, error, topic) or ConsumerGroupError(
            f"committing offsets to consumer group {group} failed: {detail} (a group with "
            "active members, e.g. a running Kafka Connect worker, cannot be written)"
        )

    def _denied(self, group: str, error: Any, topic: str | None) -> KafkaAuthorizationError | None:
        """The error naming the ACL a refused commit or alteration lacks: Read on the group,
        or Read on `topic` when the broker refused the topic."""
        refused_topic = topic is not None and is_topic_denied(error)
        return missing_acl(error, "Read", topic if topic and refused_topic else group, self._kafka)

    # -- KIP-875: alter, reset -----------------------------------------------------------------

    def active_members(self, group: str) -> int:
        """How many members the group has now (0 when it is empty or does not exist)."""
        try:
            description = self._ask(
                "describe_consumer_groups", [group], group, f"describing consumer group {group}"
            )
        except KafkaException as exc:
            if is_no_group(exc):
                return 0
            raise ConsumerGroupError(f"Could not describe consumer group {group}: {exc}") from exc
        return len(description.members or [])

    def alter(self, connector: str, group: str, offsets: Mapping[TopicPartition, int]) -> None:
        """Commit `offsets` for the group through the Admin API; refused while the group has
        active members. Without Read on the group the broker refuses each partition: the error
        names the ACL."""
        self.require_inactive(connector, group, "altered")
        request = [
            ConsumerGroupTopicPartitions(
                group,
                [
                    KafkaTopicPartition(tp.topic, tp.partition, offset)
                    for tp, offset in offsets.items()
                ],
            )
        ]
        try:
            result = self._ask(
                "alter_consumer_group_offsets",
                request,
                group,
                f"altering the offsets of consumer group {group}",
            )
        except KafkaException as exc:
            if error_code(exc) in (
                KafkaError.UNKNOWN_MEMBER_ID,
                KafkaError.GROUP_SUBSCRIBED_TO_TOPIC,
            ):
                raise group_in_use(connector, group, "altered") from exc
            message = f"Failed to alter consumer group offsets for connector {connector}: {exc}"
            raise self._failed(exc, "Read", group, message) from exc
        refused = [tp for tp in result.topic_partitions or [] if tp.error]
        denied = self._denied(group, refused[0].error, refused[0].topic) if refused else None
        if denied is not None:
            raise denied
        _refuse_unknown_partitions(connector, refused)
        failed = [f"{tp.topic}-{tp.partition}: {tp.error}" for tp in refused]
        if failed:
            raise ConsumerGroupError(
                f"Failed to alter consumer group offsets for connector {connector}: "
                + "; ".join(failed)
            )

    def delete(self, connector: str, group: str) -> None:
        """Delete the group (idempotent); refused while it has active members; without Delete
        on the group the error names the ACL."""
        self.require_inactive(connector, group, "reset")
        try:
            self._ask("delete_consumer_groups", [group], group, f"deleting consumer group {group}")
        except KafkaException as exc:
            if is_no_group(exc):
                return
            if error_code(exc) == KafkaError.NON_EMPTY_GROUP:
                raise group_in_use(connector, group, "reset") from exc
            message = (
                f"Failed to reset consumer group offsets for sink connector {connector}: {exc}"
            )
            raise self._failed(exc, "Delete", group, message) from exc

    def require_inactive(self, connector: str, group: str, action: str) -> None:
        """`ConsumerGroupRefusedError` if the group has members (`action`: "altered" or
        "reset")."""
        if self.active_members(group):
            raise group_in_use(connector, group, action)
