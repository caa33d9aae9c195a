"""Resolve `connector.class` values: dotted Python paths or the short names of shipped connectors.

Like Connect, a shipped connector answers to its class name, to that name without the `Connector`
suffix, and (for the file connectors) to Connect's own Java class names so existing configurations
keep working. Modules are imported only when a name is resolved.
"""

from __future__ import annotations

import difflib
import importlib
import inspect

from spark_eos_connect.api.connector import Connector
from spark_eos_connect.api.sink import SinkConnector
from spark_eos_connect.api.source import SourceConnector
from spark_eos_connect.errors import ConfigError, ConnectorNotFoundError

__all__ = ["connector_type", "known_connectors", "resolve_connector_class"]

_PACKAGE = "spark_eos_connect.connectors"

# Short name -> dotted path of each shipped connector.
_SHIPPED: dict[str, str] = {
    "FileStreamSource": f"{_PACKAGE}.file_stream.FileStreamSourceConnector",
    "FileStreamSink": f"{_PACKAGE}.file_stream.FileStreamSinkConnector",
    "DeltaSink": f"{_PACKAGE}.delta_sink.DeltaSinkConnector",
    "Generator": f"{_PACKAGE}.generator.GeneratorSourceConnector",
}

_JAVA_FILE_PACKAGE = "org.apache.kafka.connect.file"


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
    if not module_name or not attr:
        raise _not_found(stripped)
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        missing = exc.name or ""
        if module_name == missing or module_name.startswith(missing + "."):
            raise _not_found(stripped, f" (no module named {missing!r})") from exc
        raise ConnectorNotFoundError(
            f"Connector class {stripped!r}: importing {module_name} failed: {exc}"
        ) from exc
    except ImportError as exc:
        raise ConnectorNotFoundError(
            f"Connector class {stripped!r}: importing {module_name} failed: {exc}"
        ) from exc
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
