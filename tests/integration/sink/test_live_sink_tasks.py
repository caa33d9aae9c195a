"""Sink tasks live across micro-batches, as Kafka Connect runs them (the real broker and Spark).

A buffering sink (`ChunkSinkTask`: writes only complete chunks in `pre_commit`, drops the rest
on `close`) loses nothing below the group's committed offsets over many micro-batches, a query
restart on the same checkpoint, a SIGKILL of its task host mid-put and one of the whole job
(driver) mid-put; a sink keeping its offsets in its output rewinds in `open` (`context.offset`)
after its output was set back; a running query starts and stops each task once."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from spark_eos_connect.testing.waiting import wait_for

pytestmark = pytest.mark.integration

CHUNK = 7
IDLE_STOP_S = 90.0
"""How long a test waits for tasks to be stopped once their query ended (hosts stop an idle
task after `runtime.task_host.HOST_IDLE_S`)."""


def produce_values(produce: Callable[..., None], topic: str, numbers: range) -> None:
    """Values `v<n>` on 2 partitions, transactions of 100, each followed by an aborted one."""
    for start in range(numbers.start, numbers.stop, 100):
        batch = range(start, min(start + 100, numbers.stop))
        produce(topic, [(n % 2, None, f"v{n}".encode()) for n in batch])
        produce(topic, [(n % 2, None, b"aborted") for n in batch[:3]], abort=True)


def written(out: Path) -> list[tuple[int, int, str]]:
    """The sink's output lines as (partition, offset, value)."""
    if not out.exists():
        return []
    rows = []
    for line in out.read_text().splitlines():
        partition, offset, value = line.split(" ", 2)
        rows.append((int(partition), int(offset), value))
    return rows


def calls(log: Path) -> Counter[str]:
    """How often each lifecycle call was logged."""
    if not log.exists():
        return Counter()
    return Counter(call for _, call in map(json.loads, log.read_text().splitlines()))


def next_batch_id(checkpoint: Path) -> int:
    """The id of the next micro-batch of the query with this checkpoint."""
    return max(int(p.name) for p in (checkpoint / "offsets").iterdir() if p.name.isdigit()) + 1


def sink_query(spark: Any, options: dict[str, str], checkpoint: Path) -> Any:
    stream = spark.readStream.format("eosconnect").options(**options).load()
    return stream.writeStream.format("eosconnect").options(**options)


def test_a_buffering_sink_loses_nothing_below_the_committed_offsets(
    spark: Any,
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    produce: Callable[..., None],
    read_committed: Callable[..., list[Any]],
    group_offsets: Callable[[str], dict[tuple[str, int], int]],
    run_available_now: Callable[..., Any],
    run_job: Callable[..., Any],
    unique_name: Callable[[str], str],
    test_connectors: str,
    tmp_path: Path,
) -> None:
    topic = topic_factory("chunks", partitions=2)
    name, out, checkpoint = unique_name("chunks"), tmp_path / "out.txt", tmp_path / "ck"
    options = {
        "name": name,
        "connector.class": f"{test_connectors}.ChunkSinkConnector",
        "topics": topic,
        "file": str(out),
        "chunk.size": str(CHUNK),
        "maxRecordsPerTrigger": "130",
        "kafka.bootstrap.servers": bootstrap_servers,
    }
    produce_values(produce, topic, range(0, 1000))
    first = run_available_now(sink_query(spark, options, checkpoint), checkpoint)
    assert first.exception() is None
    assert len(first.recentProgress) >= 8  # many micro-batches, buffers carried across them

    produce_values(produce, topic, range(1000, 1400))  # a restart on the same checkpoint
    again = run_available_now(sink_query(spark, options, checkpoint), checkpoint)
    assert again.exception() is None

    job = [
        "--name", name, "--connector-class", options["connector.class"], "--topics", topic,
        "--option", f"file={out}", "--option", f"chunk.size={CHUNK}",
        "--max-records-per-trigger", "130", "--bootstrap-servers", bootstrap_servers,
        "--checkpoint", str(checkpoint), "--until-idle", "--timeout", "240",
    ]  # fmt: skip
    produce_values(produce, topic, range(1400, 1800))  # the task host dies mid-put
    point = f"lose_host_put@{next_batch_id(checkpoint) + 1}"
    marker = tmp_path / "host-killed"
    lost = run_job("kafka_to_sink.py", *job, fault=point, marker=marker)
    assert lost.returncode == 0, lost.stderr[-3000:]
    assert marker.read_text().strip() == point

    produce_values(produce, topic, range(1800, 2200))  # the whole job (driver) dies mid-put
    point = f"put@{next_batch_id(checkpoint) + 1}"
    marker = tmp_path / "job-killed"
    crashed = run_job("kafka_to_sink.py", *job, fault=point, marker=marker)
    assert crashed.returncode == -9, crashed.stderr[-3000:]
    assert marker.read_text().strip() == point
    resumed = run_job("kafka_to_sink.py", *job)
    assert resumed.returncode == 0, resumed.stderr[-3000:]

    committed = group_offsets(name)
    records = [r for r in read_committed(topic) if r.offset < committed[(topic, r.partition)]]
    lines = written(out)
    duplicates = [key for key, n in Counter((p, o) for p, o, _ in lines).items() if n > 1]
    assert not duplicates, f"written twice: {duplicates[:5]}"
    assert sorted(lines) == sorted((r.partition, r.offset, r.value.decode()) for r in records)
    # what is not committed is less than one chunk of each partition
    assert len(read_committed(topic)) - len(records) < 2 * CHUNK


