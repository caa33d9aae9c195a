"""Connector classes for the herder: resolution, config validation and Connect's plugin shapes.

Every class name here comes from a request or the config topic, so `Plugins` resolves only the
shipped connectors, classes in the packages of ``plugin.packages``
(`registry.resolve_plugin_class`) and the Java connectors of ``plugin.path``
(`herder.java_plugins`, which also says which wins a name); nothing else is imported.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from spark_eos_connect.api.config import ConfigDef, ConfigKey, ConfigType, ConfigValueReport
from spark_eos_connect.api.connector import Connector
from spark_eos_connect.errors import ConfigError, EosConnectError
from spark_eos_connect.herder.config_infos import merged_config_infos
from spark_eos_connect.herder.errors import BadRequestError
from spark_eos_connect.herder.java_plugins import JavaPlugins, merged_plugin_infos
from spark_eos_connect.jvm_tasks.catalog import JavaConnectorPlugin
from spark_eos_connect.plugins.connectors import (
    PLUGIN_PACKAGES,
    connector_type,
    is_dotted_path,
    known_connectors,
    resolve_connector_class,
    resolve_plugin_class,
)
from spark_eos_connect.plugins.loader import class_path
from spark_eos_connect.runtime.config.framework_config import CONNECTOR_FRAMEWORK_CONFIG
from spark_eos_connect.runtime.config.option_keys import lowered

log = logging.getLogger(__name__)

CONNECTOR_CLASS = "connector.class"
COMMON_GROUP = "Common"

PLUGIN_CONFIG = ConfigDef().define(
    PLUGIN_PACKAGES,
    ConfigType.LIST,
    "",
    None,
    "medium",
    "Python packages (comma-separated, e.g. `mycompany.connectors`) whose connector classes "
    "`eosconnect rest` and the admin commands may load by dotted path, as Connect loads only "
    "the plugins found on its `plugin.path`; the shipped connectors are always available. Any "
    "other `connector.class` is refused with 400 and its module is never imported, also for a "
    "connector a query registered (its offsets then cannot be altered or reset here, and only "
    "options named like secrets are masked). "
    "Command line: `--plugin-packages`.",
)
"""The herder's own option (the REST API and the admin commands)."""


def plugin_packages(value: str | Iterable[str]) -> tuple[str, ...]:
    """The packages of a ``plugin.packages`` value (comma-separated strings, or a list of them);
    `ConfigError` naming the option for anything that is not a dotted Python path."""
    given = [value] if isinstance(value, str) else list(value)
    items = [part.strip() for item in given for part in item.split(",")]
    packages = tuple(dict.fromkeys(item for item in items if item))
    bad = [package for package in packages if not is_dotted_path(package)]
    if bad:
        raise ConfigError(
            f"{PLUGIN_PACKAGES} must list Python packages (dotted names such as "
            f"mycompany.connectors), got {', '.join(repr(b) for b in bad)}"
        )
    return packages


def _framework_reports(
    props: Mapping[str, Any],
) -> list[tuple[ConfigKey, ConfigValueReport, str]]:
    return [
        (CONNECTOR_FRAMEWORK_CONFIG.keys[report.name], report, COMMON_GROUP)
        for report in CONNECTOR_FRAMEWORK_CONFIG.validate(lowered(props))
    ]


def _reports(
    connector: Connector, props: Mapping[str, Any]
) -> tuple[list[tuple[ConfigKey, ConfigValueReport, str]], int]:
    entries = _framework_reports(props)
    own = connector.config_def()
    for report in connector.validate(props):
        key = own.keys.get(report.name)
        if key is not None and report.name not in CONNECTOR_FRAMEWORK_CONFIG:
            entries.append((key, report, key.group or ""))
    errors = sum(len(report.errors) for _, report, _ in entries)
    return entries, errors


def _groups(entries: Iterable[tuple[ConfigKey, ConfigValueReport, str]]) -> list[str]:
    return list(dict.fromkeys(group for _, _, group in entries if group))


def _config_info(key: ConfigKey, report: ConfigValueReport, group: str) -> dict[str, Any]:
    return {"definition": _definition(key, group), "value": report.to_dict()}


def _definition(key: ConfigKey, group: str) -> dict[str, Any]:
    default = None if key.required else ConfigValueReport(key.name, key.default).to_dict()["value"]
    return {
        "name": key.name,
        "type": key.type.name,
        "required": key.required,
        "default_value": default,
        "importance": key.importance.upper(),
        "documentation": key.doc,
        "group": group or None,
        "width": "NONE",
        "display_name": key.name,
        "dependents": [],
        "order_in_group": -1,
    }


