"""The one mapper of Kafka client errors: the `KafkaError` (and its code) behind an exception or
error object, the predicates on codes the rest of the project asks about, and the
`KafkaAuthorizationError` naming the ACL a refused request lacks.

librdkafka reports a failure either as a `KafkaException` whose first argument is the
`KafkaError`, or as the `KafkaError` itself (a message's `error()`, a partition's `error` in an
answer); every helper here takes either.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from confluent_kafka import KafkaError, KafkaException

from spark_eos_connect.errors import EosConnectError

RETRIABLE_ERRORS = frozenset(
    {
        "NOT_LEADER_FOR_PARTITION",  # NOT_LEADER_OR_FOLLOWER in Kafka's Java client
        "LEADER_NOT_AVAILABLE",
        "FENCED_LEADER_EPOCH",
        "UNKNOWN_LEADER_EPOCH",
        "UNKNOWN_TOPIC_OR_PART",
        "UNKNOWN_TOPIC_ID",
        "OFFSET_NOT_AVAILABLE",
        "NOT_COORDINATOR",
        "COORDINATOR_NOT_AVAILABLE",
        "COORDINATOR_LOAD_IN_PROGRESS",
        "NOT_CONTROLLER",
        "NOT_ENOUGH_REPLICAS",
        "NOT_ENOUGH_REPLICAS_AFTER_APPEND",
        "KAFKA_STORAGE_ERROR",
        "NETWORK_EXCEPTION",
        "REQUEST_TIMED_OUT",
        "ELIGIBLE_LEADERS_NOT_AVAILABLE",
        "_TIMED_OUT",
        "_TIMED_OUT_QUEUE",
        "_TRANSPORT",
        "_ALL_BROKERS_DOWN",
        "_WAIT_COORD",
    }
)
"""Kafka errors (librdkafka's names) that a later attempt of the same request can get past."""

STALE_METADATA_ERRORS = frozenset(
    {
        "FENCED_LEADER_EPOCH",
        "UNKNOWN_LEADER_EPOCH",
        "NOT_LEADER_FOR_PARTITION",
        "LEADER_NOT_AVAILABLE",
        "UNKNOWN_TOPIC_OR_PART",
    }
)
"""Errors saying the client asked a broker that no longer leads: its cached metadata is old."""

NO_GROUP_ERRORS = frozenset({KafkaError.GROUP_ID_NOT_FOUND, KafkaError._UNKNOWN_GROUP})
"""Codes saying a consumer group does not exist (so it has no offsets)."""

AUTHORIZATION_ERRORS = {
    "TOPIC_AUTHORIZATION_FAILED": "Topic",
    "GROUP_AUTHORIZATION_FAILED": "Group",
    "TRANSACTIONAL_ID_AUTHORIZATION_FAILED": "TransactionalId",
    "CLUSTER_AUTHORIZATION_FAILED": "Cluster",
}
"""The authorization failures, by name, with the ACL resource type each one is about."""


KafkaClientError = KafkaException
"""The exception librdkafka's clients raise, for code outside `kafka/` to catch."""

PRODUCE_ERRORS: tuple[type[BaseException], ...] = (KafkaException, SystemError)
"""What `produce` or `flush` raise when the client fails: librdkafka's errors, and the
SystemError confluent-kafka raises when a fatal error arrives while a delivery callback runs."""


class KafkaAuthorizationError(EosConnectError, PermissionError):
    """The broker's ACLs do not allow what a client asked for; names the ACL it lacks."""


# --- the error behind a failure -----------------------------------------------------------------


def kafka_error_of(error: BaseException | KafkaError) -> KafkaError | None:
    """The `KafkaError` behind `error` (itself, or a `KafkaException`'s), else None."""
    if isinstance(error, KafkaError):
        return error
    first = error.args[0] if isinstance(error, KafkaException) and error.args else None
    return first if isinstance(first, KafkaError) else None


def kafka_error_in(exc: BaseException | KafkaError) -> KafkaError | None:
    """The `KafkaError` of `exc` (itself, when it is one) or of the first exception in its
    cause/context chain."""
    if not isinstance(exc, BaseException):
        return kafka_error_of(exc)
    seen: BaseException | None = exc
    while seen is not None:
        error = kafka_error_of(seen)
        if error is not None:
            return error
        seen = seen.__cause__ or seen.__context__
    return None


def error_code(error: BaseException | KafkaError) -> int | None:
    """The librdkafka error code behind `error`, or None when it is no Kafka error."""
    found = kafka_error_of(error)
    return None if found is None else int(found.code())


def error_name(error: BaseException | KafkaError) -> str | None:
    """The librdkafka name (`TOPIC_ALREADY_EXISTS`, ...) of the error behind `error`, or None."""
    found = kafka_error_of(error)
    return None if found is None else str(found.name())


# --- predicates ---------------------------------------------------------------------------------


def is_retriable(error: BaseException | KafkaError) -> bool:
    """Whether a later attempt of the request that failed with `error` can succeed."""
    found = kafka_error_of(error)
    if found is None:
        return False
    if found.fatal() or found.txn_requires_abort():
        return False
    return found.name() in RETRIABLE_ERRORS or bool(found.retriable())


def needs_new_metadata(error: KafkaError | None) -> bool:
    """Whether a retry after `error` should start from fresh metadata. A long-lived admin
    client asked for offsets again and again kept sending them with its cached, fenced leader
    epoch (FENCED_LEADER_EPOCH for 30 s after a broker loss); a new client does not."""
    return error is not None and error.name() in STALE_METADATA_ERRORS


def is_unused_group_error(error: KafkaError) -> bool:
    """Whether `error` only says the principal may not use the consumer's group.

    librdkafka wants a `group.id` and looks its coordinator up even for a consumer that only
    assigns partitions and never commits, as every reader here does; without a Group ACL that
    lookup fails while fetching goes on. Like Kafka Connect's readers of its internal topics,
    these readers need no Group ACL, so the error is not theirs to fail on."""
    return bool(error.code() == KafkaError.GROUP_AUTHORIZATION_FAILED)


def is_fatal_placeholder(error: KafkaError | None) -> bool:
    """Whether `error` is librdkafka's `_FATAL`: what a call on a client already in a fatal
    state raises, standing for the fatal error the client's `error_cb` received."""
    return error is not None and bool(error.code() == KafkaError._FATAL)


def is_partition_eof(error: KafkaError) -> bool:
    """Whether `error` is librdkafka's harmless end-of-partition event."""
    return bool(error.code() == KafkaError._PARTITION_EOF)


def is_no_group(error: BaseException | KafkaError) -> bool:
    """Whether `error` says the consumer group does not exist."""
    return error_code(error) in NO_GROUP_ERRORS


def is_topic_exists(error: BaseException | KafkaError) -> bool:
    """Whether `error` says a topic to create exists already."""
    return error_name(error) == "TOPIC_ALREADY_EXISTS"


def is_topic_denied(error: BaseException | KafkaError) -> bool:
    """Whether `error` is the broker refusing a request on a topic (no ACL for it)."""
    return error_name(error) == "TOPIC_AUTHORIZATION_FAILED"


# --- errors for people --------------------------------------------------------------------------


def describe_client(config: Mapping[str, Any]) -> str:
    """`user 'u' (MECHANISM over PROTOCOL)` for messages; never the password."""
    protocol = config.get("security.protocol", "PLAINTEXT")
    user = config.get("sasl.username", "")
    mechanism = config.get("sasl.mechanism", "GSSAPI")
    return f"user {user!r} ({mechanism} over {protocol})" if user else f"the client ({protocol})"


def missing_acl(
    error: BaseException | KafkaError, operations: str, name: str, config: Mapping[str, Any]
) -> KafkaAuthorizationError | None:
    """When `error` is an authorization failure: an error naming the ACL the principal of
    `config` lacks (`operations` on the resource `name`), else None."""
    kafka_error = kafka_error_of(error)
    resource = AUTHORIZATION_ERRORS.get(kafka_error.name()) if kafka_error else None
    if resource is None:
        return None
    return KafkaAuthorizationError(
        f"Kafka denied {describe_client(config)}: it needs {operations} on {resource} "
        f"{name!r} ({kafka_error})"
    )
