"""Connect's Java FileStreamSourceTask from a plugin folder, run by the Python exactly-once task
loop on the in-memory twins (a real JVM task host, no broker): its lines committed once, the
offsets-topic records byte for byte those of the Python FileStreamSourceTask, a fresh task
resuming from the committed offset (which reaches the Java task as a Long), a lost JVM
failing its batch with nothing of it committed; a value converter the plugin path lacks: run
by this project when it has the class (Confluent's AvroConverter), else the task fails to
start naming the option, the class and the folder."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import pytest

from spark_eos_connect.jvm import jars
from spark_eos_connect.jvm_tasks.client import close_hosts
from spark_eos_connect.jvm_tasks.errors import JavaPluginError
from spark_eos_connect.jvm_tasks.java_source_task import (
    CONNECTOR_OPTIONS,
    PLUGIN_PATH,
    TASK_CLASS,
    JavaSourceTask,
)
from spark_eos_connect.source.task_loop import BatchResult, LiveSourceTask, run_task_once
from spark_eos_connect.storage.memory_log import MemoryLog, MemoryTaskClients
from spark_eos_connect.testing import example_plan
from spark_eos_connect.testing.schema_registry import SchemaRegistryDouble

OFFSETS = "eosconnect-offsets"
JAVA_TASK = "org.apache.kafka.connect.file.FileStreamSourceTask"
ADAPTER = "spark_eos_connect.jvm_tasks.java_source_task.JavaSourceTask"
PYTHON_TASK = "spark_eos_connect.connectors.file_stream.FileStreamSourceTask"


@pytest.fixture(scope="module", autouse=True)
def _end_hosts() -> Any:
    yield
    close_hosts()


def plan(
    file: Path,
    java: bool,
    lines: int,
    committed: list[Any] | None = None,
    batch_size: int | None = None,
    **changes: Any,
) -> Any:
    config = {"file": str(file), "topic": "data"}
    if batch_size is not None:  # lines a poll returns at most (Connect's default 2000)
        config["batch.size"] = str(batch_size)
    settings: dict[str, Any] = {
        "task_class": PYTHON_TASK,
        "task_config": config,
        "offsets_positions": {},
        "offsets_topic_partitions": 5,
        "config_topic": "",
        "max_records": lines,
        "max_poll_duration_ms": 30_000,
    }
    if java:
        settings["task_class"] = ADAPTER
        settings["task_config"] = {**config, TASK_CLASS: JAVA_TASK}
        settings["extra"] = {PLUGIN_PATH: [str(jars.plugin_path("connect-file"))]}
    return example_plan(committed or [], **{**settings, **changes})


def new_log() -> MemoryLog:
    log = MemoryLog()
    log.create_topic(OFFSETS, 5)
    return log


def run_once(log: MemoryLog, task_plan: Any) -> BatchResult:
    return run_task_once({}, task_plan, 0, clients=MemoryTaskClients(log))


def values(log: MemoryLog) -> list[str]:
    return [r.value.decode() for r in log.read_committed("data") if r.value is not None]


def offsets_records(log: MemoryLog) -> list[tuple[bytes | None, bytes | None]]:
    return [(r.key, r.value) for r in log.read_committed(OFFSETS)]


def test_java_lines_and_offsets_equal_the_python_tasks(tmp_path: Path) -> None:
    file = tmp_path / "lines.txt"
    lines = [f"line {i}" for i in range(500)]
    file.write_text("".join(f"{line}\n" for line in lines))

    java_log, python_log = new_log(), new_log()
    java = run_once(java_log, plan(file, java=True, lines=len(lines)))
    run_once(python_log, plan(file, java=False, lines=len(lines)))

    assert values(java_log) == lines
    assert java.records == len(lines) and java.transactions == 1
    assert offsets_records(java_log) == offsets_records(python_log)
    key, value = offsets_records(java_log)[0]
    assert key == f'["c",{{"filename":"{file}"}}]'.encode()
    assert value == f'{{"position":{file.stat().st_size}}}'.encode()


def test_a_fresh_java_task_resumes_from_the_committed_offset(tmp_path: Path) -> None:
    file = tmp_path / "lines.txt"
    file.write_text("one\ntwo\n")
    log = new_log()
    run_once(log, plan(file, java=True, lines=2))
    with file.open("a") as appended:
        appended.write("three\n")

    # the committed offset reaches the Java task through its OffsetStorageReader; it checks
    # that the position is a Long, and reads on from it
    committed = [({"filename": str(file)}, {"position": len("one\ntwo\n")})]
    run_once(log, plan(file, java=True, lines=1, committed=committed))

    assert values(log) == ["one", "two", "three"]


def test_a_kept_java_task_polls_on_across_micro_batches(tmp_path: Path) -> None:
    file = tmp_path / "lines.txt"
    file.touch()
    log = new_log()
    task_plan = plan(file, java=True, lines=10)
    live = LiveSourceTask({}, task_plan, clients=MemoryTaskClients(log))
    try:
        for batch_id in range(3):
            with file.open("a") as appended:  # ten new lines: one poll of the kept task
                appended.write("".join(f"{i}\n" for i in range(10 * batch_id, 10 * batch_id + 10)))
            result = BatchResult()
            rows = [
                row for b in live.run_batch(task_plan, batch_id, result) for row in b.to_pylist()
            ]
            assert len(rows) == 10 and result.transactions == 1
    finally:
        live.close()
    assert values(log) == [str(i) for i in range(30)]
    assert offsets_records(log)[-1][1] == f'{{"position":{file.stat().st_size}}}'.encode()


def test_a_task_class_the_plugin_path_lacks_is_named_with_the_folder(tmp_path: Path) -> None:
    file = tmp_path / "lines.txt"
    file.write_text("one\n")
    missing = plan(file, java=True, lines=1)
    missing.task_config[TASK_CLASS] = "com.example.NoSuchTask"
    with pytest.raises(JavaPluginError) as failed:
        run_once(new_log(), missing)
    message = str(failed.value)
    assert "com.example.NoSuchTask" in message
    assert str(jars.plugin_path("connect-file")) in message


def test_a_lost_jvm_fails_the_batch_and_a_fresh_task_resumes_from_the_commit(
    tmp_path: Path,
) -> None:
    file = tmp_path / "lines.txt"
    file.write_text("".join(f"{i}\n" for i in range(20)))
    log = new_log()
    first = plan(file, java=True, lines=10, batch_size=10)  # polls of ten: batch 0 takes one
    live = LiveSourceTask({}, first, clients=MemoryTaskClients(log))
    try:
        for _ in live.run_batch(first, 0, BatchResult()):
            pass
        task = live.task
        assert isinstance(task, JavaSourceTask) and task.host is not None
        os.kill(task.host.pid, signal.SIGKILL)
        with pytest.raises(JavaPluginError, match="JVM task host"):
            for _ in live.run_batch(first, 1, BatchResult()):
                pass
    finally:
        live.close()  # aborts what the lost batch left open
    assert values(log) == [str(i) for i in range(10)]

    committed = [({"filename": str(file)}, {"position": len("".join(f"{i}\n" for i in range(10)))})]
    run_once(log, plan(file, java=True, lines=10, committed=committed))  # a new JVM is spawned
    assert values(log) == [str(i) for i in range(20)]


def with_value_converter(task_plan: Any, **options: str) -> Any:
    task_plan.extra[CONNECTOR_OPTIONS] = options
    return task_plan


def test_a_converter_only_this_project_has_converts_the_java_tasks_values(
    tmp_path: Path,
) -> None:
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroDeserializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    file = tmp_path / "lines.txt"
    file.write_text("one\ntwo\n")
    log = new_log()
    with SchemaRegistryDouble() as registry:
        avro = {
            "value.converter": "io.confluent.connect.avro.AvroConverter",
            "value.converter.schema.registry.url": registry.url,
        }
        run_once(log, with_value_converter(plan(file, java=True, lines=2), **avro))
        client = SchemaRegistryClient({"url": registry.url})
        decode = AvroDeserializer(client)
        context = SerializationContext("data", MessageField.VALUE)
        lines = [decode(r.value, context) for r in log.read_committed("data")]
        assert lines == ["one", "two"]
        assert client.get_subjects() == ["data-value"]


def test_a_converter_neither_the_plugins_nor_this_project_have_fails_the_start(
    tmp_path: Path,
) -> None:
    file = tmp_path / "lines.txt"
    file.write_text("one\n")
    unknown = with_value_converter(
        plan(file, java=True, lines=1), **{"value.converter": "com.example.NoConverter"}
    )
    with pytest.raises(JavaPluginError, match="failed to start") as failed:
        run_once(new_log(), unknown)
    message = str(failed.value)
    assert "value.converter=com.example.NoConverter" in message
    assert str(jars.plugin_path("connect-file")) in message
