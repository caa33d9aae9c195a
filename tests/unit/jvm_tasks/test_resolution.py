"""The rule between a Java plugin and a built-in Python connector: Java whenever plugin.path
holds the class connector.class names; plugin.path scanned as Connect scans it; a missing
folder or a class found nowhere named in the error."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from spark_eos_connect.connectors.file_stream import FileStreamSourceConnector
from spark_eos_connect.errors import ConnectorNotFoundError
from spark_eos_connect.jvm_tasks.connector import JavaSourceConnector
from spark_eos_connect.jvm_tasks.errors import PluginPathError
from spark_eos_connect.jvm_tasks.java_source_task import JavaSourceTask
from spark_eos_connect.jvm_tasks.resolution import (
    plugin_holding,
    plugin_path_entries,
    plugin_stages,
    resolve_with_plugin_path,
    without_stages,
)

JAVA_FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"


def jar(path: Path, *classes: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as archive:
        for name in classes:
            archive.writestr(name.replace(".", "/") + ".class", b"\xca\xfe\xba\xbe")
    return path


def test_plugin_path_entries_are_comma_separated_and_absolute(tmp_path: Path) -> None:
    assert plugin_path_entries(f" {tmp_path}/a , ,{tmp_path}/b") == [
        str(tmp_path / "a"),
        str(tmp_path / "b"),
    ]
    assert plugin_path_entries(None) == [] and plugin_path_entries("") == []


def test_a_class_is_found_in_a_plugin_folder_a_jar_in_an_entry_or_a_jar_entry(
    tmp_path: Path,
) -> None:
    nested = jar(tmp_path / "plugins" / "file" / "lib" / "connect-file.jar", JAVA_FILE_SOURCE)
    direct = jar(tmp_path / "plugins" / "uber.jar", "com.example.Uber")
    alone = jar(tmp_path / "alone.jar", "com.example.Alone")
    entries = [str(tmp_path / "plugins"), str(alone)]

    assert plugin_holding(JAVA_FILE_SOURCE, entries) == nested
    assert plugin_holding("com.example.Uber", entries) == direct
    assert plugin_holding("com.example.Alone", entries) == alone
    assert plugin_holding("com.example.Elsewhere", entries) is None


def test_java_whenever_plugin_path_holds_the_class(tmp_path: Path) -> None:
    jar(tmp_path / "file" / "connect-file.jar", JAVA_FILE_SOURCE)

    java = resolve_with_plugin_path(JAVA_FILE_SOURCE, str(tmp_path), "c")

    assert issubclass(java, JavaSourceConnector)
    assert java.java_class == JAVA_FILE_SOURCE
    assert java.plugin_path == (str(tmp_path),)
    assert java().task_class() is JavaSourceTask
    assert resolve_with_plugin_path(JAVA_FILE_SOURCE, str(tmp_path)) is java  # one class


def test_without_plugin_path_or_the_class_in_it_the_python_connector_runs(
    tmp_path: Path,
) -> None:
    jar(tmp_path / "other" / "other.jar", "com.example.Other")

    assert resolve_with_plugin_path(JAVA_FILE_SOURCE, None) is FileStreamSourceConnector
    assert resolve_with_plugin_path(JAVA_FILE_SOURCE, str(tmp_path)) is FileStreamSourceConnector


def test_a_missing_plugin_folder_is_named_with_the_class(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-folder"
    with pytest.raises(PluginPathError) as refused:
        resolve_with_plugin_path(JAVA_FILE_SOURCE, str(missing))
    assert str(missing) in str(refused.value) and JAVA_FILE_SOURCE in str(refused.value)


def test_a_class_found_nowhere_names_the_plugin_path(tmp_path: Path) -> None:
    jar(tmp_path / "other" / "other.jar", "com.example.Other")
    with pytest.raises(ConnectorNotFoundError) as refused:
        resolve_with_plugin_path("com.example.NoSuchConnector", str(tmp_path))
    message = str(refused.value)
    assert "com.example.NoSuchConnector" in message and str(tmp_path) in message


def test_the_stages_a_java_connectors_plugins_hold_are_theirs_to_check(tmp_path: Path) -> None:
    jar(tmp_path / "plugin" / "p.jar", JAVA_FILE_SOURCE, "com.example.Unwrap", "com.example.Is")
    props = {
        "connector.class": JAVA_FILE_SOURCE,
        "transforms": "unwrap, cast",
        "transforms.unwrap.type": "com.example.Unwrap",
        "transforms.unwrap.mode": "rewrite",
        "transforms.cast.type": "org.apache.kafka.connect.transforms.Cast$Value",
        "transforms.cast.spec": "id:int64",
        "transforms.cast.predicate": "is",
        "transforms.cast.negate": "true",
        "predicates": "is",
        "predicates.is.type": "com.example.Is",
    }

    stages = plugin_stages(props, str(tmp_path))

    assert stages == {
        "transforms.unwrap": "com.example.Unwrap",
        "predicates.is": "com.example.Is",
    }
    assert without_stages(props, stages) == {
        "connector.class": JAVA_FILE_SOURCE,
        "transforms": "cast",
        "transforms.cast.type": "org.apache.kafka.connect.transforms.Cast$Value",
        "transforms.cast.spec": "id:int64",
        "predicates": "",
    }
    assert plugin_stages(props, None) == {}  # no plugin.path: no Java connector
    python = {**props, "connector.class": "FileStreamSource"}
    assert plugin_stages(python, str(tmp_path)) == {}
