"""Which runs, a Java plugin or a built-in Python connector: the rule.

**Java whenever `plugin.path` holds the class `connector.class` names.** With `plugin.path`
set, its entries are scanned as Connect scans them (each sub-folder of an entry is one plugin,
each jar directly in an entry too, an entry that is a jar is one plugin) for that class; found,
the Java plugin runs, under the same exactly-once machinery as the Python connectors. Not
found, the name resolves as without `plugin.path`: to a Python connector (the shipped ones
answer to Connect's class names, e.g. `org.apache.kafka.connect.file.FileStreamSourceConnector`),
else it is an error naming the class and the folders. An entry that does not exist is an
error naming it. Without `plugin.path`, no Java plugin ever runs.

A Java connector's converter classes follow the rule of `stand_ins`: the plugins, then the
JVM task host, then this project's converters of Connect's and Confluent's class names;
`java_converter_problems` checks them on the driver.
"""

from __future__ import annotations

import logging
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from spark_eos_connect.api.connector import Connector
from spark_eos_connect.converters import CONVERTERS
from spark_eos_connect.errors import ConnectorNotFoundError
from spark_eos_connect.jvm_tasks.errors import PluginPathError
from spark_eos_connect.jvm_tasks.stand_ins import ON_THE_TASK_HOST, STAND_INS
from spark_eos_connect.plugins.connectors import resolve_connector_class
from spark_eos_connect.plugins.loader import class_path

log = logging.getLogger(__name__)

PLUGIN_PATH_OPTION = "plugin.path"


def plugin_path_entries(value: str | None) -> list[str]:
    """The entries of a `plugin.path` value (comma-separated, as Connect's), absolute."""
    if not value:
        return []
    return [
        str(Path(part.strip()).expanduser().resolve()) for part in value.split(",") if part.strip()
    ]


def _missing(entry: str, looking_for: str) -> PluginPathError:
    return PluginPathError(
        f"plugin.path entry {entry!r} does not exist{looking_for}; plugin.path lists folders "
        "of Connect plugins, or plugin jars"
    )


def checked_plugin_path(value: str | None) -> list[str]:
    """`plugin_path_entries(value)`, each of which must exist: `PluginPathError` names the
    first that does not (a REST server's or CLI command's start-up check)."""
    entries = plugin_path_entries(value)
    for entry in entries:
        if not Path(entry).exists():
            raise _missing(entry, "")
    return entries


def _archives(entry: Path) -> list[Path]:
    if entry.is_file():
        return [entry]
    found: list[Path] = []
    for child in sorted(entry.iterdir()):
        if child.is_dir():
            found.extend(p for p in sorted(child.rglob("*")) if _is_archive(p))
        elif _is_archive(child):
            found.append(child)
    return found


def _is_archive(path: Path) -> bool:
    return path.is_file() and path.suffix.lower() in (".jar", ".zip")


def _holds(archive: Path, member: str) -> bool:
    try:
        with zipfile.ZipFile(archive) as opened:
            opened.getinfo(member)
            return True
    except (KeyError, zipfile.BadZipFile, OSError):
        return False


def plugin_holding(class_name: str, entries: list[str]) -> Path | None:
    """The jar in `entries` (a `plugin.path`) holding `class_name`, None if none does; an
    entry that does not exist raises `PluginPathError` naming it and the class."""
    member = class_name.replace(".", "/") + ".class"
    for entry in entries:
        path = Path(entry)
        if not path.exists():
            raise _missing(entry, f" (looking for connector.class {class_name!r})")
        for archive in _archives(path):
            if _holds(archive, member):
                return archive
    return None


def runs_as_java_plugin(connector_class: str, plugin_path: str | None) -> bool:
    """Whether the rule above runs `connector_class` as the Java plugin `plugin_path` holds;
    False too when an entry does not exist (resolving the class names it)."""
    entries = plugin_path_entries(plugin_path)
    name = connector_class.strip()
    try:
        return bool(entries and name) and plugin_holding(name, entries) is not None
    except PluginPathError:
        return False


