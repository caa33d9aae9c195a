"""Connect's `ConfigInfos` assembled from the framework's part and a connector's own part.

A Connect worker's answer to `PUT /connector-plugins/{class}/config/validate` holds the
framework's options (name, tasks.max, converters, transforms...) in their definition order,
then the connector's own; an option both define shows the connector's definition at the
framework's place, and the connector's verdict on it. Values reported for options nothing
defines come first, with a null definition. `error_count` counts the errors of every value
shown. A PASSWORD option's value never shows.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

HIDDEN = "[hidden]"

Entry = dict[str, Any]
"""One `ConfigInfo`: `{"definition": ConfigKeyInfo | None, "value": ConfigValueInfo | None}`."""


def hide_passwords(entry: Entry) -> Entry:
    """`entry` with its value and default shown as `[hidden]` when it is a PASSWORD option."""
    definition, value = entry.get("definition"), entry.get("value")
    if not definition or definition.get("type") != "PASSWORD":
        return entry
    if definition.get("default_value") is not None:
        definition = {**definition, "default_value": HIDDEN}
    if value and value.get("value") is not None:
        value = {**value, "value": HIDDEN}
    return {"definition": definition, "value": value}


def _unique(groups: Iterable[str | None]) -> list[str]:
    return list(dict.fromkeys(group for group in groups if group))


def merged_config_infos(
    name: str,
    framework: list[Entry],
    framework_groups: list[str],
    connector: Mapping[str, Any],
) -> dict[str, Any]:
    """The `ConfigInfos` of connector class `name`: the `framework` entries and groups, then
    the `connector`'s part (`{"groups", "configs", "undefined"}`, as the JVM task host answers
    it)."""
    by_name: dict[str, Entry] = {e["definition"]["name"]: dict(e) for e in framework}
    for entry in connector.get("configs", []):
        known = by_name.get(entry["definition"]["name"])
        if known is None:
            by_name[entry["definition"]["name"]] = dict(entry)
            continue
        known["definition"] = entry["definition"]
        if entry.get("value") is not None:
            known["value"] = entry["value"]
    undefined = []
    for value in connector.get("undefined", []):
        if value["name"] in by_name:
            by_name[value["name"]]["value"] = value
        else:
            undefined.append({"definition": None, "value": value})
    configs = [hide_passwords(entry) for entry in [*undefined, *by_name.values()]]
    errors = sum(len((entry["value"] or {}).get("errors", [])) for entry in configs)
    return {
        "name": name,
        "error_count": errors,
        "groups": _unique([*framework_groups, *connector.get("groups", [])]),
        "configs": configs,
    }
