"""Connector classes for the herder: resolution, config validation and Connect's plugin shapes.

Every class name here comes from a request or the config topic, so `Plugins` resolves only the
shipped connectors and classes in the packages of ``plugin.packages``
(`registry.resolve_plugin_class`); nothing else is imported.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from spark_eos_connect.api.config import ConfigDef, ConfigKey, ConfigType, ConfigValueReport
from spark_eos_connect.api.connector import Connector
from spark_eos_connect.errors import ConfigError, EosConnectError
from spark_eos_connect.herder.errors import BadRequestError
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


def _reports(
    connector: Connector, props: Mapping[str, Any]
) -> tuple[list[tuple[ConfigKey, ConfigValueReport, str]], int]:
    framework_props = lowered(props)
    entries = [
        (CONNECTOR_FRAMEWORK_CONFIG.keys[report.name], report, COMMON_GROUP)
        for report in CONNECTOR_FRAMEWORK_CONFIG.validate(framework_props)
    ]
    own = connector.config_def()
    for report in connector.validate(props):
        key = own.keys.get(report.name)
        if key is not None and report.name not in CONNECTOR_FRAMEWORK_CONFIG:
            entries.append((key, report, key.group or ""))
    errors = sum(len(report.errors) for _, report, _ in entries)
    return entries, errors


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
    """The connector classes the herder may use: the shipped ones and those in `packages`."""

    packages: tuple[str, ...] = ()
    """``plugin.packages``: packages whose classes may be named by dotted path."""

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
            cls = resolve_plugin_class(name, self.packages)
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
        """Validate a connector config as PUT/POST do; `BadRequestError` listing every problem."""
        connector = self.load(props)
        entries, count = _reports(connector, props)
        if count:
            problems = [f"  - {e}" for _, report, _ in entries for e in report.errors]
            raise BadRequestError(
                f"Connector configuration is invalid and contains the following {count} "
                "error(s):\n" + "\n".join(problems) + "\nThe same list is available from PUT "
                "/connector-plugins/{plugin}/config/validate"
            )
        return connector

    def validate(self, plugin: str, props: Mapping[str, Any]) -> dict[str, Any]:
        """Connect's ``ConfigInfos`` for `props` checked against `plugin` (a class or alias)."""
        given = props.get(CONNECTOR_CLASS)
        connector = self.load({CONNECTOR_CLASS: plugin})
        if given is not None and given != plugin:
            other = self.load(props)
            if type(other) is not type(connector):
                raise BadRequestError(
                    f"Included connector type {given} does not match request type {plugin}"
                )
        entries, count = _reports(connector, {**props, CONNECTOR_CLASS: given or plugin})
        groups: list[str] = []
        for _, _, group in entries:
            if group and group not in groups:
                groups.append(group)
        return {
            "name": class_path(type(connector)),
            "error_count": count,
            "groups": groups,
            "configs": [
                {"definition": _definition(key, group), "value": report.to_dict()}
                for key, report, group in entries
            ],
        }


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
