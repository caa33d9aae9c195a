"""KIP-875 for sinks end to end: a running sink query (Kafka reader -> FileStreamSink) follows its
connector's target state set through the REST API; offsets altered or reset while it is STOPPED
take effect on resume, and PAUSE/RESUME continues where the stream was."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer
from fastapi.testclient import TestClient

from spark_eos_connect.kafka.group_offsets import KafkaGroupOffsets
from spark_eos_connect.testing import wait_for

pytestmark = pytest.mark.integration

STATUS_TOPIC = "eosconnect-status"
HERDER_WORKER_SUFFIX = ":eosconnect-herder"


@pytest.fixture
def rest(default_rest_api: TestClient) -> TestClient:
    return default_rest_api


@pytest.fixture
def produce(kafka_config: dict[str, Any]) -> Iterator[Callable[[str, dict[int, range]], None]]:
    """`produce(topic, {partition: indexes})`: values `p<partition>-<index>`, one transaction."""
    producer = Producer({**kafka_config, "transactional.id": f"sink-lc-{uuid.uuid4().hex}"})
    producer.init_transactions(30)

    def send(topic: str, records: dict[int, range]) -> None:
        producer.begin_transaction()
        for partition, indexes in records.items():
            for index in indexes:
                producer.produce(topic, f"p{partition}-{index}".encode(), partition=partition)
        producer.commit_transaction(30)

    yield send
    producer.flush(5)


@pytest.fixture
def group_offsets(kafka_config: dict[str, Any]) -> Callable[[str], dict[tuple[str, int], int]]:
    groups = KafkaGroupOffsets(kafka_config)
    return lambda name: dict(groups.committed(f"connect-{name}").items())


@pytest.fixture
def idle_progress(spark: Any) -> Iterator[None]:
    """Queries started meanwhile report progress on every trigger, also without data."""
    key = "spark.sql.streaming.noDataProgressEventInterval"
    before = spark.conf.get(key, None)
    spark.conf.set(key, "0")
    try:
        yield
    finally:
        if before is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, before)


def start_query(spark: Any, options: dict[str, str], checkpoint: Path) -> Any:
    stream = spark.readStream.format("eosconnect").options(**options).load()
    return (
        stream.writeStream.format("eosconnect")
        .options(**options)
        .option("checkpointLocation", str(checkpoint))
        .trigger(processingTime="200 milliseconds")
        .start()
    )


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def by_partition(values: Iterable[str]) -> dict[int, list[int]]:
    """`p0-3` ... as {partition: [index, ...]} in file order."""
    result: dict[int, list[int]] = {}
    for value in values:
        partition, index = value[1:].split("-")
        result.setdefault(int(partition), []).append(int(index))
    return result


def query_states(read_committed: Callable[..., list[Any]], name: str) -> list[str]:
    """The connector states the query itself wrote to the status topic, oldest first."""
    key = f"status-connector-{name}".encode()
    states = []
    for record in read_committed(STATUS_TOPIC):
        if record.key == key and record.value is not None:
            status = json.loads(record.value)
            if not status["worker_id"].endswith(HERDER_WORKER_SUFFIX):
                states.append(status["state"])
    return states


def saw_without_reading(query: Any, topic: str, ends: dict[int, int]) -> bool:
    """Whether a trigger saw records up to `ends` as available and read nothing."""
    wanted = {str(p): o for p, o in ends.items()}
    for progress in query.recentProgress:
        source = progress["sources"][0]
        latest = source.get("latestOffset")
        latest = json.loads(latest) if isinstance(latest, str) else latest
        if progress["numInputRows"] == 0 and (latest or {}).get(topic) == wanted:
            return True
    return False


def sink_offsets(topic: str, offsets: dict[int, int]) -> dict[str, Any]:
    return {
        "offsets": [
            {
                "partition": {"kafka_topic": topic, "kafka_partition": p},
                "offset": {"kafka_offset": o},
            }
            for p, o in offsets.items()
        ]
    }


def offsets_of(body: dict[str, Any]) -> dict[int, int]:
    return {e["partition"]["kafka_partition"]: e["offset"]["kafka_offset"] for e in body["offsets"]}


def stop_and_wait_idle(
    rest: TestClient, name: str, query: Any, read_states: Callable[[], list[str]]
) -> None:
    """Stop through REST; wait until the query itself reported STOPPED (it plans no batch
    after that) and no trigger is running."""
    stops = read_states().count("STOPPED")
    assert rest.put(f"/connectors/{name}/stop").status_code == 204
    wait_for(lambda: read_states().count("STOPPED") > stops, 60, "the query to see STOPPED")
    wait_for(lambda: not query.status["isTriggerActive"], 60, "the query to go idle")


def test_offsets_altered_or_reset_while_stopped_take_effect_on_resume(
    spark: Any,
    rest: TestClient,
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    produce: Callable[[str, dict[int, range]], None],
    group_offsets: Callable[[str], dict[tuple[str, int], int]],
    read_committed: Callable[..., list[Any]],
    unique_name: Callable[[str], str],
    idle_progress: None,
    tmp_path: Path,
) -> None:
    topic = topic_factory("sinklc", partitions=2)
    name = unique_name("sinklc")
    out = tmp_path / "out.txt"
    options = {
        "name": name,
        "connector.class": "FileStreamSink",
        "topics": topic,
        "file": str(out),
        "startingOffsets": "earliest",
        "kafka.bootstrap.servers": bootstrap_servers,
    }
    produce(topic, {0: range(5), 1: range(5)})
    query = start_query(spark, options, tmp_path / "ck")
    states = lambda: query_states(read_committed, name)  # noqa: E731
    try:
        wait_for(lambda: len(lines(out)) == 10, 120, "the first 10 records")
        config = rest.get(f"/connectors/{name}/config").json()
        assert config == {
            "name": name,
            "connector.class": "FileStreamSink",
            "topics": topic,
            "file": str(out),
        }  # registered by the query: no kafka.* nor reader-only options
        assert "RUNNING" in states()

        # stop, then nothing is read or committed while new records arrive; each transaction's
        # commit marker takes an offset: p<n>-0..4 are at offsets 0..4, p<n>-5..9 at 6..10
        stop_and_wait_idle(rest, name, query, states)
        assert offsets_of(rest.get(f"/connectors/{name}/offsets").json()) == {0: 5, 1: 5}
        produce(topic, {0: range(5, 10), 1: range(5, 10)})
        wait_for(lambda: saw_without_reading(query, topic, {0: 12, 1: 12}), 60, "an idle trigger")
        altered = rest.patch(f"/connectors/{name}/offsets", json=sink_offsets(topic, {0: 2, 1: 8}))
        assert altered.status_code == 200, altered.text
        assert len(lines(out)) == 10
        assert group_offsets(name) == {(topic, 0): 2, (topic, 1): 8}

        # resume: partition 0 rewound to p0-2, partition 1 skipped to p1-7
        assert rest.put(f"/connectors/{name}/resume").status_code == 202
        wait_for(lambda: len(lines(out)) == 10 + 8 + 3, 120, "the records from the new offsets")
        wait_for(lambda: group_offsets(name) == {(topic, 0): 11, (topic, 1): 11}, 60, "the commit")
        after_alter = lines(out)

        # stop, reset (the group is deleted), resume: everything again (startingOffsets)
        stop_and_wait_idle(rest, name, query, states)
        assert rest.delete(f"/connectors/{name}/offsets").status_code == 200
        assert rest.get(f"/connectors/{name}/offsets").json() == {"offsets": []}
        assert rest.put(f"/connectors/{name}/resume").status_code == 202
        wait_for(lambda: len(lines(out)) == 21 + 20, 120, "the records after the reset")
        wait_for(lambda: group_offsets(name) == {(topic, 0): 11, (topic, 1): 11}, 60, "the commit")
    finally:
        query.stop()
    assert query.exception() is None

    written = lines(out)
    assert sorted(written[:10]) == sorted(f"p{p}-{i}" for p in (0, 1) for i in range(5))
    assert written[:21] == after_alter
    assert by_partition(written[:10]) == {0: list(range(5)), 1: list(range(5))}
    assert by_partition(written[10:21]) == {0: list(range(2, 10)), 1: list(range(7, 10))}
    assert by_partition(written[21:]) == {0: list(range(10)), 1: list(range(10))}
    assert states().count("STOPPED") == 2


def test_pause_holds_batches_and_resume_continues_without_rebasing(
    spark: Any,
    rest: TestClient,
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    produce: Callable[[str, dict[int, range]], None],
    group_offsets: Callable[[str], dict[tuple[str, int], int]],
    read_committed: Callable[..., list[Any]],
    unique_name: Callable[[str], str],
    kafka_config: dict[str, Any],
    idle_progress: None,
    tmp_path: Path,
) -> None:
    topic = topic_factory("sinkpause", partitions=2)
    name = unique_name("sinkpause")
    out = tmp_path / "out.txt"
    options = {
        "name": name,
        "connector.class": "FileStreamSink",
        "topics": topic,
        "file": str(out),
        "kafka.bootstrap.servers": bootstrap_servers,
    }
    produce(topic, {0: range(3), 1: range(3)})
    query = start_query(spark, options, tmp_path / "ck")
    states = lambda: query_states(read_committed, name)  # noqa: E731
    try:
        wait_for(lambda: len(lines(out)) == 6, 120, "the first 6 records")
        assert rest.put(f"/connectors/{name}/pause").status_code == 202
        wait_for(lambda: "PAUSED" in states(), 60, "the query to see PAUSED")
        wait_for(lambda: not query.status["isTriggerActive"], 60, "the query to go idle")
        # not a stop: moving the group's offsets now must not move the stream
        KafkaGroupOffsets(kafka_config).commit(f"connect-{name}", {(topic, 0): 0, (topic, 1): 0})
        produce(topic, {0: range(3, 5), 1: range(3, 5)})
        # records at offsets 0..2 and 4..5 (commit markers at 3 and 6)
        wait_for(lambda: saw_without_reading(query, topic, {0: 7, 1: 7}), 60, "an idle trigger")
        assert len(lines(out)) == 6

        assert rest.put(f"/connectors/{name}/resume").status_code == 202
        wait_for(lambda: group_offsets(name) == {(topic, 0): 6, (topic, 1): 6}, 120, "the commit")
    finally:
        query.stop()
    assert query.exception() is None
    assert by_partition(lines(out)) == {0: list(range(5)), 1: list(range(5))}
    reported = states()
    assert "RUNNING" in reported[reported.index("PAUSED") :]
