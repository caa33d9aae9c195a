"""Which runs, a Java plugin or a built-in Python connector: the rule.

**Java whenever `plugin.path` holds the class `connector.class` names.** With `plugin.path`
set, its entries are scanned as Connect scans them (each sub-folder of an entry is one plugin,
each jar directly in an entry too, an entry that is a jar is one plugin) for that class; found,
the Java plugin runs, under the same exactly-once machinery as the Python connectors. Not
found, the name resolves as without `plugin.path`: to a Python connector (the shipped ones
answer to Connect's class names, e.g. `org.apache.kafka.connect.file.FileStreamSourceConnector`),
else it is an error naming the class and the folders. An entry that does not exist is an
error naming it. Without `plugin.path`, no Java plugin ever runs.
"""

from __future__ import annotations

import logging
import zipfile
from pathlib import Path

from spark_eos_connect.api.connector import Connector
from spark_eos_connect.errors import ConnectorNotFoundError
from spark_eos_connect.jvm_tasks.errors import PluginPathError
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
