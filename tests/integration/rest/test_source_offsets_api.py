"""GET/PATCH/DELETE offsets of source connectors (KIP-875) through the REST API (real broker)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from typing import Any, ClassVar

import pytest
from confluent_kafka import KafkaException
from fastapi.testclient import TestClient

from spark_eos_connect.api.config import ConfigDef, ConfigType
from spark_eos_connect.api.source import SourceConnector, SourceRecord, SourceTask
from spark_eos_connect.errors import ConfigError
from spark_eos_connect.herder import Herder, WorkerSettings
from spark_eos_connect.herder.entities import modified_message
from spark_eos_connect.kafka.producers import idempotent_producer, transactional_producer
from spark_eos_connect.protocol.murmur2 import default_partition
from spark_eos_connect.protocol.offsets_format import encode_offset_key
from spark_eos_connect.storage.offsets import ensure_offsets_topic, offset_messages

pytestmark = pytest.mark.integration

OFFSETS_PARTITIONS = 5  # the `settings` fixture's offset.storage.partitions


class _NoTask(SourceTask):
    def start(self, props: dict[str, str]) -> None:
        pass

    def stop(self) -> None:
        pass

    def poll(self) -> list[SourceRecord] | None:
        return None


class RecordingSource(SourceConnector):
    """Records every alter_offsets call; `reject` makes it refuse, `handled` its answer."""

    calls: ClassVar[list[list[tuple[dict[str, Any], dict[str, Any] | None]]]] = []

    def config_def(self) -> ConfigDef:
        return (
            ConfigDef()
            .define("handled", ConfigType.BOOLEAN, False)
            .define("reject", ConfigType.STRING, None)
        )

    def start(self, props: dict[str, str]) -> None:
        pass

    def stop(self) -> None:
        pass

    def task_class(self) -> type[SourceTask]:
        return _NoTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [{}]

    def alter_offsets(
        self, config: dict[str, str], offsets: list[tuple[dict[str, Any], dict[str, Any] | None]]
    ) -> bool:
        RecordingSource.calls.append(list(offsets))
        if config.get("reject"):
            raise ConfigError(config["reject"])
        return config.get("handled") == "true"


RECORDING = f"{__name__}.RecordingSource"


@pytest.fixture
def settings(settings: WorkerSettings) -> WorkerSettings:
    """The herder may load this module's connector (plugin.packages)."""
    return dataclasses.replace(settings, plugin_packages=(__name__,))


@pytest.fixture(autouse=True)
def _fresh_calls() -> Iterator[None]:
    RecordingSource.calls.clear()
    yield
    RecordingSource.calls.clear()


@pytest.fixture
def source(client: TestClient, unique_name: Callable[[str], str]) -> Callable[..., str]:
    """A stopped RecordingSource connector; returns its name."""

    def create(stop: bool = True, **extra: str) -> str:
        name = unique_name("rec")
        config = {"connector.class": RECORDING, "tasks.max": "2", **extra}
        assert client.put(f"/connectors/{name}/config", json=config).status_code == 201
        if stop:
            assert client.put(f"/connectors/{name}/stop").status_code == 204
        return name

    return create


def _seed(kafka: dict[str, Any], topic: str, name: str, pairs: list[Any]) -> None:
    partitions = ensure_offsets_topic(kafka, topic, OFFSETS_PARTITIONS)
    producer = idempotent_producer(kafka)
    for message in offset_messages(topic, partitions, name, pairs):
        producer.produce(message.topic, message.value, message.key, partition=message.partition)
    assert producer.flush(30) == 0


def _latest(records: list[Any]) -> dict[bytes, Any]:
    return {r.key: r for r in records}


