"""Connector classes for the herder: resolution, config validation and Connect's plugin shapes."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Mapping
from typing import Any

from spark_eos_connect.api.config import ConfigDef, ConfigKey, ConfigValueReport
from spark_eos_connect.api.connector import Connector
from spark_eos_connect.connectors.registry import (
    connector_type,
    known_connectors,
    resolve_connector_class,
)
from spark_eos_connect.errors import EosConnectError
from spark_eos_connect.herder.errors import BadRequestError
from spark_eos_connect.runtime.framework_config import CONNECTOR_FRAMEWORK_CONFIG

log = logging.getLogger(__name__)

CONNECTOR_CLASS = "connector.class"
COMMON_GROUP = "Common"


def class_path(cls: type) -> str:
    """``package.module.Class`` of `cls`."""
    return f"{cls.__module__}.{cls.__qualname__}"


def load_connector(props: Mapping[str, Any]) -> Connector:
    """A new instance of the config's ``connector.class``; `BadRequestError` if it cannot be had.

    An unknown name's message lists the known connectors.
    """
    name = props.get(CONNECTOR_CLASS)
    if not isinstance(name, str) or not name.strip():
        known = ", ".join(known_connectors())
        raise BadRequestError(
            f"Missing required configuration {CONNECTOR_CLASS}: a dotted Python path "
            f"(package.module.Class) or one of the known connectors: {known}"
        )
    try:
        return resolve_connector_class(name)()
    except EosConnectError as exc:
        raise BadRequestError(str(exc)) from exc


def kind_of(props: Mapping[str, Any]) -> str:
    """``source`` or ``sink``: from the class if it resolves, else sinks are those with topics."""
    try:
        kind = connector_type(type(load_connector(props)))
    except BadRequestError:
        kind = "unknown"
    if kind == "unknown":
        return "sink" if ("topics" in props or "topics.regex" in props) else "source"
    return kind


def definitions(props: Mapping[str, Any]) -> list[ConfigDef]:
    """The framework's and (if the class resolves) the connector's option definitions."""
    result = [CONNECTOR_FRAMEWORK_CONFIG]
    with contextlib.suppress(BadRequestError, NotImplementedError):
        result.append(load_connector(props).config_def())
    return result


def _reports(
    connector: Connector, props: Mapping[str, Any]
) -> tuple[list[tuple[ConfigKey, ConfigValueReport, str]], int]:
    framework_props = {key.lower(): value for key, value in props.items()}
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


def check_config(props: Mapping[str, Any]) -> Connector:
    """Validate a connector config as PUT/POST do; `BadRequestError` listing every problem."""
    connector = load_connector(props)
    entries, count = _reports(connector, props)
    if count:
        problems = [f"  - {e}" for _, report, _ in entries for e in report.errors]
        raise BadRequestError(
            f"Connector configuration is invalid and contains the following {count} error(s):\n"
            + "\n".join(problems)
            + "\nThe same list is available from PUT /connector-plugins/{plugin}/config/validate"
        )
    return connector


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


def validate_config(plugin: str, props: Mapping[str, Any]) -> dict[str, Any]:
    """Connect's ``ConfigInfos`` for `props` checked against plugin `plugin` (a class or alias)."""
    given = props.get(CONNECTOR_CLASS)
    connector = load_connector({CONNECTOR_CLASS: plugin})
    if given is not None and given != plugin:
        other = load_connector(props)
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