def resolve_with_plugin_path(
    name: str, plugin_path: str | None, connector: str = ""
) -> type[Connector]:
    """The class `name` (a `connector.class`) stands for under the rule above; logs which runs
    for `connector` when it is named."""
    entries = plugin_path_entries(plugin_path)
    holder = plugin_holding(name, entries) if entries else None
    if holder is not None:
        from spark_eos_connect.jvm_tasks.connector import java_source_connector_class

        if connector:
            log.info(
                "connector %s: %s runs as the Java plugin in %s (plugin.path)",
                connector,
                name,
                holder,
            )
        return java_source_connector_class(name, entries)
    try:
        found = resolve_connector_class(name)
    except ConnectorNotFoundError as error:
        if not entries:
            raise
        raise ConnectorNotFoundError(
            f"Connector class {name!r} was found neither in plugin.path {entries} nor among "
            f"this project's connectors: {error}"
        ) from error
    if connector:
        log.info(
            "connector %s: %s runs as this project's Python connector %s%s",
            connector,
            name,
            class_path(found),
            f" (plugin.path {entries} does not hold it)" if entries else "",
        )
    return found


_CONVERTER_OPTIONS = ("key.converter", "value.converter", "header.converter")


def java_converter_problems(
    problems: Mapping[str, list[str]], props: Mapping[str, Any], plugin_path: str | None
) -> dict[str, list[str]]:
    """The converter options' `problems` (this project's check of them) as they stand when
    `props` name a Java connector: a class this project does not have is fine when `plugin.path`
    holds it, else a problem naming the option, the class and the folders (driver side)."""
    checked = {option: list(found) for option, found in problems.items()}
    if not runs_as_java_plugin(str(props.get("connector.class") or ""), plugin_path):
        return checked
    entries = plugin_path_entries(plugin_path)
    try:
        for option in _CONVERTER_OPTIONS:
            name = str(props.get(option) or "").strip()
            stand_ins = () if option == "header.converter" else STAND_INS
            if name in ON_THE_TASK_HOST and name not in CONVERTERS:
                checked.pop(option, None)  # this project cannot check what it does not have
            if not name or name in ON_THE_TASK_HOST or name in stand_ins:
                continue
            checked.pop(option, None)
            if plugin_holding(name, entries) is None:
                checked[option] = [
                    f"Converter class {name!r} was found neither in plugin.path {entries} nor "
                    "on the JVM task host, and this project has no converter of that class "
                    f"for a Java connector's {option} (it has: {', '.join(stand_ins) or 'none'})"
                ]
    except PluginPathError:
        pass  # the connector's check names the entry
    return checked


_STAGE_GROUPS = ("transforms", "predicates")


def _aliases(value: Any) -> list[str]:
    return [alias.strip() for alias in str(value or "").split(",") if alias.strip()]


def plugin_stages(props: Mapping[str, Any], plugin_path: str | None) -> dict[str, str]:
    """The transforms and predicates of a Java connector whose classes `plugin.path` holds, as
    `{"transforms.<alias>": class}` (empty for a Python connector): they run as the plugin's
    (the JVM task host looks in the plugins first), and the driver's connector JVM checks their
    options with each class's own `ConfigDef`, as part of the connector's `validate`."""
    if not runs_as_java_plugin(str(props.get("connector.class") or ""), plugin_path):
        return {}
    entries = plugin_path_entries(plugin_path)
    held: dict[str, str] = {}
    for group in _STAGE_GROUPS:
        for alias in _aliases(props.get(group)):
            name = str(props.get(f"{group}.{alias}.type") or "").strip()
            if name and plugin_holding(name, entries) is not None:
                held[f"{group}.{alias}"] = name
    return held


def without_stages(props: Mapping[str, Any], stages: Mapping[str, str]) -> dict[str, Any]:
    """`props` without `stages` (`plugin_stages`): what this project checks of the chain, the
    rest being the plugins' own. A remaining transform's `predicate` and `negate` go too when
    they name a predicate of the plugins."""
    if not stages:
        return dict(props)
    kept = {
        key: value
        for key, value in props.items()
        if not any(key.startswith(f"{stage}.") for stage in stages)
    }
    for group in _STAGE_GROUPS:
        if group in kept:
            kept[group] = ",".join(a for a in _aliases(kept[group]) if f"{group}.{a}" not in stages)
    for alias in _aliases(kept.get("transforms")):
        predicate = str(kept.get(f"transforms.{alias}.predicate") or "").strip()
        if predicate and f"predicates.{predicate}" in stages:
            kept.pop(f"transforms.{alias}.predicate")
            kept.pop(f"transforms.{alias}.negate", None)
    return kept
