"""The replication factor an internal topic is created with, and the warnings about one that
exists (pure rules of `kafka.internal_topics`)."""

from __future__ import annotations

import pytest

from spark_eos_connect.errors import ConfigError
from spark_eos_connect.kafka.internal_topics import (
    InternalTopic,
    existing_topic_warnings,
    replication_to_create,
)

OPTION = "offset.storage.replication.factor"


def topic(factor: int | None) -> InternalTopic:
    return InternalTopic("eosconnect-offsets", 25, OPTION, factor)


@pytest.mark.parametrize("brokers", [3, 5])
def test_left_at_its_default_a_topic_gets_three_replicas(brokers: int) -> None:
    assert replication_to_create(topic(None), brokers) == (3, None)


def test_left_at_its_default_on_a_single_broker_a_topic_gets_one_replica_and_a_warning() -> None:
    factor, warning = replication_to_create(topic(None), 1)

    assert factor == 1
    assert warning is not None
    assert OPTION in warning and "single broker" in warning


def test_left_at_its_default_on_two_brokers_the_option_is_named() -> None:
    with pytest.raises(ConfigError) as refused:
        replication_to_create(topic(None), 2)

    message = str(refused.value)
    assert message.startswith(f"{OPTION}=3: internal topic 'eosconnect-offsets' cannot be created")
    assert "2 broker(s) up" in message and "at most 2, or -1" in message


@pytest.mark.parametrize("brokers", [1, 2])
def test_an_explicit_factor_is_never_lowered(brokers: int) -> None:
    with pytest.raises(ConfigError, match=f"{OPTION}=3"):
        replication_to_create(topic(3), brokers)


@pytest.mark.parametrize(("factor", "brokers"), [(1, 3), (2, 3), (3, 3), (1, 1)])
def test_an_explicit_factor_the_cluster_holds_is_used(factor: int, brokers: int) -> None:
    assert replication_to_create(topic(factor), brokers) == (factor, None)


@pytest.mark.parametrize("brokers", [1, 3])
def test_minus_one_asks_for_the_brokers_default(brokers: int) -> None:
    assert replication_to_create(topic(-1), brokers) == (-1, None)


def test_an_existing_topic_with_one_replica_on_several_brokers_is_warned_about() -> None:
    (warning,) = existing_topic_warnings(topic(None), 3, 1, "compact")

    assert "single replica on a cluster of 3 brokers" in warning


def test_an_existing_topic_that_is_not_compacted_is_warned_about() -> None:
    (warning,) = existing_topic_warnings(topic(None), 1, 1, "delete")

    assert "cleanup.policy=delete, not compact" in warning


@pytest.mark.parametrize(
    ("brokers", "replicas", "policy"),
    [(3, 3, "compact"), (1, 1, "compact"), (3, 2, "compact,delete"), (3, 3, None)],
)
def test_a_sound_existing_topic_gets_no_warning(
    brokers: int, replicas: int, policy: str | None
) -> None:
    assert existing_topic_warnings(topic(None), brokers, replicas, policy) == []
