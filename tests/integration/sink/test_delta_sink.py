"""DeltaSink through foreachBatch (in-process Spark, real broker, real delta-spark): only
committed records, offsets kept in the table, resuming without checkpoint or consumer group,
upserts by key, and failed records with the dead letter queue."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from spark_eos_connect.api.sink import TopicPartition
from spark_eos_connect.delta import delta_sink, starting_offsets
from spark_eos_connect.delta.connector import DeltaSinkConnector

pytestmark = pytest.mark.integration


@pytest.fixture
def run_delta(
    spark: Any, run_available_now: Callable[..., Any]
) -> Callable[[dict[str, str], Path], Any]:
    """Run reader → DeltaSink with Trigger.AvailableNow; returns the finished query."""

    def run(options: dict[str, str], checkpoint: Path) -> Any:
        stream = spark.readStream.format("eosconnect").options(**options).load()
        return run_available_now(stream.writeStream.foreachBatch(delta_sink(options)), checkpoint)

    return run


def delta_options(
    name: str, topic: str, path: Path, bootstrap: str, **extra: str
) -> dict[str, str]:
    return {
        "name": name,
        "topics": topic,
        "path": str(path),
        "kafka.bootstrap.servers": bootstrap,
        **extra,
    }


def test_only_committed_records_reach_delta_once_even_without_checkpoint_and_group(
    spark: Any,
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    produce: Callable[..., None],
    group_offsets: Callable[[str], dict[tuple[str, int], int]],
    run_delta: Callable[[dict[str, str], Path], Any],
    unique_name: Callable[[str], str],
    tmp_path: Path,
) -> None:
    topic = topic_factory("committed", partitions=2)
    produce(topic, [(i % 2, None, f"c{i}".encode()) for i in range(6)])
    produce(topic, [(i % 2, None, f"a{i}".encode()) for i in range(4)], abort=True)
    produce(topic, [(0, None, b"c6")])
    name = unique_name("committed")
    table = tmp_path / "table"
    options = delta_options(name, topic, table, bootstrap_servers, maxRecordsPerTrigger="4")

    query = run_delta(options, tmp_path / "ck")

    assert query.exception() is None
    rows = spark.read.format("delta").load(str(table))
    assert sorted(r.value for r in rows.collect()) == [f"c{i}".encode() for i in range(7)]
    assert rows.columns == ["value", "headers", *METADATA]
    # the offset after each partition's last committed record (then a commit marker)
    next_offsets = {TopicPartition(topic, 0): 8, TopicPartition(topic, 1): 3}
    assert DeltaSinkConnector().table_offsets(options, spark) == next_offsets
    assert group_offsets(name) == {}  # pre_commit returned {}: the table keeps the offsets
    history = spark.sql(f"DESCRIBE HISTORY delta.`{table}`").orderBy("version").collect()
    last = json.loads(history[-1]["userMetadata"])["eosconnect"]
    assert last["connector"] == name and isinstance(last["txnVersion"], int)
    assert "offsets" not in last  # every record left a row, and the rows hold the offsets

    # lose Spark's checkpoint and the consumer group; start again from the earliest offsets
    shutil.rmtree(tmp_path / "ck")
    produce(topic, [(1, None, b"c7")])
    again = run_delta(options, tmp_path / "ck2")

    assert again.exception() is None
    values = sorted(r.value for r in spark.read.format("delta").load(str(table)).collect())
    assert values == sorted(f"c{i}".encode() for i in range(8))
    assert starting_offsets(options, spark) == json.dumps({topic: {"0": 8, "1": 8}})


METADATA = ["_kafka_topic", "_kafka_partition", "_kafka_offset", "_kafka_timestamp", "_kafka_key"]


def test_upsert_keeps_the_latest_record_per_key_and_deletes_on_tombstones(
    spark: Any,
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    produce: Callable[..., None],
    run_delta: Callable[[dict[str, str], Path], Any],
    unique_name: Callable[[str], str],
    tmp_path: Path,
) -> None:
    topic = topic_factory("compacted")
    produce(topic, [(0, b"a", b'{"n":1}'), (0, b"b", b'{"n":2}'), (0, b"a", b'{"n":3}')])
    name = unique_name("upsert")
    table_name = name.replace("-", "_")
    options = {
        "name": name,
        "topics": topic,
        "table": table_name,
        "delta.mode": "upsert",
        "value.schema": "n INT",
        "kafka.bootstrap.servers": bootstrap_servers,
    }

    assert run_delta(options, tmp_path / "ck").exception() is None
    produce(topic, [(0, b"b", None), (0, b"c", b'{"n":4}')])
    assert run_delta(options, tmp_path / "ck").exception() is None

    rows = spark.table(table_name).select("_kafka_key", "n", "_kafka_offset").collect()
    assert sorted((r[0], r[1], r[2]) for r in rows) == [(b"a", 3, 2), (b"c", 4, 5)]
    # the tombstone left no row, yet the table remembers it was consumed
    assert DeltaSinkConnector().table_offsets(options, spark) == {TopicPartition(topic, 0): 6}
    spark.sql(f"DROP TABLE {table_name}")


def test_poison_values_go_to_the_dlq_and_never_stop_the_query(
    spark: Any,
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    produce: Callable[..., None],
    read_committed: Callable[..., list[Any]],
    run_delta: Callable[[dict[str, str], Path], Any],
    unique_name: Callable[[str], str],
    tmp_path: Path,
) -> None:
    topic = topic_factory("poison")
    dlq = unique_name("delta-dlq")
    produce(topic, [(0, b"1", b'{"id":1}'), (0, b"2", b"oops"), (0, b"3", b'{"id":"x"}')])
    name = unique_name("poison")
    options = delta_options(
        name,
        topic,
        tmp_path / "table",
        bootstrap_servers,
        **{
            "value.schema": "id INT",
            "errors.tolerance": "all",
            "errors.deadletterqueue.topic.name": dlq,
            "errors.deadletterqueue.context.headers.enable": "true",
        },
    )

    query = run_delta(options, tmp_path / "ck")

    assert query.exception() is None
    rows = spark.read.format("delta").load(str(tmp_path / "table")).collect()
    assert [(r.id, r._kafka_offset) for r in rows] == [(1, 0)]
    dead = read_committed(dlq)
    assert [(r.key, r.value) for r in dead] == [(b"2", b"oops"), (b"3", b'{"id":"x"}')]
    headers = [dict(r.headers) for r in dead]
    assert [h["__connect.errors.offset"] for h in headers] == [b"1", b"2"]
    assert {h["__connect.errors.topic"] for h in headers} == {topic.encode()}
    assert {h["__connect.errors.stage"] for h in headers} == {b"VALUE_CONVERTER"}
    assert b"value.schema" in headers[0]["__connect.errors.exception.message"]


def test_poison_value_with_tolerance_none_fails_naming_it_and_writes_nothing(
    spark: Any,
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    produce: Callable[..., None],
    run_delta: Callable[[dict[str, str], Path], Any],
    unique_name: Callable[[str], str],
    tmp_path: Path,
) -> None:
    topic = topic_factory("strict")
    produce(topic, [(0, None, b'{"id":1}'), (0, None, b"oops")])
    table = tmp_path / "table"
    options = delta_options(
        unique_name("strict"), topic, table, bootstrap_servers, **{"value.schema": "id INT"}
    )

    query = run_delta(options, tmp_path / "ck")

    error = str(query.exception())
    assert f"topic={topic} partition=0 offset=1" in error
    assert "errors.tolerance=none" in error
    assert not table.exists()
