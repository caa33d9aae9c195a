"""Which config values are secrets, and configs with those values masked for logs and messages."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from spark_eos_connect.api.config import HIDDEN, ConfigDef, ConfigType

SECRET_NAME_MARKERS = ("password", "secret", "sasl.jaas.config")


def is_secret(name: str, definitions: Iterable[ConfigDef] = ()) -> bool:
    """A PASSWORD option of any of `definitions`, or a name that looks like a secret."""
    lowered = name.lower()
    if any(marker in lowered for marker in SECRET_NAME_MARKERS):
        return True
    for definition in definitions:
        key = definition.keys.get(name)
        if key is not None and key.type is ConfigType.PASSWORD:
            return True
    return False


def masked(props: Mapping[str, Any], definitions: Iterable[ConfigDef] = ()) -> dict[str, Any]:
    """`props` with every secret value replaced by ``[hidden]`` (for logs, never for storage)."""
    definitions = list(definitions)
    return {
        name: HIDDEN if value is not None and is_secret(name, definitions) else value
        for name, value in props.items()
    }
