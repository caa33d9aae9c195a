"""`errors.tolerance` for a Java task: the test plugin `FailingSourceConnector` writes values
through Connect's Cast transform (to int32: `x` fails it) and the test plugins' `RefusingConverter`
(refusing 13), both run in the JVM task host. Under `errors.tolerance=all` the records they fail
on are skipped (a source connector has no dead letter queue) and the others are delivered once
each, the skipped ones' source offsets committed with them; under `none` the query fails naming
the stage, its class and the record (topic, source partition and offset), the task is FAILED with
the Java trace, and nothing is committed."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ..java_test_plugins import FAILING, FAILING_TASK, REFUSING_CONVERTER, plugin_folder
from .queries import offsets, own_internal_topics, run_available_now, statuses

pytestmark = pytest.mark.integration

CAST = "org.apache.kafka.connect.transforms.Cast$Value"


def options_for(
    name: str, topic: str, bootstrap: str, values: str, tolerance: str
) -> dict[str, str]:
    """`values` cast to int32, then converted by the RefusingConverter (refusing 13)."""
    return {
        "name": name,
        "connector.class": FAILING,
        "plugin.path": str(plugin_folder()),
        "topic": topic,
        "values": values,
        "transforms": "toNumber",
        "transforms.toNumber.type": CAST,
        "transforms.toNumber.spec": "int32",
        "value.converter": REFUSING_CONVERTER,
        "value.converter.refuse": "13",
        "errors.tolerance": tolerance,
        "kafka.bootstrap.servers": bootstrap,
        **own_internal_topics(name),
    }


def test_under_tolerance_all_the_records_a_java_stage_fails_on_are_skipped(
    spark: Any,
    tmp_path: Path,
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    read_committed: Callable[..., list[Any]],
    unique_name: Callable[[str], str],
) -> None:
    topic, name = topic_factory("java-tolerant"), unique_name("java-tolerant")
    options = options_for(name, topic, bootstrap_servers, "1,x,3,5,13", "all")

    run_available_now(spark, options, tmp_path / "ck")

    assert [r.value for r in read_committed(topic)] == [b"1", b"3", b"5"]
    assert offsets(read_committed, options)[-1] == {"position": 5}  # 13's: it was skipped


@pytest.mark.parametrize(
    ("values", "failing"),
    [
        ("1,x,3", f"stage TRANSFORMATION with class {CAST} (transforms.toNumber)"),
        ("1,13,3", f"stage VALUE_CONVERTER with class {REFUSING_CONVERTER}"),
    ],
    ids=["transform", "converter"],
)
def test_under_tolerance_none_the_task_fails_naming_the_stage_and_the_record(
    values: str,
    failing: str,
    spark: Any,
    tmp_path: Path,
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    read_committed: Callable[..., list[Any]],
    unique_name: Callable[[str], str],
) -> None:
    topic, name = topic_factory("java-intolerant"), unique_name("java-intolerant")
    options = options_for(name, topic, bootstrap_servers, values, "none")

    with pytest.raises(Exception) as failed:  # the query's StreamingQueryException
        run_available_now(spark, options, tmp_path / "ck")

    named = (
        f"Tolerance exceeded in error handler: {failing} failed on the record of topic "
        f"{topic}, source partition {{topic={topic}}}, source offset {{position=2}}"
    )
    message = str(failed.value)
    assert FAILING_TASK in message and options["plugin.path"] in message, message
    assert named in message, message
    task_failures = [s for s in statuses(read_committed, options, 0) if s["state"] == "FAILED"]
    assert task_failures and named in task_failures[-1]["trace"], task_failures
    cause = "NumberFormatException" if "x" in values else "RefusingConverter refuses 13"
    assert cause in task_failures[-1]["trace"]
    assert read_committed(topic, timeout_s=5) == []
    assert offsets(read_committed, options) == []