def test_a_sink_keeping_offsets_in_its_output_rewinds_in_open(
    spark: Any,
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    produce: Callable[..., None],
    read_committed: Callable[..., list[Any]],
    group_offsets: Callable[[str], dict[tuple[str, int], int]],
    run_available_now: Callable[..., Any],
    unique_name: Callable[[str], str],
    test_connectors: str,
    tmp_path: Path,
) -> None:
    topic = topic_factory("rewind", partitions=2)
    name, out, checkpoint = unique_name("rewind"), tmp_path / "out.txt", tmp_path / "ck"
    options = {
        "name": name,
        "connector.class": f"{test_connectors}.OffsetsInOutputSinkConnector",
        "topics": topic,
        "file": str(out),
        "kafka.bootstrap.servers": bootstrap_servers,
    }
    produce_values(produce, topic, range(0, 600))
    first = run_available_now(sink_query(spark, options, checkpoint), checkpoint)
    assert first.exception() is None
    assert len(written(out)) == 600
    ahead = group_offsets(name)

    # the output is set back to an older state: the group and the checkpoint are ahead of it
    kept = [line for line in written(out) if line[1] < 150]
    out.write_text("".join(f"{p} {o} {v}\n" for p, o, v in kept))
    produce_values(produce, topic, range(600, 700))
    second = run_available_now(sink_query(spark, options, checkpoint), checkpoint)

    assert second.exception() is None
    lines = written(out)
    assert len(lines) == len(set(lines)), "a record was written twice"
    assert sorted(lines) == sorted(
        (r.partition, r.offset, r.value.decode()) for r in read_committed(topic)
    )
    assert all(group_offsets(name)[tp] > offset for tp, offset in ahead.items())


def test_a_running_query_starts_and_stops_each_task_once(
    spark: Any,
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    produce: Callable[..., None],
    run_available_now: Callable[..., Any],
    unique_name: Callable[[str], str],
    test_connectors: str,
    tmp_path: Path,
) -> None:
    topic = topic_factory("lifecycle", partitions=4)
    produce(topic, [(n % 4, None, f"v{n}".encode()) for n in range(2000)])
    name, log, checkpoint = unique_name("lifecycle"), tmp_path / "calls.jsonl", tmp_path / "ck"
    options = {
        "name": name,
        "connector.class": f"{test_connectors}.ChunkSinkConnector",
        "tasks.max": "2",
        "topics": topic,
        "file": str(tmp_path / "out.txt"),
        "log.file": str(log),
        "maxRecordsPerTrigger": "100",
        "kafka.bootstrap.servers": bootstrap_servers,
    }

    query = run_available_now(sink_query(spark, options, checkpoint), checkpoint)

    assert query.exception() is None
    assert len(query.recentProgress) >= 20
    assert calls(log) == Counter({"start": 2, "open": 2})  # nothing stopped while it ran
    wait_for(lambda: calls(log)["stop"] == 2, IDLE_STOP_S, "the idle tasks to be stopped")
    assert calls(log) == Counter({"start": 2, "open": 2, "close": 2, "stop": 2})