def test_patch_writes_connect_bytes_in_one_transaction_after_fencing_tasks(
    client: TestClient,
    herder: Herder,
    kafka_config: dict[str, Any],
    source: Callable[..., str],
    topic_factory: Callable[..., str],
    read_committed: Callable[..., list[Any]],
) -> None:
    name = source()
    # A zombie task of the connector, mid-transaction with records for a data topic.
    data = topic_factory("data")
    zombie = transactional_producer(kafka_config, f"{herder.settings.group_id}-{name}-1")
    zombie.begin_transaction()
    zombie.produce(data, b"zombie record")
    zombie.flush()

    body = {"offsets": [{"partition": {"file": "a.txt", "shard": 3}, "offset": {"pos": 10}}]}
    response = client.patch(f"/connectors/{name}/offsets", json=body)

    assert response.status_code == 200
    assert response.json() == {"message": modified_message(False, reset=False)}
    assert response.json()["message"].startswith("The Connect framework-managed offsets")
    key = encode_offset_key(name, {"file": "a.txt", "shard": 3})
    assert key == f'["{name}",{{"file":"a.txt","shard":3}}]'.encode()
    stored = _latest(read_committed(herder.settings.offsets_topic))[key]
    assert stored.value == b'{"pos":10}'
    assert stored.partition == default_partition(key, OFFSETS_PARTITIONS)
    assert client.get(f"/connectors/{name}/offsets").json() == {
        "offsets": [{"partition": {"file": "a.txt", "shard": 3}, "offset": {"pos": 10}}]
    }
    assert RecordingSource.calls == [[({"file": "a.txt", "shard": 3}, {"pos": 10})]]
    # The zombie was fenced: it cannot commit, and its records never become visible.
    with pytest.raises(KafkaException):
        zombie.commit_transaction(30)
    assert read_committed(data) == []


def test_patch_changes_only_the_partitions_named(
    client: TestClient,
    herder: Herder,
    kafka_config: dict[str, Any],
    source: Callable[..., str],
    read_committed: Callable[..., list[Any]],
) -> None:
    name = source(handled="true")
    _seed(
        kafka_config,
        herder.settings.offsets_topic,
        name,
        [({"f": "a"}, {"pos": 1}), ({"f": "b"}, {"pos": 2}), ({"f": "c"}, {"pos": 3})],
    )
    body = {
        "offsets": [
            {"partition": {"f": "b"}, "offset": {"pos": 20}},
            {"partition": {"f": "c"}, "offset": None},
        ]
    }
    response = client.patch(f"/connectors/{name}/offsets", json=body)
    assert response.json() == {
        "message": "The offsets for this connector have been altered successfully"
    }
    assert client.get(f"/connectors/{name}/offsets").json()["offsets"] == [
        {"partition": {"f": "a"}, "offset": {"pos": 1}},
        {"partition": {"f": "b"}, "offset": {"pos": 20}},
    ]
    tombstone = _latest(read_committed(herder.settings.offsets_topic))[
        encode_offset_key(name, {"f": "c"})
    ]
    assert tombstone.value is None


def test_dedicated_offsets_topic_takes_precedence_and_both_are_written(
    client: TestClient,
    herder: Herder,
    kafka_config: dict[str, Any],
    source: Callable[..., str],
    unique_name: Callable[[str], str],
    read_committed: Callable[..., list[Any]],
) -> None:
    dedicated = unique_name("dedicated")
    name = source(**{"offsets.storage.topic": dedicated})
    global_topic = herder.settings.offsets_topic
    _seed(kafka_config, global_topic, name, [({"f": "a"}, {"pos": 1}), ({"f": "b"}, {"pos": 2})])
    _seed(kafka_config, dedicated, name, [({"f": "a"}, {"pos": 100})])
    assert client.get(f"/connectors/{name}/offsets").json()["offsets"] == [
        {"partition": {"f": "a"}, "offset": {"pos": 100}},
        {"partition": {"f": "b"}, "offset": {"pos": 2}},
    ]

    body = {"offsets": [{"partition": {"f": "b"}, "offset": {"pos": 7}}]}
    assert client.patch(f"/connectors/{name}/offsets", json=body).status_code == 200
    key_b = encode_offset_key(name, {"f": "b"})
    for topic in (dedicated, global_topic):
        assert _latest(read_committed(topic))[key_b].value == b'{"pos":7}'

    reset = client.delete(f"/connectors/{name}/offsets")
    assert reset.status_code == 200
    assert client.get(f"/connectors/{name}/offsets").json() == {"offsets": []}
    for topic in (dedicated, global_topic):
        latest = _latest(read_committed(topic))
        assert all(latest[key].value is None for key in latest if name.encode() in key)


