"""GET/PATCH/DELETE offsets of sink connectors: the consumer group ``connect-<name>``."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from confluent_kafka import Consumer, TopicPartition
from fastapi.testclient import TestClient

pytestmark = pytest.mark.integration


@pytest.fixture
def sink(
    client: TestClient,
    kafka_config: dict[str, Any],
    topic_factory: Callable[..., str],
    unique_name: Callable[[str], str],
) -> tuple[str, str]:
    """A FileStreamSink connector on a 2-partition topic, group offsets 5 and 8 committed."""
    topic = topic_factory("sink-in", partitions=2)
    name = unique_name("sink")
    config = {"connector.class": "FileStreamSink", "topics": topic, "file": "/tmp/out.txt"}
    assert client.put(f"/connectors/{name}/config", json=config).status_code == 201
    consumer = Consumer({**kafka_config, "group.id": f"connect-{name}"})
    consumer.commit(
        offsets=[TopicPartition(topic, 0, 5), TopicPartition(topic, 1, 8)], asynchronous=False
    )
    consumer.close()
    return name, topic


@pytest.fixture
def group_member(kafka_config: dict[str, Any]) -> Iterator[Callable[[str, str], None]]:
    """Joins a consumer to a group (an active member, like a running sink task)."""
    consumers: list[Consumer] = []

    def join(group: str, topic: str) -> None:
        consumer = Consumer({**kafka_config, "group.id": group, "enable.auto.commit": False})
        consumer.subscribe([topic])
        deadline = time.monotonic() + 30
        while not consumer.assignment() and time.monotonic() < deadline:
            consumer.poll(0.2)
        assert consumer.assignment()
        consumers.append(consumer)

    yield join
    for consumer in consumers:
        consumer.close()


def _offsets(topic: str, *pairs: tuple[int, int]) -> dict[str, Any]:
    return {
        "offsets": [
            {
                "partition": {"kafka_topic": topic, "kafka_partition": p},
                "offset": {"kafka_offset": o},
            }
            for p, o in pairs
        ]
    }


def test_get_patch_delete_sink_offsets(client: TestClient, sink: tuple[str, str]) -> None:
    name, topic = sink
    assert client.get(f"/connectors/{name}/offsets").json() == _offsets(topic, (0, 5), (1, 8))
    assert client.put(f"/connectors/{name}/stop").status_code == 204

    body = {
        "offsets": [
            {
                "partition": {"kafka_topic": topic, "kafka_partition": "1"},
                "offset": {"kafka_offset": 2},
            }
        ]
    }
    altered = client.patch(f"/connectors/{name}/offsets", json=body)
    assert altered.status_code == 200
    assert altered.json() == {
        "message": "The offsets for this connector have been altered successfully"
    }
    assert client.get(f"/connectors/{name}/offsets").json() == _offsets(topic, (0, 5), (1, 2))

    reset = client.delete(f"/connectors/{name}/offsets")
    assert reset.status_code == 200
    assert reset.json() == {
        "message": "The offsets for this connector have been reset successfully"
    }
    assert client.get(f"/connectors/{name}/offsets").json() == {"offsets": []}
    assert client.delete(f"/connectors/{name}/offsets").status_code == 200  # idempotent


def test_sink_offsets_cannot_change_while_the_group_has_members(
    client: TestClient, sink: tuple[str, str], group_member: Callable[[str, str], None]
) -> None:
    name, topic = sink
    client.put(f"/connectors/{name}/stop")
    group_member(f"connect-{name}", topic)  # e.g. a sink task that has not stopped yet
    for response in (
        client.patch(f"/connectors/{name}/offsets", json=_offsets(topic, (0, 1))),
        client.delete(f"/connectors/{name}/offsets"),
    ):
        assert response.status_code == 400
        assert "active members" in response.json()["message"]
        assert f"connect-{name}" in response.json()["message"]
    assert client.get(f"/connectors/{name}/offsets").json() == _offsets(topic, (0, 5), (1, 8))


@pytest.mark.parametrize(
    ("partition", "offset", "fragment"),
    [
        ({"kafka_topic": "t"}, {"kafka_offset": 1}, "'kafka_partition'"),
        ({"kafka_topic": "t", "kafka_partition": "x"}, {"kafka_offset": 1}, "integer"),
        ({"kafka_topic": "t", "kafka_partition": 0}, {"offset": 1}, "'kafka_offset'"),
        ({"kafka_topic": "t", "kafka_partition": 0}, {"kafka_offset": -3}, "negative"),
        ({"kafka_topic": "t", "kafka_partition": 0}, None, "not supported"),
        ({"kafka_topic": "t", "kafka_partition": 2147483648}, {"kafka_offset": 1}, "int32"),
        ({"kafka_topic": "t", "kafka_partition": 0}, {"kafka_offset": 2**63}, "int64"),
        ({"kafka_topic": "t", "kafka_partition": 0}, {"kafka_offset": str(2**70)}, "int64"),
        ({"kafka_topic": "a b", "kafka_partition": 0}, {"kafka_offset": 1}, "topic name"),
        ({"kafka_topic": "{topic}", "kafka_partition": 7}, {"kafka_offset": 1}, "-7"),
        ({"kafka_topic": "no-such-topic-27", "kafka_partition": 0}, {"kafka_offset": 1}, "exist"),
    ],
)
def test_malformed_sink_offsets_are_400(
    client: TestClient,
    sink: tuple[str, str],
    partition: dict[str, Any],
    offset: Any,
    fragment: str,
) -> None:
    name, topic = sink
    client.put(f"/connectors/{name}/stop")
    partition = {key: str(value).format(topic=topic) for key, value in partition.items()}
    body = {"offsets": [{"partition": partition, "offset": offset}]}
    response = client.patch(f"/connectors/{name}/offsets", json=body)
    assert response.status_code == 400, response.text
    assert fragment in response.json()["message"]
    assert client.get(f"/connectors/{name}/offsets").json() == _offsets(topic, (0, 5), (1, 8))


def test_sink_offsets_need_a_stopped_connector(client: TestClient, sink: tuple[str, str]) -> None:
    name, topic = sink
    response = client.patch(f"/connectors/{name}/offsets", json=_offsets(topic, (0, 1)))
    assert response.status_code == 400
    assert "STOPPED" in response.json()["message"]
