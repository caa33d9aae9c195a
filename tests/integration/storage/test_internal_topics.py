"""Internal topics on the single test broker: created with Connect's replication options,
a factor the cluster cannot hold refused by name before anything exists, an existing topic
that is not compacted warned about."""

from __future__ import annotations

import logging
import uuid
from typing import Any

import pytest

from spark_eos_connect.errors import ConfigError
from spark_eos_connect.kafka.clients import admin_client, ensure_topic
from spark_eos_connect.kafka.internal_topics import InternalTopic, ensure_internal_topic

pytestmark = pytest.mark.integration

OPTION = "status.storage.replication.factor"


def replicas(kafka_config: dict[str, Any], topic: str) -> list[int]:
    metadata = admin_client(kafka_config).list_topics(topic=topic, timeout=30)
    return [len(p.replicas) for p in metadata.topics[topic].partitions.values()]


def test_left_at_its_default_the_factor_is_one_on_one_broker_with_a_warning(
    kafka_config: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    name = f"internal-{uuid.uuid4().hex[:8]}"

    with caplog.at_level(logging.WARNING):
        ensured = ensure_internal_topic(kafka_config, InternalTopic(name, 5, OPTION))

    assert ensured.created and ensured.partitions == 5
    assert replicas(kafka_config, name) == [1] * 5
    warnings = [r.getMessage() for r in caplog.records]
    assert any(OPTION in text and "single broker" in text for text in warnings)


def test_an_explicit_factor_above_the_brokers_is_refused_and_nothing_is_created(
    kafka_config: dict[str, Any],
) -> None:
    name = f"internal-{uuid.uuid4().hex[:8]}"

    with pytest.raises(ConfigError, match=rf"{OPTION}=3: internal topic '{name}' cannot be"):
        ensure_internal_topic(kafka_config, InternalTopic(name, 5, OPTION, 3))

    assert name not in admin_client(kafka_config).list_topics(timeout=30).topics


def test_an_existing_topic_that_is_not_compacted_is_used_with_a_warning(
    kafka_config: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    name = f"internal-{uuid.uuid4().hex[:8]}"
    ensure_topic(admin_client(kafka_config), name, 3, {"cleanup.policy": "delete"})

    with caplog.at_level(logging.WARNING):
        ensured = ensure_internal_topic(kafka_config, InternalTopic(name, 5, OPTION, 3))

    assert not ensured.created and ensured.partitions == 3
    assert any("cleanup.policy=delete, not compact" in r.getMessage() for r in caplog.records)
