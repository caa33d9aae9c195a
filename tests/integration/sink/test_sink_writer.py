"""`writeStream.format("eosconnect")` with sink connectors: FileStreamSink end to end, exactly
the offsets `pre_commit` returns committed to `connect-<name>`, nothing committed when `put`
fails, errors.tolerance with the dead letter queue, and DeltaSink pointing to foreachBatch."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from spark_eos_connect.testing.waiting import wait_for

pytestmark = pytest.mark.integration


def sink_stream(spark: Any, options: dict[str, str]) -> Any:
    """The eosconnect reader's rows into the eosconnect sink writer, same options for both."""
    stream = spark.readStream.format("eosconnect").options(**options).load()
    return stream.writeStream.format("eosconnect").options(**options)


def test_file_stream_sink_writes_records_and_commits_next_offsets(
    spark: Any,
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    produce: Callable[..., None],
    group_offsets: Callable[[str], dict[tuple[str, int], int]],
    run_available_now: Callable[..., Any],
    unique_name: Callable[[str], str],
    tmp_path: Path,
) -> None:
    topic = topic_factory("filesink", partitions=2)
    produce(topic, [(0, None, b"a"), (1, None, b"b"), (0, None, b"c")])
    produce(topic, [(1, None, b"never")], abort=True)
    name = unique_name("filesink")
    out = tmp_path / "out.txt"
    options = {
        "name": name,
        "connector.class": "FileStreamSink",
        "topics": topic,
        "file": str(out),
        "kafka.bootstrap.servers": bootstrap_servers,
    }

    query = run_available_now(sink_stream(spark, options), tmp_path / "ck")

    assert query.exception() is None
    assert sorted(out.read_text().splitlines()) == ["a", "b", "c"]
    # the offset after each partition's last record, as Connect commits them
    assert group_offsets(name) == {(topic, 0): 2, (topic, 1): 1}


def test_only_the_offsets_pre_commit_returns_are_committed(
    spark: Any,
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    produce: Callable[..., None],
    group_offsets: Callable[[str], dict[tuple[str, int], int]],
    run_available_now: Callable[..., Any],
    unique_name: Callable[[str], str],
    test_connectors: str,
    tmp_path: Path,
) -> None:
    topic = topic_factory("partial", partitions=2)
    produce(topic, [(0, None, b"a"), (0, None, b"b"), (0, None, b"c"), (1, None, b"d")])
    name = unique_name("partial")
    log = tmp_path / "calls.jsonl"
    options = {
        "name": name,
        "connector.class": f"{test_connectors}.PartialCommitSinkConnector",
        "tasks.max": "2",  # one task per partition
        "topics": topic,
        "log.file": str(log),
        "kafka.bootstrap.servers": bootstrap_servers,
    }

    query = run_available_now(sink_stream(spark, options), tmp_path / "ck")

    assert query.exception() is None
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    assert ["pre_commit", [[0, 3]]] in calls
    assert ["pre_commit", [[1, 1]]] in calls
    assert sorted(c[0] for c in calls) == sorted(["open", "put", "pre_commit"] * 2)
    # the tasks live on after the query; their hosts close them once idle
    wait_for(lambda: len(log.read_text().splitlines()) == 10, 90, "the tasks to be stopped")
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    assert sorted(c[0] for c in calls) == sorted(["open", "put", "pre_commit", "close", "stop"] * 2)
    # pre_commit returned partition 0 two offsets back and nothing for partition 1
    assert group_offsets(name) == {(topic, 0): 1}


