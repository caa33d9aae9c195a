"""A Java plugin that throws while its records are processed (here Connect's ExtractField
transform, given a string where it wants a struct) fails the query: its task's status is FAILED
with the Java stack trace, the error names the task class and the plugin.path, and nothing of
the failed batch is committed."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from spark_eos_connect.jvm import jars

pytestmark = pytest.mark.integration

JAVA_FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
EXTRACT = "org.apache.kafka.connect.transforms.ExtractField$Value"


def test_a_java_task_failing_is_failed_with_its_java_trace_and_commits_nothing(
    spark: Any,
    tmp_path: Path,
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    read_committed: Callable[..., list[Any]],
    unique_name: Callable[[str], str],
) -> None:
    source = tmp_path / "in.txt"
    source.write_text("a line, not a struct\n")
    topic, name = topic_factory("java-fails"), unique_name("java-fails")
    plugin_path = str(jars.plugin_path("connect-file"))
    options = {
        "name": name,
        "connector.class": JAVA_FILE_SOURCE,
        "plugin.path": plugin_path,
        "file": str(source),
        "topic": topic,
        "transforms": "extract",
        "transforms.extract.type": EXTRACT,
        "transforms.extract.field": "x",
        "kafka.bootstrap.servers": bootstrap_servers,
    }
    stream = spark.readStream.format("eosconnect").options(**options).load()
    query = (
        stream.writeStream.format("eosconnect")
        .options(name=name, **{"kafka.bootstrap.servers": bootstrap_servers})
        .option("checkpointLocation", str(tmp_path / "ck"))
        .trigger(availableNow=True)
        .start()
    )
    try:
        with pytest.raises(Exception) as failed:  # the query's StreamingQueryException
            query.awaitTermination(180)
    finally:
        query.stop()

    message = str(failed.value)
    assert "org.apache.kafka.connect.file.FileStreamSourceTask" in message, message
    assert plugin_path in message, message
    statuses = [
        json.loads(r.value)
        for r in read_committed("eosconnect-status")
        if r.key == f"status-task-{name}-0".encode() and r.value
    ]
    failures = [s for s in statuses if s["state"] == "FAILED"]
    assert failures, statuses
    assert "org.apache.kafka.connect.transforms.ExtractField.apply" in failures[-1]["trace"]
    assert read_committed(topic, timeout_s=5) == []
