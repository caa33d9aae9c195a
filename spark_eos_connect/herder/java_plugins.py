"""The Java connectors of the herder's `plugin.path` (Connect's worker setting), and which of
them a connector class name stands for.

The rule is the data source's (`jvm_tasks.resolution`): a class name `plugin.path` holds is
that Java plugin, not a Python connector answering to the same name. Only source connectors
run as Java plugins, so a Java sink connector is that plugin only where no Python connector
answers to its name (Connect's `FileStreamSinkConnector` stays this project's, which a sink
query runs). The connectors are asked of the driver's JVM task host once per herder.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from spark_eos_connect.jvm_tasks.catalog import (
    JavaConnectorPlugin,
    java_config_infos,
    java_connector_plugins,
)
from spark_eos_connect.jvm_tasks.resolution import checked_plugin_path

PythonAnswers = Callable[[str], bool]
"""Whether a Python connector answers to a class name."""


def wins(plugin: JavaConnectorPlugin, python_answers: PythonAnswers) -> bool:
    """Whether `plugin`'s class name stands for the Java plugin (the rule above)."""
    return plugin.type == "source" or not python_answers(plugin.class_name)


def merged_plugin_infos(
    python: list[dict[str, str]],
    java: Sequence[JavaConnectorPlugin],
    python_answers: PythonAnswers,
) -> list[dict[str, str]]:
    """`GET /connector-plugins`: the Python connectors' `PluginInfo`s, then the Java plugins'
    that win their names; a class listed by both is listed once, as the Java plugin."""
    shown = [plugin.info() for plugin in java if wins(plugin, python_answers)]
    java_classes = {info["class"] for info in shown}
    return [info for info in python if info["class"] not in java_classes] + shown


class JavaPlugins:
    """The Java connectors of one `plugin.path`, listed by the driver's JVM task host on first
    use and kept."""

    def __init__(self, entries: Sequence[str]) -> None:
        self.entries = list(entries)
        self._listed: list[JavaConnectorPlugin] | None = None
        self._lock = threading.Lock()

    @classmethod
    def for_plugin_path(cls, value: str | None) -> JavaPlugins | None:
        """None without a `plugin.path`; `PluginPathError` naming an entry that is missing."""
        entries = checked_plugin_path(value)
        return cls(entries) if entries else None

    def listed(self) -> list[JavaConnectorPlugin]:
        """Every connector class the `plugin.path` holds."""
        with self._lock:
            if self._listed is None:
                self._listed = java_connector_plugins(self.entries)
            return list(self._listed)

    def standing_for(self, name: str, python_answers: PythonAnswers) -> JavaConnectorPlugin | None:
        """The Java plugin the class name `name` stands for, None if it is no Java plugin's."""
        stripped = name.strip()
        for plugin in self.listed():
            if plugin.class_name == stripped and wins(plugin, python_answers):
                return plugin
        return None

    def config_infos(self, plugin: JavaConnectorPlugin, config: Mapping[str, str]) -> Any:
        """`plugin`'s own part of Connect's `ConfigInfos` for `config` (`jvm_tasks.catalog`)."""
        return java_config_infos(plugin.class_name, self.entries, config)
