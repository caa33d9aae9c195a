"""`kafka.producers.fatal_cause` against a real broker: a fenced producer's `_FATAL` refusals
stand for the fencing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException, Producer

from spark_eos_connect.kafka.producers import fatal_cause, is_fenced
from spark_eos_connect.testing import wait_for

pytestmark = pytest.mark.integration


def _refusal(producer: Producer, topic: str) -> KafkaException | None:
    """The error `produce` raises now, if any (delivery reports served first)."""
    try:
        producer.produce(topic, value=b"late")
        producer.flush(5)
    except KafkaException as error:
        return error
    return None


def test_a_fenced_producers_fatal_refusal_is_read_as_fenced(
    kafka_config: dict[str, Any], topic_factory: Callable[..., str]
) -> None:
    topic = topic_factory("fenced-fatal")
    transactional_id = f"{topic}-tx"
    older = Producer({**kafka_config, "transactional.id": transactional_id})
    older.init_transactions(30)
    older.begin_transaction()
    older.produce(topic, value=b"first")
    older.flush(10)
    newer = Producer({**kafka_config, "transactional.id": transactional_id})
    newer.init_transactions(30)  # fences `older`

    def fatal_refusal() -> KafkaException | None:
        error = _refusal(older, topic)
        return error if error is not None and error.args[0].code() == KafkaError._FATAL else None

    wait_for(lambda: fatal_refusal() is not None, 30, "the fenced producer refusing with _FATAL")
    refusal = fatal_refusal()
    assert refusal is not None
    assert not is_fenced(refusal)  # the placeholder alone does not say why

    cause = fatal_cause(older, refusal)

    assert is_fenced(cause), cause