@pytest.mark.parametrize("tasks_max", [1, 2, 6])
def test_tasks_max_is_the_number_of_sink_tasks_partitions_dealt_across_them(
    spark: Any,
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    produce: Callable[..., None],
    group_offsets: Callable[[str], dict[tuple[str, int], int]],
    run_available_now: Callable[..., Any],
    unique_name: Callable[[str], str],
    test_connectors: str,
    tmp_path: Path,
    tasks_max: int,
) -> None:
    topic = topic_factory("tasksmax", partitions=4)
    produce(topic, [(p, None, f"r{p}-{i}".encode()) for p in range(4) for i in range(3)])
    name = unique_name("tasksmax")
    log = tmp_path / "calls.jsonl"
    options = {
        "name": name,
        "connector.class": f"{test_connectors}.TaskLogSinkConnector",
        "tasks.max": str(tasks_max),
        "topics": topic,
        "log.file": str(log),
        "kafka.bootstrap.servers": bootstrap_servers,
    }

    query = run_available_now(sink_stream(spark, options), tmp_path / "ck")

    assert query.exception() is None
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    started = sorted(task for task, call, _ in calls if call == "start")
    opened: dict[str, list[int]] = {}
    for task, call, partitions in calls:
        if call == "open":
            opened.setdefault(task, []).extend(partitions)
    tasks = min(tasks_max, 4)
    # one SinkTask per task config, each opened with its share of the partitions, in turn
    assert started == [str(i) for i in range(tasks)]
    assert {t: sorted(p) for t, p in opened.items()} == {
        str(i): [p for p in range(4) if p % tasks == i] for i in range(tasks)
    }
    put: dict[str, set[int]] = {task: set() for task in opened}
    for task, call, partitions in calls:
        if call == "put":
            put[task].update(partitions)
    assert put == {task: set(partitions) for task, partitions in opened.items()}
    assert group_offsets(name) == {(topic, p): 3 for p in range(4)}


def test_failing_put_commits_nothing(
    spark: Any,
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    produce: Callable[..., None],
    group_offsets: Callable[[str], dict[tuple[str, int], int]],
    run_available_now: Callable[..., Any],
    unique_name: Callable[[str], str],
    test_connectors: str,
    tmp_path: Path,
) -> None:
    topic = topic_factory("putfails")
    produce(topic, [(0, None, b"ok"), (0, None, b"boom")])
    name = unique_name("putfails")
    options = {
        "name": name,
        "connector.class": f"{test_connectors}.PartialCommitSinkConnector",
        "topics": topic,
        "log.file": str(tmp_path / "calls.jsonl"),
        "fail.on": "boom",
        "kafka.bootstrap.servers": bootstrap_servers,
    }

    query = run_available_now(sink_stream(spark, options), tmp_path / "ck")

    error = str(query.exception())
    assert "cannot store b'boom'" in error
    assert f"topic={topic} partition=0 offset=0" in error
    assert group_offsets(name) == {}


def test_failing_put_leaves_the_connector_and_the_task_failed(
    spark: Any,
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    produce: Callable[..., None],
    run_available_now: Callable[..., Any],
    unique_name: Callable[[str], str],
    test_connectors: str,
    tmp_path: Path,
) -> None:
    from spark_eos_connect.protocol.status_records import StatusState
    from spark_eos_connect.storage.status_store import KafkaStatusStore

    topic = topic_factory("putfails-status")
    produce(topic, [(0, None, b"ok"), (0, None, b"boom")])
    name = unique_name("putfails-status")
    options = {
        "name": name,
        "connector.class": f"{test_connectors}.PartialCommitSinkConnector",
        "topics": topic,
        "log.file": str(tmp_path / "calls.jsonl"),
        "fail.on": "boom",
        "kafka.bootstrap.servers": bootstrap_servers,
    }

    query = run_available_now(sink_stream(spark, options), tmp_path / "ck")

    assert query.exception() is not None
    statuses = KafkaStatusStore({"bootstrap.servers": bootstrap_servers}, "eosconnect-status")

    def connector_failed() -> bool:
        record = statuses.read_to_end().connector_status(name)
        return record is not None and record.state is StatusState.FAILED

    wait_for(connector_failed, 15, f"connector {name} FAILED")
    snapshot = statuses.read_to_end()
    connector, task = snapshot.connector_status(name), snapshot.task_status(name, 0)
    assert task is not None and task.state is StatusState.FAILED
    assert task.trace is not None and "cannot store b'boom'" in task.trace
    assert connector is not None and connector.trace is not None and task.trace in connector.trace


