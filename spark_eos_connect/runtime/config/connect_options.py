"""Kafka Connect connector options as they reach a source query: alias case, refused options.

Spark hands a data source its options with lower-cased names, so `transforms.routeByName.type`
arrives as `transforms.routebyname.type` while `transforms=routeByName` keeps its value.
`restore_alias_case` gives the option names under `transforms.` and `predicates.` the spelling
of the aliases the lists declare (matching is case-insensitive, as Spark leaves no choice).

`refused_option_problems` names the connector-level options of Connect's `ConnectorConfig` and
`SourceConnectorConfig` that this project does not implement; each is refused with the reason,
instead of being passed to the connector and silently ignored.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from spark_eos_connect.runtime.errors_dlq import source_dlq_problems

TRANSFORMS = "transforms"
PREDICATES = "predicates"
PLUGIN_VERSION = "plugin.version"

ACCEPTED_VALUES = ("config.action.reload", "tasks.max.enforce")
"""Connect options accepted with the one value that describes this project (none, true)."""

_CLIENT_OVERRIDES = ("producer.override.", "consumer.override.", "admin.override.")
_TOPIC_CREATION = "topic.creation."


def _aliases(value: Any) -> list[str]:
    if value is None:
        return []
    items = value if isinstance(value, list | tuple) else str(value).split(",")
    return [str(item).strip() for item in items if str(item).strip()]


def _spelt(name: str, spelt: Mapping[str, Mapping[str, str]]) -> str:
    """`name` with its alias part spelt as declared (the longest matching alias wins)."""
    for group, declared in spelt.items():
        if not name.startswith(group + "."):
            continue
        rest = name[len(group) + 1 :]
        matches = [a for a in declared if rest.lower().startswith(a + ".")]
        if matches:
            alias = max(matches, key=len)
            return f"{group}.{declared[alias]}.{rest[len(alias) + 1 :]}"
    return name


def restore_alias_case(props: Mapping[str, Any]) -> dict[str, Any]:
    """`props` with `transforms.<alias>.*`/`predicates.<alias>.*` names spelt as the aliases
    are declared, and each `transforms.<alias>.predicate` value spelt as its predicate alias."""
    spelt = {
        group: {alias.lower(): alias for alias in reversed(_aliases(props.get(group)))}
        for group in (TRANSFORMS, PREDICATES)
    }
    result = {_spelt(name, spelt): value for name, value in props.items()}
    predicates = spelt[PREDICATES]
    for alias in spelt[TRANSFORMS].values():
        key = f"{TRANSFORMS}.{alias}.predicate"
        value = result.get(key)
        if isinstance(value, str) and value.strip().lower() in predicates:
            result[key] = predicates[value.strip().lower()]
    return result


def alias_case_problems(props: Mapping[str, Any]) -> dict[str, list[str]]:
    """Aliases that differ only in case: their options cannot be told apart through Spark."""
    problems: dict[str, list[str]] = {}
    for group in (TRANSFORMS, PREDICATES):
        seen: dict[str, str] = {}
        for alias in _aliases(props.get(group)):
            other = seen.setdefault(alias.lower(), alias)
            if other != alias:
                problems.setdefault(group, []).append(
                    f"Invalid value for configuration {group}: aliases '{other}' and '{alias}' "
                    "differ only in case; Spark passes option names in lower case, so their "
                    "options cannot be told apart (expected aliases that differ in more than case)"
                )
    return problems


def _plugin_version_options(props: Mapping[str, Any]) -> list[str]:
    names = [
        f"connector.{PLUGIN_VERSION}",
        *(f"{kind}.converter.{PLUGIN_VERSION}" for kind in ("key", "value", "header")),
    ]
    for group in (TRANSFORMS, PREDICATES):
        names += [f"{group}.{alias}.{PLUGIN_VERSION}" for alias in _aliases(props.get(group))]
    return [name for name in names if name in props]


def refused_option_problems(props: Mapping[str, Any]) -> dict[str, list[str]]:
    """One problem per Connect framework option this project does not implement."""
    problems: dict[str, list[str]] = dict(source_dlq_problems(props))
    for name in sorted(props):
        if name.startswith(_CLIENT_OVERRIDES):
            setting = name.split(".override.", 1)[1]
            problems[name] = [
                f"{name} is not supported: per-connector client overrides do not exist here; "
                f"set the Kafka client setting as kafka.{setting} instead"
            ]
        elif name.startswith(_TOPIC_CREATION):
            problems[name] = [
                f"{name} is not supported: source connectors do not create their topics here "
                "(Connect's topic.creation.* settings); create the topics first, or let the "
                "brokers create them (auto.create.topics.enable)"
            ]
    reload = props.get("config.action.reload")
    if reload is not None and str(reload).strip().lower() != "none":
        problems["config.action.reload"] = [
            f"Invalid value {reload!r} for configuration config.action.reload: only 'none' is "
            "supported; config-provider references are resolved when the query and each task "
            "start, and nothing restarts the connector when a provider's value changes"
        ]
    enforce = props.get("tasks.max.enforce")
    if enforce is not None and str(enforce).strip().lower() != "true":
        problems["tasks.max.enforce"] = [
            f"Invalid value {enforce!r} for configuration tasks.max.enforce: only 'true' is "
            "supported; a connector never runs more than tasks.max tasks here"
        ]
    for name in _plugin_version_options(props):
        problems[name] = [
            f"{name} is not supported: plugin versions (KIP-891) do not apply, the package "
            "ships one version of each connector, converter, transformation and predicate"
        ]
    return problems