def test_delete_resets_every_partition_and_is_idempotent(
    client: TestClient,
    herder: Herder,
    kafka_config: dict[str, Any],
    source: Callable[..., str],
) -> None:
    name = source()
    other = source()
    pairs = [({"f": "a"}, {"pos": 1}), ({"f": "b"}, {"pos": 2})]
    _seed(kafka_config, herder.settings.offsets_topic, name, pairs)
    _seed(kafka_config, herder.settings.offsets_topic, other, [({"f": "a"}, {"pos": 9})])

    first = client.delete(f"/connectors/{name}/offsets")
    assert first.status_code == 200
    assert first.json() == {"message": modified_message(False, reset=True)}
    assert "manually reset in the system" in first.json()["message"]
    assert sorted(RecordingSource.calls[0], key=str) == [({"f": "a"}, None), ({"f": "b"}, None)]
    assert client.get(f"/connectors/{name}/offsets").json() == {"offsets": []}
    assert client.delete(f"/connectors/{name}/offsets").status_code == 200
    assert RecordingSource.calls[1] == []
    # Another connector's offsets in the same topic are untouched.
    assert client.get(f"/connectors/{other}/offsets").json()["offsets"] == [
        {"partition": {"f": "a"}, "offset": {"pos": 9}}
    ]


def test_offsets_can_change_only_while_stopped_with_no_tasks(
    client: TestClient,
    herder: Herder,
    source: Callable[..., str],
    run_tasks: Callable[..., None],
) -> None:
    body = {"offsets": [{"partition": {"f": "a"}, "offset": {"pos": 1}}]}
    running = source(stop=False)
    for response in (
        client.patch(f"/connectors/{running}/offsets", json=body),
        client.delete(f"/connectors/{running}/offsets"),
    ):
        assert response.status_code == 400
        assert "must be in the STOPPED state" in response.json()["message"]
        assert f"/connectors/{running}/stop" in response.json()["message"]
    client.put(f"/connectors/{running}/pause")
    assert client.patch(f"/connectors/{running}/offsets", json=body).status_code == 400

    # STOPPED target state but a task set written after it: still refused.
    stopped_with_tasks = source()
    run_tasks(stopped_with_tasks, 1)
    assert client.patch(f"/connectors/{stopped_with_tasks}/offsets", json=body).status_code == 400
    assert RecordingSource.calls == []
    assert client.get(f"/connectors/{running}/offsets").json() == {"offsets": []}


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        ([], "JSON object"),
        ({"offsets": []}, "no offsets"),
        ({"offsets": [{"partition": None, "offset": {"pos": 1}}]}, "partition cannot be null"),
        ({"offsets": [{"partition": {"f": {"x": 1}}, "offset": None}]}, "offsets[0]"),
        ({"offsets": [{"partition": {"f": "a"}, "offset": {"pos": [1]}}]}, "'pos'"),
        ({"offsets": [{"offset": {"pos": 1}}]}, "partition"),
        ({"offsets": "all of them"}, "offsets"),
    ],
)
def test_malformed_bodies_are_400_naming_the_problem(
    client: TestClient, source: Callable[..., str], body: Any, fragment: str
) -> None:
    name = source()
    response = client.patch(f"/connectors/{name}/offsets", json=body)
    assert response.status_code == 400
    assert response.json()["error_code"] == 400
    assert fragment in response.json()["message"]
    assert RecordingSource.calls == []


def test_the_connector_hook_can_reject(
    client: TestClient,
    herder: Herder,
    source: Callable[..., str],
    read_committed: Callable[..., list[Any]],
) -> None:
    name = source(reject="position 5 is past the end of a.txt")
    body = {"offsets": [{"partition": {"f": "a"}, "offset": {"pos": 5}}]}
    response = client.patch(f"/connectors/{name}/offsets", json=body)
    assert response.status_code == 400
    assert "position 5 is past the end of a.txt" in response.json()["message"]
    assert client.get(f"/connectors/{name}/offsets").json() == {"offsets": []}
    assert client.delete(f"/connectors/{name}/offsets").status_code == 400


def test_file_stream_source_offsets_round_trip(
    client: TestClient, file_source: Callable[..., str]
) -> None:
    name = file_source()
    client.put(f"/connectors/{name}/stop")
    body = {"offsets": [{"partition": {"filename": "/tmp/in.txt"}, "offset": {"position": 42}}]}
    response = client.patch(f"/connectors/{name}/offsets", json=body)
    assert (
        response.json()["message"]
        == "The offsets for this connector have been altered successfully"
    )
    assert client.get(f"/connectors/{name}/offsets").json() == body
    negative = {"offsets": [{"partition": {"filename": "/tmp/in.txt"}, "offset": {"position": -1}}]}
    rejected = client.patch(f"/connectors/{name}/offsets", json=negative)
    assert rejected.status_code == 400
    assert "non-negative" in rejected.json()["message"]