def test_poison_records_go_to_the_dlq_with_context_headers(
    spark: Any,
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    produce: Callable[..., None],
    read_committed: Callable[..., list[Any]],
    group_offsets: Callable[[str], dict[tuple[str, int], int]],
    run_available_now: Callable[..., Any],
    unique_name: Callable[[str], str],
    tmp_path: Path,
) -> None:
    topic = topic_factory("poison")
    dlq = unique_name("dlq")
    produce(topic, [(0, b"k1", b'{"n":1}'), (0, b"k2", b"{not json"), (0, b"k3", b'{"n":3}')])
    name = unique_name("poison")
    out = tmp_path / "out.txt"
    options = {
        "name": name,
        "connector.class": "FileStreamSink",
        "topics": topic,
        "file": str(out),
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter.schemas.enable": "false",
        "errors.tolerance": "all",
        "errors.deadletterqueue.topic.name": dlq,
        "errors.deadletterqueue.context.headers.enable": "true",
        "kafka.bootstrap.servers": bootstrap_servers,
    }

    query = run_available_now(sink_stream(spark, options), tmp_path / "ck")

    assert query.exception() is None
    assert out.read_text().splitlines() == ["{'n': 1}", "{'n': 3}"]
    [dead] = read_committed(dlq)
    assert (dead.key, dead.value) == (b"k2", b"{not json")
    headers = dict(dead.headers)
    assert headers["__connect.errors.topic"] == topic.encode()
    assert headers["__connect.errors.partition"] == b"0"
    assert headers["__connect.errors.offset"] == b"1"
    assert headers["__connect.errors.connector.name"] == name.encode()
    assert headers["__connect.errors.stage"] == b"VALUE_CONVERTER"
    # JsonConverter wraps the parse error in a DataError, as Connect wraps it in DataException
    assert headers["__connect.errors.exception.class.name"] == b"spark_eos_connect.errors.DataError"
    assert b"Expecting property name" in headers["__connect.errors.exception.message"]
    assert group_offsets(name) == {(topic, 0): 3}


def test_poison_record_with_tolerance_none_fails_naming_it(
    spark: Any,
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    produce: Callable[..., None],
    group_offsets: Callable[[str], dict[tuple[str, int], int]],
    run_available_now: Callable[..., Any],
    unique_name: Callable[[str], str],
    tmp_path: Path,
) -> None:
    topic = topic_factory("strict")
    produce(topic, [(0, None, b"1"), (0, None, b"\xff")])
    name = unique_name("strict")
    options = {
        "name": name,
        "connector.class": "FileStreamSink",
        "topics": topic,
        "file": str(tmp_path / "out.txt"),
        "value.converter": "StringConverter",
        "kafka.bootstrap.servers": bootstrap_servers,
    }

    query = run_available_now(sink_stream(spark, options), tmp_path / "ck")

    error = str(query.exception())
    assert f"topic={topic} partition=0 offset=1" in error
    assert "errors.tolerance=none" in error
    assert group_offsets(name) == {}


def test_delta_sink_through_the_writer_points_to_foreach_batch(
    spark: Any,
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    run_available_now: Callable[..., Any],
    tmp_path: Path,
) -> None:
    options = {
        "name": "delta",
        "connector.class": "DeltaSink",
        "topics": topic_factory("delta"),
        "path": str(tmp_path / "table"),
        "kafka.bootstrap.servers": bootstrap_servers,
    }

    query = run_available_now(sink_stream(spark, options), tmp_path / "ck")

    assert "foreachBatch(spark_eos_connect.delta.delta_sink(options))" in str(query.exception())
