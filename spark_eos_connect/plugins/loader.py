"""Loading plugin classes by dotted path (`package.module.Class`): the one class loader.

Task classes, converters, transformations, config providers and commit hooks are all named this
way in options and plans; each caller says what kind of class it expects, so a wrong name fails
with an error that says which option-kind it was and why.
"""

from __future__ import annotations

import importlib
from typing import TypeVar

from spark_eos_connect.errors import ConfigError

T = TypeVar("T")


def class_path(cls: type) -> str:
    """`package.module.Class` of `cls` (what `load_class` loads back)."""
    return f"{cls.__module__}.{cls.__qualname__}"


def load_class(dotted: str, kind: str, base: type[T] | None = None) -> type[T]:
    """The class `dotted` names; a `ConfigError` naming `kind` (e.g. "sink task class") when it
    cannot be imported, or is not a subclass of `base` when one is given."""
    module_name, _, name = dotted.rpartition(".")
    if not module_name:
        raise ConfigError(f"cannot load {kind} {dotted!r}: expected package.module.ClassName")
    try:
        cls = getattr(importlib.import_module(module_name), name)
    except (ImportError, AttributeError) as error:
        raise ConfigError(f"cannot load {kind} {dotted!r}: {error}") from error
    if not isinstance(cls, type) or (base is not None and not issubclass(cls, base)):
        expected = base.__name__ if base is not None else "a class"
        raise ConfigError(f"{dotted!r} is not a {expected} (loading the {kind})")
    return cls
