"""A Java connector that throws in its `validate`, `start` or `taskConfigs`, or whose task throws
in its `start` (the test plugin `FailingSourceConnector`, its option `fail.in`), fails the query
with an error naming the class that threw and the plugin folder, carrying the Java exception, its
message and its trace; the connector (for a task, the task) is FAILED in the status topic with
the Java trace, and nothing reaches the topic or the offsets topic. A `validate` that throws
refuses `load()` before the query writes anything, as a Connect worker refuses to create such a
connector (tests/integration/rest/test_java_connector_plugins.py: its REST API)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from spark_eos_connect.kafka.clients import admin_client

from ..java_test_plugins import FAILING, FAILING_TASK, plugin_folder
from .queries import offsets, own_internal_topics, run_available_now, statuses

pytestmark = pytest.mark.integration

THROWS = {
    "validate": f"{FAILING}.validate",
    "start": f"{FAILING}.start",
    "taskConfigs": f"{FAILING}.taskConfigs",
    "task.start": f"{FAILING_TASK}.start",
}
"""`fail.in` -> the Java method that throws."""


@pytest.mark.parametrize("fail_in", list(THROWS))
def test_a_java_connector_or_task_throwing_fails_naming_it_with_its_java_trace(
    fail_in: str,
    spark: Any,
    tmp_path: Path,
    bootstrap_servers: str,
    kafka_config: dict[str, Any],
    topic_factory: Callable[..., str],
    read_committed: Callable[..., list[Any]],
    unique_name: Callable[[str], str],
) -> None:
    topic, name = topic_factory("java-throws"), unique_name("java-throws")
    folder = str(plugin_folder())
    options = {
        "name": name,
        "connector.class": FAILING,
        "plugin.path": folder,
        "topic": topic,
        "fail.in": fail_in,
        "values": "never,written",
        "kafka.bootstrap.servers": bootstrap_servers,
        **own_internal_topics(name),
    }

    with pytest.raises(Exception) as failed:  # load()'s AnalysisException, or the query's
        run_available_now(spark, options, tmp_path / "ck")

    method = THROWS[fail_in]
    thrower = method.rpartition(".")[0]
    java_exception = f"java.lang.RuntimeException: failing in {fail_in} as fail.in asks"
    message = str(failed.value)
    assert thrower in message and folder in message, message
    assert java_exception in message, message
    assert f"{method}(" in message, message  # a frame of the Java trace
    assert read_committed(topic, timeout_s=5) == []
    if fail_in == "validate":  # refused before the query started: no internal topic either
        listed = admin_client(kafka_config).list_topics(timeout=10).topics
        assert not set(own_internal_topics(name).values()) & set(listed)
        return
    task = 0 if fail_in == "task.start" else None
    failures = [s for s in statuses(read_committed, options, task) if s["state"] == "FAILED"]
    assert failures, statuses(read_committed, options, task)
    assert java_exception in failures[-1]["trace"] and f"{method}(" in failures[-1]["trace"]
    assert statuses(read_committed, options)[-1]["state"] == "FAILED"  # the connector's
    assert offsets(read_committed, options) == []
