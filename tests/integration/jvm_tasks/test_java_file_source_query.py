"""Connect's own Java FileStreamSourceConnector from a plugin.path folder as an eosconnect
source, through a real query and broker: each line exactly once under read_committed, offsets
records byte for byte those the Python FileStreamSource writes for the same file, the Java
plugin the one that ran; a missing plugin folder or class named in the error."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from spark_eos_connect.jvm import jars

from .queries import run_available_now

pytestmark = pytest.mark.integration

JAVA_FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
JAVA_FILE_TASK = "org.apache.kafka.connect.file.FileStreamSourceTask"


def offsets_records(
    read_committed: Callable[..., list[Any]], name: str
) -> list[tuple[bytes | None, bytes | None]]:
    prefix = json.dumps([name]).encode()[:-1] + b","
    records = read_committed("eosconnect-offsets")
    return [(r.key, r.value) for r in records if (r.key or b"").startswith(prefix)]


def test_java_file_source_writes_each_line_once_with_pythons_offsets_records(
    spark: Any,
    tmp_path: Path,
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    read_committed: Callable[..., list[Any]],
    unique_name: Callable[[str], str],
) -> None:
    source = tmp_path / "in.txt"
    lines = [f"line {i:05d} of the Java connector's file" for i in range(2000)]
    source.write_text("".join(f"{line}\n" for line in lines))
    java_topic, python_topic = topic_factory("java-file"), topic_factory("python-file")
    java_name, python_name = unique_name("java-file"), unique_name("python-file")
    kafka = {"kafka.bootstrap.servers": bootstrap_servers}
    java = {
        "name": java_name,
        "connector.class": JAVA_FILE_SOURCE,
        "plugin.path": str(jars.plugin_path("connect-file")),
        "file": str(source),
        "topic": java_topic,
        **kafka,
    }
    python = {
        "name": python_name,
        "connector.class": JAVA_FILE_SOURCE,  # without plugin.path: the Python connector
        "file": str(source),
        "topic": python_topic,
        **kafka,
    }

    run_available_now(spark, java, tmp_path / "java-ck")
    run_available_now(spark, python, tmp_path / "python-ck")

    assert [r.value for r in read_committed(java_topic)] == [line.encode() for line in lines]
    java_offsets = offsets_records(read_committed, java_name)
    python_offsets = offsets_records(read_committed, python_name)
    assert java_offsets == [
        (
            f'["{java_name}",{{"filename":"{source}"}}]'.encode(),
            f'{{"position":{source.stat().st_size}}}'.encode(),
        )
    ]
    renamed = [
        ((k or b"").replace(python_name.encode(), java_name.encode()), v) for k, v in python_offsets
    ]
    assert renamed == java_offsets
    # the Java plugin ran: its task config names Connect's task class, as a worker writes it
    task_configs = [
        json.loads(r.value)["properties"]
        for r in read_committed("eosconnect-configs")
        if r.key == f"task-{java_name}-0".encode() and r.value
    ]
    assert task_configs and task_configs[-1]["task.class"] == JAVA_FILE_TASK

    with source.open("a") as appended:
        appended.write("one more\ntwo more\n")
    run_available_now(spark, java, tmp_path / "java-ck")

    assert [r.value for r in read_committed(java_topic)] == [
        line.encode() for line in [*lines, "one more", "two more"]
    ]
    assert offsets_records(read_committed, java_name)[-1][1] == (
        f'{{"position":{source.stat().st_size}}}'.encode()
    )


@pytest.mark.parametrize("case", ["missing folder", "class not found"])
def test_a_missing_plugin_folder_or_class_is_named_in_the_error(
    spark: Any,
    tmp_path: Path,
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    read_committed: Callable[..., list[Any]],
    unique_name: Callable[[str], str],
    case: str,
) -> None:
    folder = tmp_path / "no-such-plugins" if case == "missing folder" else tmp_path / "plugins"
    if case == "class not found":
        folder.mkdir()
    connector = (
        "com.example.NoSuchSourceConnector" if case == "class not found" else (JAVA_FILE_SOURCE)
    )
    topic, name = topic_factory("java-error"), unique_name("java-error")
    (tmp_path / "in.txt").write_text("never\n")
    options = {
        "name": name,
        "connector.class": connector,
        "plugin.path": str(folder),
        "file": str(tmp_path / "in.txt"),
        "topic": topic,
        "kafka.bootstrap.servers": bootstrap_servers,
    }

    with pytest.raises(Exception) as refused:  # at load(), or when the query starts
        run_available_now(spark, options, tmp_path / "ck")

    message = str(refused.value)
    assert connector in message and str(folder) in message, message
    assert read_committed(topic, timeout_s=5) == []
