"""Resolve `connector.class` values: dotted Python paths or the short names of shipped connectors.

Like Connect, a shipped connector answers to its class name, to that name without the `Connector`
suffix, and (for the file connectors) to Connect's own Java class names so existing configurations
keep working. Modules are imported only when a name is resolved. Names that arrive in requests
(the REST API, the admin commands) go through `resolve_plugin_class`, which resolves only shipped
connectors and classes in the packages an operator listed (`plugin.packages`, the part Connect's
`plugin.path` plays): no other module is ever imported for a request.
"""

from __future__ import annotations

import difflib
import importlib
import inspect
import keyword
from collections.abc import Sequence

from spark_eos_connect.api.connector import Connector
from spark_eos_connect.api.sink import SinkConnector
from spark_eos_connect.api.source import SourceConnector
from spark_eos_connect.errors import ConfigError, ConnectorNotFoundError

__all__ = [
    "PLUGIN_PACKAGES",
    "connector_type",
    "is_dotted_path",
    "known_connectors",
    "resolve_connector_class",
    "resolve_plugin_class",
]

_PACKAGE = "spark_eos_connect.connectors"
PLUGIN_PACKAGES = "plugin.packages"
"""The option listing the packages whose connector classes requests may name."""

# Short name -> dotted path of each shipped connector.
_SHIPPED: dict[str, str] = {
    "FileStreamSource": f"{_PACKAGE}.file_stream.FileStreamSourceConnector",
    "FileStreamSink": f"{_PACKAGE}.file_stream.FileStreamSinkConnector",
    "DeltaSink": "spark_eos_connect.delta.connector.DeltaSinkConnector",
    "Generator": f"{_PACKAGE}.generator.GeneratorSourceConnector",
    "PostgresCdcSource": f"{_PACKAGE}.postgres.cdc.PostgresCdcSourceConnector",
    "PostgresSink": f"{_PACKAGE}.postgres.sink.connector.PostgresSinkConnector",
}

_JAVA_FILE_PACKAGE = "org.apache.kafka.connect.file"
_MOVED = {
    "spark_eos_connect.connectors.delta_sink.DeltaSinkConnector": "DeltaSink",
    f"{_PACKAGE}.postgres.PostgresCdcSourceConnector": "PostgresCdcSource",
    f"{_PACKAGE}.postgres.connector.PostgresCdcSourceConnector": "PostgresCdcSource",
    f"{_PACKAGE}.postgres.sink_connector.PostgresSinkConnector": "PostgresSink",
}
"""Dotted paths of earlier releases that stored configs may still name."""


def _aliases() -> dict[str, str]:
    aliases: dict[str, str] = {}
    for short, path in _SHIPPED.items():
        class_name = path.rsplit(".", 1)[1]
        for alias in (short, f"{short}Connector", class_name, path):
            aliases[alias] = path
        if class_name.endswith("Connector"):
            aliases[class_name.removesuffix("Connector")] = path
    for short in ("FileStreamSource", "FileStreamSink"):
        aliases[f"{_JAVA_FILE_PACKAGE}.{short}Connector"] = _SHIPPED[short]
    for old_path, short in _MOVED.items():
        aliases[old_path] = _SHIPPED[short]
    return aliases


_ALIASES: dict[str, str] = _aliases()


def known_connectors() -> dict[str, str]:
    """Short name -> dotted class path of every shipped connector."""
    return dict(_SHIPPED)


def _not_found(name: str, detail: str = "") -> ConnectorNotFoundError:
    hint = difflib.get_close_matches(name, list(_ALIASES), n=1, cutoff=0.75)
    if not hint:
        hint = [a for a in _ALIASES if a.casefold() == name.casefold()][:1]
    suggestion = f" Did you mean {hint[0]}?" if hint else ""
    return ConnectorNotFoundError(
        f"Connector class {name!r} not found{detail}.{suggestion} Use a dotted path "
        f"(package.module.ClassName) or one of the known connectors: {', '.join(_SHIPPED)}"
    )


