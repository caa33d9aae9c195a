"""The driver as the config-topic leader, against the real broker: it claims the leader's
transactional id before its first read of the config topic, so a zombie leader with an open
transaction neither stalls the start nor lands its write (KIP-618's zombie leader)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from confluent_kafka import KafkaException, Producer

from spark_eos_connect.kafka.producers import is_fenced
from spark_eos_connect.protocol.config_records import (
    TargetState,
    encode_target_state,
    target_state_key,
)
from spark_eos_connect.source.config import parse_source_pipeline
from spark_eos_connect.source.coordinator import SourceCoordinator
from spark_eos_connect.storage.config_store import KafkaConfigStore, leader_transactional_id

pytestmark = pytest.mark.integration

COUNTER = "spark_eos_connect.testing.CounterSourceConnector"
TIMEOUT_S = 30.0


@pytest.fixture
def cluster(
    topic_factory: Callable[..., str], unique_name: Callable[[str], str]
) -> tuple[str, str]:
    """A group.id and a config topic of its own (a zombie's open transaction blocks readers)."""
    return unique_name("leader-group"), topic_factory(
        "configs", config={"cleanup.policy": "compact"}
    )


@pytest.fixture
def zombie_leader(bootstrap_servers: str, cluster: tuple[str, str]) -> Producer:
    """A producer holding the cluster's leader transactional id, with a transaction open."""
    group_id, _ = cluster
    producer = Producer(
        {
            "bootstrap.servers": bootstrap_servers,
            "transactional.id": leader_transactional_id(group_id),
        }
    )
    producer.init_transactions(TIMEOUT_S)
    producer.begin_transaction()
    return producer


def test_driver_fences_an_open_zombie_leader_before_reading_the_config_topic(
    bootstrap_servers: str,
    cluster: tuple[str, str],
    zombie_leader: Producer,
    read_committed: Callable[..., list[Any]],
    read_uncommitted: Callable[..., list[Any]],
    topic_factory: Callable[..., str],
    unique_name: Callable[[str], str],
) -> None:
    group_id, config_topic = cluster
    name = unique_name("zombie-leader")
    zombie_key = target_state_key(name).encode()
    zombie_leader.produce(
        config_topic, encode_target_state(TargetState.PAUSED), zombie_key, partition=0
    )
    zombie_leader.flush(TIMEOUT_S)
    assert [r.key for r in read_uncommitted(config_topic)] == [zombie_key]  # in the log, open

    coordinator = (
        SourceCoordinator.open(  # reading first would wait on the open transaction, time out
            parse_source_pipeline(
                {
                    "name": name,
                    "connector.class": COUNTER,
                    "topic": topic_factory("zombie-leader-data"),
                    "group.id": group_id,
                    "config.storage.topic": config_topic,
                    "kafka.bootstrap.servers": bootstrap_servers,
                }
            )
        )
    )
    try:
        assert coordinator.state is TargetState.STARTED
        assert coordinator.generation_active
        with pytest.raises(KafkaException) as fenced:
            zombie_leader.commit_transaction(TIMEOUT_S)
        assert is_fenced(fenced.value)
    finally:
        coordinator.stop()

    assert zombie_key not in [r.key for r in read_committed(config_topic)]
    store = KafkaConfigStore({"bootstrap.servers": bootstrap_servers}, config_topic, group_id)
    try:
        snapshot = store.read_to_end(TIMEOUT_S)
    finally:
        store.close()
    assert snapshot.target_state(name) is TargetState.STARTED  # not the zombie's PAUSED
    assert snapshot.task_count_record_follows_latest_task_configs(name)
