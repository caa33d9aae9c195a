"""What a request says about a connector, checked before anything is written (pure): its name,
its config as Connect stores it (string values), and the target state it starts in."""

from __future__ import annotations

from collections.abc import Mapping

from spark_eos_connect.herder.errors import BadRequestError
from spark_eos_connect.herder.text import check_unicode
from spark_eos_connect.protocol.config_records import TargetState

INITIAL_STATES = {
    "RUNNING": TargetState.STARTED,
    "PAUSED": TargetState.PAUSED,
    "STOPPED": TargetState.STOPPED,
}
"""``initial_state`` of ``POST /connectors`` (KIP-980) and the target state each means."""


def config_strings(config: object) -> dict[str, str | None]:
    """A connector config as Connect stores it: string values (numbers, booleans converted)."""
    if not isinstance(config, Mapping):
        raise BadRequestError(f"A connector config must be a JSON object, got {config!r}")
    check_unicode(config, "config")
    result: dict[str, str | None] = {}
    for key, value in config.items():
        if not isinstance(key, str):
            raise BadRequestError(f"Config names must be strings, got {key!r}")
        if value is None or isinstance(value, str):
            result[key] = value
        elif isinstance(value, bool):
            result[key] = "true" if value else "false"
        elif isinstance(value, int | float):
            result[key] = str(value)
        else:
            raise BadRequestError(f"Config {key!r} must be a string, got {type(value).__name__}")
    return result


def check_name(name: object) -> str:
    """A new connector's name, trimmed: non-empty, no control characters, Unicode text, and
    usable as one segment of a URL path (no '/', not '.' or '..')."""
    if not isinstance(name, str) or not name.strip():
        raise BadRequestError("A connector name must be a non-empty string")
    if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in name):
        raise BadRequestError(f"Connector name {name!r} must not contain control characters")
    check_unicode(name, "the connector name")
    trimmed = name.strip()
    if "/" in trimmed or trimmed in (".", ".."):
        raise BadRequestError(
            f"Connector name {trimmed!r} cannot be used: a name must not contain '/' nor be "
            "'.' or '..', since /connectors/{name} could never reach it"
        )
    return trimmed


def initial_target(initial_state: str | None) -> TargetState | None:
    """The target state ``initial_state`` names (any case), None if not given."""
    if initial_state is None:
        return None
    target = INITIAL_STATES.get(str(initial_state).upper())
    if target is None:
        raise BadRequestError(
            f"initial_state must be one of {', '.join(INITIAL_STATES)}, got {initial_state!r}"
        )
    return target
