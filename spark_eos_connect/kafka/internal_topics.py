"""Creating and checking the internal topics (config, offsets, status) as Kafka Connect does.

Connect creates each internal topic with the replication factor of its option
(`config.storage.replication.factor`, `offset.storage.replication.factor`,
`status.storage.replication.factor`; default 3, -1 for the broker's `default.replication.factor`)
and refuses a factor the cluster cannot hold. One rule is added for a development broker: on a
cluster of exactly one broker, a factor left at its default becomes 1 with a warning (a single
broker has one copy of everything anyway); a factor set explicitly is never lowered. An existing
topic is used as it is, with a warning when it has one replica on a cluster of several brokers
or is not compacted: both lose offsets or configs (a broker's disk, or the log cleaner).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient, ConfigResource, ResourceType

from spark_eos_connect.errors import ConfigError
from spark_eos_connect.kafka.client_settings import with_client_defaults
from spark_eos_connect.kafka.clients import BROKER_DEFAULT, ensure_topic, partition_count
from spark_eos_connect.kafka.errors import kafka_error_of
from spark_eos_connect.kafka.retry import call_with_retries

log = logging.getLogger(__name__)

CONNECT_DEFAULT_REPLICATION = 3
"""Connect's default for the three `*.storage.replication.factor` options."""
COMPACTED = {"cleanup.policy": "compact"}


@dataclass(frozen=True)
class InternalTopic:
    """An internal topic as its options ask for it.

    `replication_factor` None means the option was left at Connect's default (3)."""

    name: str
    partitions: int
    replication_option: str
    replication_factor: int | None = None
    config: Mapping[str, str] = field(default_factory=lambda: dict(COMPACTED))


def replication_to_create(topic: InternalTopic, brokers: int) -> tuple[int, str | None]:
    """(the replication factor to create `topic` with, a warning or None) on a cluster of
    `brokers` brokers; a `ConfigError` naming the option when the cluster cannot hold it."""
    wanted = topic.replication_factor
    if wanted == BROKER_DEFAULT:
        return BROKER_DEFAULT, None
    if wanted is None and brokers == 1:
        return 1, (
            f"Creating internal topic {topic.name!r} with replication factor 1: "
            f"{topic.replication_option} is left at its default ({CONNECT_DEFAULT_REPLICATION}) "
            "and the cluster has a single broker. Set it (3 on a production cluster) to have "
            "this refused instead."
        )
    factor = CONNECT_DEFAULT_REPLICATION if wanted is None else wanted
    if factor > brokers:
        raise ConfigError(
            f"{topic.replication_option}={factor}: internal topic {topic.name!r} cannot be "
            f"created with {factor} replicas, the cluster has {brokers} broker(s) up. Set "
            f"{topic.replication_option} to at most {brokers}, or -1 for the brokers' "
            "default.replication.factor (Kafka Connect's meaning)."
        )
    return factor, None


def existing_topic_warnings(
    topic: InternalTopic, brokers: int, replicas: int, cleanup_policy: str | None
) -> list[str]:
    """Warnings about an internal topic that exists: one replica on a cluster of several
    brokers, or not compacted (None: the policy could not be read)."""
    warnings = []
    if replicas == 1 and brokers > 1:
        warnings.append(
            f"Internal topic {topic.name!r} has a single replica on a cluster of {brokers} "
            "brokers: losing that broker's disk loses it (and offsets lost mean duplicates). "
            "Raise its replication factor (kafka-reassign-partitions) to 3."
        )
    if cleanup_policy is not None and "compact" not in cleanup_policy.split(","):
        warnings.append(
            f"Internal topic {topic.name!r} has cleanup.policy={cleanup_policy}, not compact: "
            "the broker will delete its records by retention, and with them the offsets or "
            "configs they hold. Set cleanup.policy=compact on it."
        )
    return warnings


@dataclass(frozen=True)
class EnsuredTopic:
    """What `ensure_internal_topic` found: whether it created the topic, its partitions."""

    created: bool
    partitions: int


def ensure_internal_topic(
    kafka: Mapping[str, Any], topic: InternalTopic, timeout_s: float = 30.0
) -> EnsuredTopic:
    """Create `topic` as its options say unless it exists, else check it (warnings only)."""
    admin = AdminClient(with_client_defaults(kafka))
    metadata = call_with_retries(
        lambda limit: admin.list_topics(timeout=limit),
        "asking the cluster for its topics",
        timeout_s,
    )
    brokers = len(metadata.brokers)
    existing = metadata.topics.get(topic.name)
    if existing is not None and existing.error is None and existing.partitions:
        replicas = min(len(p.replicas) for p in existing.partitions.values())
        policy = _cleanup_policy(admin, topic.name, timeout_s)
        for warning in existing_topic_warnings(topic, brokers, replicas, policy):
            log.warning(warning)
        return EnsuredTopic(False, len(existing.partitions))
    factor, creation_warning = replication_to_create(topic, brokers)
    if creation_warning:
        log.warning(creation_warning)
    created = ensure_topic(admin, topic.name, topic.partitions, topic.config, timeout_s, factor)
    return EnsuredTopic(created, partition_count(admin, topic.name, timeout_s, wait_s=timeout_s))


def _cleanup_policy(admin: AdminClient, name: str, timeout_s: float) -> str | None:
    """The topic's `cleanup.policy`, or None when it cannot be read (e.g. no DescribeConfigs
    ACL: like Connect, the check is then skipped)."""
    resource = ConfigResource(ResourceType.TOPIC, name)

    def described(limit: float) -> Any:
        return admin.describe_configs([resource], request_timeout=limit)[resource].result()

    try:
        entries = call_with_retries(described, f"describing topic {name!r}", timeout_s)
    except KafkaException as error:
        log.debug("cleanup.policy of %s not checked: %s", name, kafka_error_of(error))
        return None
    entry = entries.get("cleanup.policy")
    return None if entry is None or entry.value is None else str(entry.value)
