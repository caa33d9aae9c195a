"""What a `plugin.path` offers, asked of the driver's JVM task host (`client.shared_host`, the
JVM the Java connectors' driver side runs in): its connector classes with their types and
versions, and a connector's own part of Connect's `ConfigInfos` for a config (its `ConfigDef`
and `validate`). The protocol: `TaskHostMain`'s class comment (CONNECTOR_PLUGINS,
CONFIG_INFOS). The host's client is imported on first use (the herder imports this module)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from spark_eos_connect.jvm_tasks.errors import JavaPluginError
from spark_eos_connect.jvm_tasks.wire import CONFIG_INFOS, CONNECTOR_PLUGINS, FrameWriter


@dataclass(frozen=True)
class JavaConnectorPlugin:
    """One connector class a `plugin.path` holds."""

    class_name: str
    type: str
    """`source` or `sink`."""
    version: str
    """As the plugin's `version()` reports it."""

    def info(self) -> dict[str, str]:
        """Connect's `PluginInfo` JSON."""
        return {"class": self.class_name, "type": self.type, "version": self.version}


def java_connector_plugins(plugin_path: Sequence[str]) -> list[JavaConnectorPlugin]:
    """The connector classes of `plugin_path` (sinks, then sources, by class name)."""
    from spark_eos_connect.jvm_tasks.client import shared_host

    try:
        reply = shared_host(plugin_path).call(FrameWriter(CONNECTOR_PLUGINS))
    except JavaPluginError as error:
        context = f"listing the connectors of plugin.path {list(plugin_path)} failed"
        raise error.restated(context) from error
    found = [reply.map() for _ in range(reply.i32())]
    return [JavaConnectorPlugin(e["class"], e["type"], e["version"]) for e in found]


def java_config_infos(
    class_name: str, plugin_path: Sequence[str], config: Mapping[str, str]
) -> dict[str, Any]:
    """The Java connector's own part of Connect's `ConfigInfos` for `config`:
    `{"name", "groups", "configs": [{"definition", "value"}], "undefined": [value]}`
    (`undefined`: values its `validate` reported for options it does not define)."""
    from spark_eos_connect.jvm_tasks.client import shared_host

    request = FrameWriter(CONFIG_INFOS).text(class_name).map(dict(config))
    try:
        reply = shared_host(plugin_path).call(request)
    except JavaPluginError as error:
        context = (
            f"Java connector {class_name} (plugin.path {list(plugin_path)}) failed in validate"
        )
        raise error.restated(context) from error
    infos: dict[str, Any] = json.loads(reply.text() or "{}")
    return infos
