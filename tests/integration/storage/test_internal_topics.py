"""Internal topics on the single test broker: created with Connect's replication options,
a factor the cluster cannot hold refused by name before anything exists, an existing topic
that is not compacted warned about, and a query with every factor set to 1 running as it is."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from typing import Any

import pytest

from spark_eos_connect.errors import ConfigError
from spark_eos_connect.kafka.clients import admin_client, ensure_topic
from spark_eos_connect.kafka.internal_topics import InternalTopic, ensure_internal_topic
from spark_eos_connect.testing import wait_for

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


def test_an_explicit_factor_of_one_is_used_without_a_warning(
    kafka_config: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    name = f"internal-{uuid.uuid4().hex[:8]}"

    with caplog.at_level(logging.WARNING):
        ensured = ensure_internal_topic(kafka_config, InternalTopic(name, 5, OPTION, 1))

    assert ensured.created and replicas(kafka_config, name) == [1] * 5
    assert not [r.getMessage() for r in caplog.records if OPTION in r.getMessage()]


def test_a_query_with_every_factor_set_to_one_runs_on_one_broker(
    generator_query: Callable[..., Any],
    kafka_config: dict[str, Any],
    topic_factory: Callable[..., str],
    read_committed: Callable[..., list[Any]],
    unique_name: Callable[[str], str],
) -> None:
    topic, group = topic_factory("rf1"), unique_name("rf1")
    internal = {kind: f"{group}-{kind}" for kind in ("config", "offset", "status")}
    options = {f"{kind}.storage.topic": name for kind, name in internal.items()}
    options.update({f"{kind}.storage.replication.factor": "1" for kind in internal})

    query = generator_query(group, topic, **options, **{"group.id": group})
    wait_for(
        lambda: len(read_committed(topic, settled=False)) >= 100 or not query.isActive,
        120,
        "records committed by the query",
    )
    assert query.isActive, query.exception()
    query.stop()

    for name in internal.values():
        assert set(replicas(kafka_config, name)) == {1}, name