@dataclass(frozen=True)
class Plugins:
    """The connector classes the herder may use: the shipped ones, those in `packages`, and
    the Java connectors of `java` (a ``plugin.path``)."""

    packages: tuple[str, ...] = ()
    """``plugin.packages``: packages whose classes may be named by dotted path."""
    java: JavaPlugins | None = field(default=None, compare=False)
    """``plugin.path``'s Java connectors (None without one)."""

    def _python_answers(self, name: str) -> bool:
        try:
            resolve_plugin_class(name, self.packages)
        except EosConnectError:
            return False
        return True

    def java_plugin(self, name: str) -> JavaConnectorPlugin | None:
        """The Java connector the class name `name` stands for (`herder.java_plugins`)."""
        if self.java is None:
            return None
        return self.java.standing_for(name, self._python_answers)

    def _load_java(self, plugin: JavaConnectorPlugin) -> Connector:
        if plugin.type != "source":
            raise BadRequestError(
                f"Connector class {plugin.class_name} is a Java sink connector from plugin.path "
                f"{self.java.entries if self.java else []}: only source connectors run as Java "
                "plugins"
            )
        assert self.java is not None
        from spark_eos_connect.jvm_tasks.connector import java_source_connector_class

        return java_source_connector_class(plugin.class_name, self.java.entries)()

    def load(self, props: Mapping[str, Any]) -> Connector:
        """A new instance of the config's ``connector.class``; `BadRequestError` if it cannot be
        had (an unknown name's message lists the known connectors and ``plugin.packages``)."""
        name = props.get(CONNECTOR_CLASS)
        if not isinstance(name, str) or not name.strip():
            known = ", ".join(known_connectors())
            raise BadRequestError(
                f"Missing required configuration {CONNECTOR_CLASS}: one of the known connectors "
                f"({known}) or a dotted path package.module.Class in a package of "
                f"{PLUGIN_PACKAGES}"
            )
        try:
            java = self.java_plugin(name)
            if java is not None:
                return self._load_java(java)
            cls = resolve_plugin_class(name, self.packages)
        except BadRequestError:
            raise
        except EosConnectError as exc:
            raise BadRequestError(str(exc)) from exc
        try:
            return cls()
        except Exception as exc:  # a plugin whose constructor fails
            raise BadRequestError(
                f"Connector class {name.strip()!r} cannot be instantiated: "
                f"{type(exc).__name__}: {exc}"
            ) from exc

    def kind_of(self, props: Mapping[str, Any]) -> str:
        """``source`` or ``sink``: from the class if it resolves, else sinks have topics."""
        try:
            kind = connector_type(type(self.load(props)))
        except BadRequestError:
            kind = "unknown"
        if kind == "unknown":
            return "sink" if ("topics" in props or "topics.regex" in props) else "source"
        return kind

    def definitions(self, props: Mapping[str, Any]) -> list[ConfigDef]:
        """The framework's and (if the class resolves) the connector's option definitions."""
        result = [CONNECTOR_FRAMEWORK_CONFIG]
        with contextlib.suppress(BadRequestError, NotImplementedError):
            result.append(self.load(props).config_def())
        return result

    def check_config(self, props: Mapping[str, Any]) -> Connector:
        """Validate a connector config as PUT/POST do; `BadRequestError` listing every problem
        (a Java plugin's as its `validate` endpoint lists them)."""
        connector = self.load(props)
        java = self.java_plugin(str(props.get(CONNECTOR_CLASS)))
        if java is not None:
            infos = self.validate(java.class_name, props)
            count = infos["error_count"]
            errors = [e for c in infos["configs"] for e in (c["value"] or {}).get("errors", [])]
        else:
            entries, count = _reports(connector, props)
            errors = [e for _, report, _ in entries for e in report.errors]
        if count:
            problems = [f"  - {e}" for e in errors]
            raise BadRequestError(
                f"Connector configuration is invalid and contains the following {count} "
                "error(s):\n" + "\n".join(problems) + "\nThe same list is available from PUT "
                "/connector-plugins/{plugin}/config/validate"
            )
        return connector

    def _identity(self, name: str) -> object:
        """What `name` stands for: a Java plugin's class name, or a Python class."""
        java = self.java_plugin(name)
        return java.class_name if java is not None else type(self.load({CONNECTOR_CLASS: name}))

    def validate(self, plugin: str, props: Mapping[str, Any]) -> dict[str, Any]:
        """Connect's ``ConfigInfos`` for `props` checked against `plugin` (a class or alias)."""
        given = props.get(CONNECTOR_CLASS)
        requested = self._identity(plugin)
        if given is not None and given != plugin and self._identity(given) != requested:
            raise BadRequestError(
                f"Included connector type {given} does not match request type {plugin}"
            )
        checked = {**props, CONNECTOR_CLASS: given or plugin}
        java = self.java_plugin(plugin)
        if java is not None and self.java is not None:
            framework = _framework_reports(checked)
            strings = {k: str(v) for k, v in checked.items() if v is not None}
            return merged_config_infos(
                java.class_name,
                [_config_info(*entry) for entry in framework],
                _groups(framework),
                self.java.config_infos(java, strings),
            )
        connector = self.load({CONNECTOR_CLASS: plugin})
        entries, count = _reports(connector, checked)
        return {
            "name": class_path(type(connector)),
            "error_count": count,
            "groups": _groups(entries),
            "configs": [_config_info(*entry) for entry in entries],
        }

    def connector_plugins(self) -> list[dict[str, str]]:
        """``GET /connector-plugins``: the shipped connectors and ``plugin.path``'s."""
        python = connector_plugins()
        if self.java is None:
            return python
        return merged_plugin_infos(python, self.java.listed(), self._python_answers)


def connector_plugins() -> list[dict[str, str]]:
    """``[{"class","type","version"}]`` for every shipped connector that can be loaded."""
    plugins = []
    for short, path in known_connectors().items():
        try:
            cls = resolve_connector_class(path)
            version = cls().version()
        except Exception as exc:  # a plugin that cannot load is left out, as Connect does
            log.warning("Connector plugin %s (%s) cannot be loaded: %s", short, path, exc)
            continue
        plugins.append({"class": path, "type": connector_type(cls), "version": version})
    return plugins
