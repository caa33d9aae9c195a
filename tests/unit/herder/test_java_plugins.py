"""Which of plugin.path's Java connectors a class name stands for, the listing that merges them
with the Python connectors, and the herder's `Plugins` over a `JavaPlugins` whose JVM answers
are given (no JVM starts here; tests/integration/rest/test_java_connector_plugins.py asks a
real one)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from spark_eos_connect.herder.errors import BadRequestError
from spark_eos_connect.herder.java_plugins import JavaPlugins, merged_plugin_infos, wins
from spark_eos_connect.herder.plugins import Plugins
from spark_eos_connect.jvm_tasks.catalog import JavaConnectorPlugin
from spark_eos_connect.jvm_tasks.errors import PluginPathError

FILE_SOURCE = JavaConnectorPlugin(
    "org.apache.kafka.connect.file.FileStreamSourceConnector", "source", "4.3.1"
)
FILE_SINK = JavaConnectorPlugin(
    "org.apache.kafka.connect.file.FileStreamSinkConnector", "sink", "4.3.1"
)
JDBC_SINK = JavaConnectorPlugin("io.example.JdbcSinkConnector", "sink", "10.0")


class GivenJavaPlugins(JavaPlugins):
    """`JavaPlugins` whose listing and ConfigInfos part are given."""

    def __init__(self, listed: list[JavaConnectorPlugin], part: Mapping[str, Any]) -> None:
        super().__init__(["/plugins"])
        self._given, self._part = listed, part
        self.asked: list[dict[str, str]] = []

    def listed(self) -> list[JavaConnectorPlugin]:
        return list(self._given)

    def config_infos(self, plugin: JavaConnectorPlugin, config: Mapping[str, str]) -> Any:
        self.asked.append(dict(config))
        return self._part


def python_answers(name: str) -> bool:
    return name.endswith("FileStreamSinkConnector") or name.endswith("FileStreamSourceConnector")


def test_a_source_class_plugin_path_holds_is_the_java_plugin() -> None:
    assert wins(FILE_SOURCE, python_answers)  # though a Python connector answers to it


def test_a_java_sink_is_the_plugin_only_where_no_python_connector_answers() -> None:
    assert not wins(FILE_SINK, python_answers)
    assert wins(JDBC_SINK, python_answers)


def test_the_listing_holds_each_class_once_the_java_plugin_winning() -> None:
    python = [
        {"class": "my.FileStreamSourceConnector", "type": "source", "version": "0.1.0"},
        {"class": FILE_SOURCE.class_name, "type": "source", "version": "0.1.0"},
    ]
    listed = merged_plugin_infos(python, [FILE_SINK, JDBC_SINK, FILE_SOURCE], python_answers)
    assert listed == [
        python[0],
        {"class": JDBC_SINK.class_name, "type": "sink", "version": "10.0"},
        {"class": FILE_SOURCE.class_name, "type": "source", "version": "4.3.1"},
    ]


def test_a_missing_plugin_path_folder_is_refused_naming_it(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    with pytest.raises(PluginPathError, match=str(missing)):
        JavaPlugins.for_plugin_path(f"{tmp_path},{missing}")
    assert JavaPlugins.for_plugin_path(None) is None
    given = JavaPlugins.for_plugin_path(f" {tmp_path} , ")
    assert given is not None and given.entries == [str(tmp_path)]


def topic_part(errors: list[str]) -> dict[str, Any]:
    definition = {"name": "topic", "type": "STRING", "required": True, "group": None}
    value = {"name": "topic", "value": None, "recommended_values": [], "errors": errors}
    return {"groups": [], "configs": [{"definition": definition, "value": value}]}


def test_plugins_list_the_java_connectors_next_to_the_python_ones() -> None:
    plugins = Plugins(java=GivenJavaPlugins([FILE_SINK, FILE_SOURCE], topic_part([])))
    listed = plugins.connector_plugins()
    assert {"class": FILE_SOURCE.class_name, "type": "source", "version": "4.3.1"} in listed
    assert FILE_SINK.class_name not in [info["class"] for info in listed]  # Python's runs
    assert len({info["class"] for info in listed}) == len(listed)


def test_validating_a_java_class_answers_its_own_verdict_with_the_frameworks() -> None:
    missing = 'Missing required configuration "topic" which has no default value.'
    java = GivenJavaPlugins([FILE_SOURCE], topic_part([missing]))
    infos = Plugins(java=java).validate(FILE_SOURCE.class_name, {"name": "n", "tasks.max": 1})
    assert infos["name"] == FILE_SOURCE.class_name
    assert infos["error_count"] == 1
    assert infos["groups"] == ["Common"]
    names = [entry["definition"]["name"] for entry in infos["configs"]]
    assert names[:2] == ["name", "connector.class"] and names[-1] == "topic"
    assert java.asked == [
        {"name": "n", "tasks.max": "1", "connector.class": FILE_SOURCE.class_name}
    ]


def test_creating_a_java_connector_is_refused_with_its_own_errors() -> None:
    missing = 'Missing required configuration "topic" which has no default value.'
    plugins = Plugins(java=GivenJavaPlugins([FILE_SOURCE], topic_part([missing])))
    config = {"name": "n", "connector.class": FILE_SOURCE.class_name}
    with pytest.raises(BadRequestError, match="contains the following 1 error") as refused:
        plugins.check_config(config)
    assert missing in str(refused.value)


def test_a_java_sink_cannot_be_loaded_and_a_python_sink_keeps_its_name() -> None:
    plugins = Plugins(java=GivenJavaPlugins([FILE_SINK, JDBC_SINK], topic_part([])))
    with pytest.raises(BadRequestError, match="only source connectors run as Java plugins"):
        plugins.load({"connector.class": JDBC_SINK.class_name})
    assert plugins.kind_of({"connector.class": FILE_SINK.class_name}) == "sink"
    assert plugins.java_plugin(FILE_SINK.class_name) is None


def test_a_config_naming_another_class_is_refused() -> None:
    plugins = Plugins(java=GivenJavaPlugins([FILE_SOURCE], topic_part([])))
    with pytest.raises(BadRequestError, match="does not match request type"):
        plugins.validate(FILE_SOURCE.class_name, {"connector.class": "FileStreamSource"})