def is_dotted_path(path: str) -> bool:
    """Whether `path` is a dotted Python path: identifiers (no keyword) joined by dots."""
    return all(part.isidentifier() and not keyword.iskeyword(part) for part in path.split("."))


def _import(name: str, module_name: str) -> object:
    """The module `module_name` names; any failure is a `ConnectorNotFoundError` naming it."""
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        missing = exc.name or ""
        if module_name == missing or module_name.startswith(missing + "."):
            raise _not_found(name, f" (no module named {missing!r})") from exc
        raise ConnectorNotFoundError(
            f"Connector class {name!r}: importing {module_name} failed: {exc}"
        ) from exc
    except Exception as exc:  # a plugin module raising anything while it loads
        raise ConnectorNotFoundError(
            f"Connector class {name!r}: importing {module_name} failed: {type(exc).__name__}: {exc}"
        ) from exc


def in_packages(module_name: str, packages: Sequence[str]) -> bool:
    """Whether module `module_name` is one of `packages` or inside one of them."""
    return any(module_name == p or module_name.startswith(p + ".") for p in packages)


def _not_allowed(name: str, module_name: str, packages: Sequence[str]) -> ConnectorNotFoundError:
    """The refusal of a class outside `packages`, naming the option and what to add to it."""
    top = module_name.split(".")[0]
    return ConnectorNotFoundError(
        f"Connector class {name!r} not found: only the known connectors "
        f"({', '.join(_SHIPPED)}) and classes in the packages {PLUGIN_PACKAGES} lists "
        f"({', '.join(packages) or 'none'}) can be used; to use it, add its package (e.g. "
        f"{top}) to {PLUGIN_PACKAGES}"
    )


def resolve_plugin_class(name: str, packages: Sequence[str]) -> type[Connector]:
    """`resolve_connector_class` for a name from a request: a shipped connector (short name,
    alias or path), or a class whose module is in one of `packages` (``plugin.packages``).

    Any other name is a `ConnectorNotFoundError` before anything is imported.
    """
    stripped = name.strip() if isinstance(name, str) else ""
    path = _ALIASES.get(stripped)
    if path is None and stripped:
        module_name = stripped.rpartition(".")[0]
        if not module_name or not is_dotted_path(stripped):
            raise _not_found(stripped)
        if not in_packages(module_name, packages):
            raise _not_allowed(stripped, module_name, packages)
    return resolve_connector_class(path or stripped)


def resolve_connector_class(name: str) -> type[Connector]:
    """The `Connector` subclass named by `name` (short name, alias or dotted path).

    Raises `ConnectorNotFoundError` (listing the known short names) if nothing has that name and
    `ConfigError` if the name is empty or names something that is not a concrete `Connector`.
    """
    stripped = name.strip() if isinstance(name, str) else ""
    if not stripped:
        raise ConfigError(
            f"connector.class must name a connector class; known connectors: {', '.join(_SHIPPED)}"
        )
    path = _ALIASES.get(stripped, stripped)
    module_name, _, attr = path.rpartition(".")
    if not module_name or not is_dotted_path(path):
        raise _not_found(stripped)
    module = _import(stripped, module_name)
    found = getattr(module, attr, None)
    if found is None:
        raise _not_found(stripped, f" (module {module_name} has no attribute {attr!r})")
    if not (inspect.isclass(found) and issubclass(found, Connector)):
        raise ConfigError(
            f"connector.class {stripped!r} resolves to {found!r}, which is not a subclass of "
            "SourceConnector or SinkConnector"
        )
    if inspect.isabstract(found):
        raise ConfigError(f"connector.class {stripped!r} is abstract and cannot be instantiated")
    return found


def connector_type(cls: type[Connector]) -> str:
    """`"source"`, `"sink"` or `"unknown"`, as the REST connector-plugins endpoint reports it."""
    if issubclass(cls, SourceConnector):
        return "source"
    if issubclass(cls, SinkConnector):
        return "sink"
    return "unknown"
