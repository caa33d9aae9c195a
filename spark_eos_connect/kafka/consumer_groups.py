"""A sink connector's consumer group ``connect-<name>`` through the Admin API: committed offsets,
alteration, deletion (the `GroupOffsets` port behind KIP-875's sink offsets endpoints).

Requests are retried while the group's coordinator moves or loads. Failures raise
`ConsumerGroupError` (`ConsumerGroupRefusedError` when the request is at fault), or
`KafkaAuthorizationError` naming the ACL the principal lacks.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from confluent_kafka import ConsumerGroupTopicPartitions, KafkaError, KafkaException
from confluent_kafka import TopicPartition as KafkaTopicPartition

from spark_eos_connect.api.sink import TopicPartition
from spark_eos_connect.kafka.clients import admin_client
from spark_eos_connect.kafka.errors import KafkaAuthorizationError, missing_acl
from spark_eos_connect.kafka.group_errors import (
    ConsumerGroupError,
    ConsumerGroupRefusedError,
    group_in_use,
)
from spark_eos_connect.kafka.retry import call_with_retries

UNKNOWN_GROUP = (KafkaError.GROUP_ID_NOT_FOUND, KafkaError._UNKNOWN_GROUP)


def _code(exc: BaseException) -> Any:
    error: Any = exc.args[0] if exc.args else None
    return error.code() if hasattr(error, "code") else None


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
    """Admin operations on consumer groups of the cluster reached through `kafka`."""

    def __init__(
        self, kafka: Mapping[str, Any], timeout_s: float = 30.0, admin: Any = None
    ) -> None:
        """`admin`: the AdminClient to use (one for `kafka` by default)."""
        self._kafka = dict(kafka)  # to name the principal when an ACL is missing
        self._admin = admin if admin is not None else admin_client(kafka)
        self._timeout_s = timeout_s

    def _ask(self, send: Callable[[float], Any], what: str) -> Any:
        """The result of the request `send(time_limit)` returns the future of, retried while it
        fails for a passing reason (a group coordinator moving or loading) up to the timeout."""
        return call_with_retries(lambda limit: send(limit).result(), what, self._timeout_s)

    def committed(self, group: str) -> dict[TopicPartition, int]:
        """The group's committed offsets (empty when the group does not exist)."""
        request = [ConsumerGroupTopicPartitions(group)]
        try:
            result = self._ask(
                lambda limit: self._admin.list_consumer_group_offsets(
                    request, request_timeout=limit
                )[group],
                f"listing the offsets of consumer group {group}",
            )
        except KafkaException as exc:
            if _code(exc) in UNKNOWN_GROUP:
                return {}
            raise ConsumerGroupError(
                f"Could not list the offsets of consumer group {group}: {exc}"
            ) from exc
        return {
            TopicPartition(tp.topic, tp.partition): tp.offset
            for tp in result.topic_partitions or []
            if tp.offset >= 0 and tp.error is None
        }

    def active_members(self, group: str) -> int:
        """How many members the group has now (0 when it is empty or does not exist)."""
        try:
            description = self._ask(
                lambda limit: self._admin.describe_consumer_groups([group], request_timeout=limit)[
                    group
                ],
                f"describing consumer group {group}",
            )
        except KafkaException as exc:
            if _code(exc) in UNKNOWN_GROUP:
                return 0
            raise ConsumerGroupError(f"Could not describe consumer group {group}: {exc}") from exc
        return len(description.members or [])

    def alter(self, connector: str, group: str, offsets: Mapping[TopicPartition, int]) -> None:
        """Commit `offsets` for the group; refused while the group has active members.

        Without Read on the group the broker refuses each partition: the error names the ACL."""
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
                lambda limit: self._admin.alter_consumer_group_offsets(
                    request, request_timeout=limit
                )[group],
                f"altering the offsets of consumer group {group}",
            )
        except KafkaException as exc:
            if _code(exc) in (KafkaError.UNKNOWN_MEMBER_ID, KafkaError.GROUP_SUBSCRIBED_TO_TOPIC):
                raise group_in_use(connector, group, "altered") from exc
            denied = missing_acl(exc, "Read", group, self._kafka)
            if denied is not None:
                raise denied from exc
            raise ConsumerGroupError(
                f"Failed to alter consumer group offsets for connector {connector}: {exc}"
            ) from exc
        refused = [tp for tp in result.topic_partitions or [] if tp.error]
        denied = self._commit_denied(group, refused[0].topic, refused[0].error) if refused else None
        if denied is not None:
            raise denied
        _refuse_unknown_partitions(connector, refused)
        failed = [f"{tp.topic}-{tp.partition}: {tp.error}" for tp in refused]
        if failed:
            raise ConsumerGroupError(
                f"Failed to alter consumer group offsets for connector {connector}: "
                + "; ".join(failed)
            )

    def _commit_denied(
        self, group: str, topic: str, error: KafkaError
    ) -> KafkaAuthorizationError | None:
        """The error naming the ACL a refused partition of a commit lacks: Read on the group,
        or Read on `topic` when the broker refused the topic."""
        topic_refused = error.name() == "TOPIC_AUTHORIZATION_FAILED"
        return missing_acl(error, "Read", topic if topic_refused else group, self._kafka)

    def delete(self, connector: str, group: str) -> None:
        """Delete the group (idempotent); refused while it has active members; without Delete
        on the group the error names the ACL."""
        self.require_inactive(connector, group, "reset")
        try:
            self._ask(
                lambda limit: self._admin.delete_consumer_groups([group], request_timeout=limit)[
                    group
                ],
                f"deleting consumer group {group}",
            )
        except KafkaException as exc:
            code = _code(exc)
            if code in UNKNOWN_GROUP:
                return
            if code == KafkaError.NON_EMPTY_GROUP:
                raise group_in_use(connector, group, "reset") from exc
            denied = missing_acl(exc, "Delete", group, self._kafka)
            if denied is not None:
                raise denied from exc
            raise ConsumerGroupError(
                f"Failed to reset consumer group offsets for sink connector {connector}: {exc}"
            ) from exc

    def require_inactive(self, connector: str, group: str, action: str) -> None:
        """`ConsumerGroupRefusedError` if the group has members (`action`: "altered" or
        "reset")."""
        if self.active_members(group):
            raise group_in_use(connector, group, action)
