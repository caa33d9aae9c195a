"""The built-in transformations and predicates by Connect class name, and class resolution.

`transforms.<alias>.type` and `predicates.<alias>.type` take Connect's class name
(`org.apache.kafka.connect.transforms.InsertField$Value`), one of Connect's short aliases
(`RegexRouter`, `TopicNameMatches`, ... : the simple names that are unique among the built-ins),
or a dotted path to a Python class (`my_package.my_module.MySmt`).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final, Literal

from spark_eos_connect.api.config import ConfigDef
from spark_eos_connect.errors import ConfigError
from spark_eos_connect.transforms.base import Predicate, Transformation
from spark_eos_connect.transforms.cast import CastKey, CastValue
from spark_eos_connect.transforms.field_edits import (
    InsertFieldKey,
    InsertFieldValue,
    MaskFieldKey,
    MaskFieldValue,
    ReplaceFieldKey,
    ReplaceFieldValue,
)
from spark_eos_connect.transforms.flatten import FlattenKey, FlattenValue
from spark_eos_connect.transforms.headers import (
    DropHeaders,
    HeaderFromKey,
    HeaderFromValue,
    InsertHeader,
)
from spark_eos_connect.transforms.predicates import (
    HasHeaderKey,
    RecordIsTombstone,
    TopicNameMatches,
)
from spark_eos_connect.transforms.reshape import (
    ExtractFieldKey,
    ExtractFieldValue,
    HoistFieldKey,
    HoistFieldValue,
    ValueToKey,
)
from spark_eos_connect.transforms.routing import Filter, RegexRouter, TimestampRouter
from spark_eos_connect.transforms.timestamp_converter import (
    TimestampConverterKey,
    TimestampConverterValue,
)

__all__ = [
    "BUILTIN_PREDICATES",
    "BUILTIN_TRANSFORMS",
    "PluginInfo",
    "PluginKind",
    "builtin_plugins",
    "resolve_plugin_class",
]

PluginKind = Literal["transformation", "predicate"]

_TRANSFORM_CLASSES: Final[tuple[type[Transformation], ...]] = (
    CastKey,
    CastValue,
    DropHeaders,
    ExtractFieldKey,
    ExtractFieldValue,
    Filter,
    FlattenKey,
    FlattenValue,
    HeaderFromKey,
    HeaderFromValue,
    HoistFieldKey,
    HoistFieldValue,
    InsertFieldKey,
    InsertFieldValue,
    InsertHeader,
    MaskFieldKey,
    MaskFieldValue,
    RegexRouter,
    ReplaceFieldKey,
    ReplaceFieldValue,
    TimestampConverterKey,
    TimestampConverterValue,
    TimestampRouter,
    ValueToKey,
)
_PREDICATE_CLASSES: Final[tuple[type[Predicate], ...]] = (
    HasHeaderKey,
    RecordIsTombstone,
    TopicNameMatches,
)


def _by_connect_name(classes: tuple[type[Any], ...]) -> Mapping[str, type[Any]]:
    result: dict[str, type[Any]] = {}
    for cls in classes:
        assert cls.CONNECT_CLASS is not None
        result[cls.CONNECT_CLASS] = cls
    return MappingProxyType(result)


BUILTIN_TRANSFORMS: Final[Mapping[str, type[Transformation]]] = _by_connect_name(_TRANSFORM_CLASSES)
"""Connect class name -> built-in transformation class, sorted by name."""
BUILTIN_PREDICATES: Final[Mapping[str, type[Predicate]]] = _by_connect_name(_PREDICATE_CLASSES)
"""Connect class name -> built-in predicate class, sorted by name."""

_NOT_IMPLEMENTED: Final = frozenset(
    {
        "org.apache.kafka.connect.transforms.SetSchemaMetadata$Key",
        "org.apache.kafka.connect.transforms.SetSchemaMetadata$Value",
    }
)


def _aliases(names: Mapping[str, type[Any]]) -> dict[str, str]:
    """Connect's short aliases: simple class names that only one built-in has."""
    counts: dict[str, list[str]] = {}
    for full in names:
        simple = full.rsplit(".", 1)[-1]
        counts.setdefault(simple, []).append(full)
    return {
        simple: fulls[0]
        for simple, fulls in counts.items()
        if len(fulls) == 1 and "$" not in simple
    }


_ALIASES: Final = {
    "transformation": _aliases(BUILTIN_TRANSFORMS),
    "predicate": _aliases(BUILTIN_PREDICATES),
}


@dataclass(frozen=True)
class PluginInfo:
    """A built-in for the docs: Connect's class name, its short alias, overview and options."""

    kind: PluginKind
    class_name: str
    alias: str | None
    overview: str
    config_def: ConfigDef


def builtin_plugins(kind: PluginKind) -> list[PluginInfo]:
    """The built-in transformations or predicates, sorted by Connect class name."""
    registry: Mapping[str, type[Any]] = (
        BUILTIN_TRANSFORMS if kind == "transformation" else BUILTIN_PREDICATES
    )
    reverse = {full: alias for alias, full in _ALIASES[kind].items()}
    return [
        PluginInfo(kind, name, reverse.get(name), cls.OVERVIEW, cls.config_def())
        for name, cls in sorted(registry.items())
    ]


def _examples(kind: PluginKind) -> str:
    if kind == "transformation":
        return "e.g. org.apache.kafka.connect.transforms.InsertField$Value or RegexRouter"
    return "e.g. org.apache.kafka.connect.transforms.predicates.TopicNameMatches"


def _import_class(path: str) -> type[Any] | None:
    """The class at dotted `path` (module path, then attribute path), or None."""
    parts = path.split(".")
    for split in range(len(parts) - 1, 0, -1):
        module_name = ".".join(parts[:split])
        try:
            target: Any = importlib.import_module(module_name)
        except ImportError:
            continue
        try:
            for attribute in parts[split:]:
                target = getattr(target, attribute)
        except AttributeError:
            return None
        return target if isinstance(target, type) else None
    return None


def resolve_plugin_class(name: str, kind: PluginKind, key: str) -> type[Any]:
    """The class `name` designates; `ConfigError` naming `key` and what was expected."""
    registry: Mapping[str, type[Any]] = (
        BUILTIN_TRANSFORMS if kind == "transformation" else BUILTIN_PREDICATES
    )
    expected = (
        f"expected one of Connect's built-in {kind} class names ({_examples(kind)}) or a dotted "
        f"path to a Python class implementing {'apply' if kind == 'transformation' else 'test'}"
    )
    name = name.strip()
    found = registry.get(name) or registry.get(_ALIASES[kind].get(name, ""))
    if found is not None:
        return found
    if name in _NOT_IMPLEMENTED:
        raise ConfigError(
            f"Invalid value {name!r} for configuration {key}: this Kafka Connect {kind} is not "
            f"implemented here; supported: {', '.join(sorted(registry))}"
        )
    if name.startswith("org.apache.kafka."):
        raise ConfigError(
            f"Invalid value {name!r} for configuration {key}: not a Kafka Connect {kind} "
            f"class; {expected}"
        )
    cls = _import_class(name) if "." in name else None
    if cls is None:
        raise ConfigError(
            f"Invalid value {name!r} for configuration {key}: class not found; {expected}"
        )
    method = "apply" if kind == "transformation" else "test"
    if not callable(getattr(cls, method, None)) or not callable(getattr(cls, "configure", None)):
        raise ConfigError(
            f"Invalid value {name!r} for configuration {key}: {cls.__qualname__} is not a "
            f"{kind} (it needs configure(configs) and {method}(record); close() is optional)"
        )
    return cls
