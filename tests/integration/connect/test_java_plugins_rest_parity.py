"""`GET /connector-plugins` and `PUT /connector-plugins/{class}/config/validate` for Java
plugins, against a Kafka Connect 4.3.1 worker's: the project's herder has Connect's file plugin
and Debezium's PostgreSQL connector on its `plugin.path` (the worker has the first on its class
path, the second on its own `plugin.path`). Both list them with the same type and version, and
for the same config both answer the same error count and, option by option, the same
definition and verdict for every option the plugin defines."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from spark_eos_connect.apps.connect_worker import ConnectWorker
from spark_eos_connect.jvm import jars
from spark_eos_connect.runtime.config.framework_config import CONNECTOR_FRAMEWORK_CONFIG

from .conftest import CONNECT_MARKS, Project, project_cluster
from .parity import Pair

pytestmark = CONNECT_MARKS

FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
POSTGRES = "io.debezium.connector.postgresql.PostgresConnector"
SECRET = "s3cret-of-the-test"


@pytest.fixture
def pair(
    connect_worker: ConnectWorker,
    kafka_config: dict[str, Any],
    unique_name: Callable[[str], str],
) -> Iterator[Pair]:
    """The Connect worker, and the project's herder with both plugin folders on plugin.path."""
    folders = ",".join(str(jars.plugin_path(b)) for b in ("connect-file", "debezium"))
    project: Project = project_cluster(kafka_config, unique_name("java"), plugin_path=folders)
    try:
        yield Pair(connect_worker, project.rest)
    finally:
        project.herder.close()


def test_java_plugins_are_listed_as_connect_lists_them(pair: Pair) -> None:
    plugins = pair.send("GET", "/connector-plugins").same_status(200)
    for plugin in (FILE_SOURCE, POSTGRES):
        shown = [
            [entry for entry in body if entry["class"] == plugin]
            for body in (plugins.connect.body, plugins.project.body)
        ]
        assert len(shown[1]) == 1, plugins.report(f"{plugin} is not listed once")
        assert shown[0] == shown[1], plugins.report(f"{plugin} differs")


def configs(tmp_path: Path) -> list[tuple[str, dict[str, str]]]:
    return [
        (FILE_SOURCE, {"name": "n", "file": str(tmp_path / "in.txt")}),  # no topic
        (FILE_SOURCE, {"name": "n", "topic": "t", "batch.size": "-"}),  # not a number
        (POSTGRES, {"name": "n", "database.password": SECRET, "database.port": "x"}),
    ]


@pytest.mark.parametrize("case", [0, 1, 2])
def test_a_java_plugins_config_is_validated_as_connect_validates_it(
    pair: Pair, tmp_path: Path, case: int
) -> None:
    plugin, config = configs(tmp_path)[case]
    path = f"/connector-plugins/{plugin}/config/validate"
    exchange = pair.send("PUT", path, {"connector.class": plugin, **config}).same_status(200)
    connect, project = exchange.connect.body, exchange.project.body
    assert project["name"] == connect["name"] == plugin, exchange.report("")
    assert project["error_count"] == connect["error_count"] > 0, exchange.report("error counts")
    by_name = [
        {e["definition"]["name"]: e for e in body["configs"] if e["definition"]}
        for body in (connect, project)
    ]
    own = [name for name in by_name[1] if name not in CONNECTOR_FRAMEWORK_CONFIG]
    assert own, exchange.report("the plugin's own options are missing")
    for name in own:
        assert by_name[1][name] == by_name[0].get(name), exchange.report(f"{name} differs")
    groups = [g for g in project["groups"] if g != "Common"]
    assert [g for g in connect["groups"] if g in groups] == groups, exchange.report("groups")
    assert SECRET not in repr(project)
