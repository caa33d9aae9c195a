"""The driver's plan of a sink writer's tasks (Connect's connector start and task configs).

`plan_sink` validates and starts the connector once, takes its task configs
(`sink_task_configs`) and builds the picklable `SinkTaskPlan` every Spark task of the writer
runs from.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from spark_eos_connect.api.config import InvalidConfigError
from spark_eos_connect.api.sink import SinkConnector
from spark_eos_connect.errors import ConfigError
from spark_eos_connect.plugins.loader import class_path
from spark_eos_connect.ports import CommitHooks
from spark_eos_connect.protocol.sink_groups import sink_group_id
from spark_eos_connect.runtime import commit_hooks
from spark_eos_connect.runtime.commit_hooks import NO_HOOKS
from spark_eos_connect.runtime.config.config_references import ConfigProviders, reverse_transform
from spark_eos_connect.runtime.errors_dlq import ErrorPolicy
from spark_eos_connect.sink.decoding import RecordConverters
from spark_eos_connect.sink.options import (
    MAX_POLL_RECORDS,
    SinkOptions,
    has_chain,
    unknown_sink_options,
)

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SinkTaskPlan:
    """Everything an executor needs to run the connector's tasks (driver → executor)."""

    connector: str
    task_class: str
    task_configs: list[dict[str, str]]
    max_poll_records: int
    errors: ErrorPolicy
    kafka: dict[str, str] = field(repr=False)
    providers: ConfigProviders = field(default_factory=ConfigProviders)
    """`kafka`, `task_configs` and `converter_options` hold references unresolved; these
    resolve them."""
    key_converter: str = "ByteArrayConverter"
    value_converter: str = "ByteArrayConverter"
    header_converter: str = "ByteArrayConverter"
    converter_options: dict[str, str] = field(default_factory=dict, repr=False)
    """Every `<key|value|header>.converter.<option>` option."""
    transform_options: dict[str, str] = field(default_factory=dict, repr=False)
    """`transforms`, `predicates` and their `transforms.<alias>.*`/`predicates.<alias>.*`."""
    hooks: CommitHooks = NO_HOOKS
    """The driver's commit hooks (none in production; `testing.faults` in crash tests)."""
    status_topic: str = "eosconnect-status"
    """Where the tasks report their status (`status.storage.topic`; `runtime.task_status`)."""

    @property
    def group_id(self) -> str:
        """`connect-<name>`."""
        return sink_group_id(self.connector)

    def resolved_kafka(self) -> dict[str, str]:
        """The Kafka client settings with references resolved (in the process using them)."""
        return self.providers.resolve(self.kafka, prefix="kafka.")

    def converters(self) -> RecordConverters:
        """The configured converters (their options resolved here)."""
        names = {
            "key.converter": self.key_converter,
            "value.converter": self.value_converter,
            "header.converter": self.header_converter,
        }
        return RecordConverters.build(names, self.providers.resolve(self.converter_options))

    def transform_chain(self) -> Any:
        """The configured `TransformChain` (empty without `transforms`)."""
        from spark_eos_connect.transforms import TransformChain, parse_transform_chain

        if not has_chain(self.transform_options):
            return TransformChain()
        return parse_transform_chain(self.providers.resolve(self.transform_options))


def sink_task_configs(
    connector: SinkConnector, props: dict[str, str], tasks: int
) -> list[dict[str, str]]:
    """Validate the connector's options, start it, and return its task configs. Options nobody
    reads are logged, or listed first when the connector refuses its options."""
    problems = {r.name: r.errors for r in connector.validate(props) if r.errors}
    defined = connector.config_def().names()
    unknown = unknown_sink_options(props, type(connector).__name__, defined)
    if problems:
        raise InvalidConfigError({**{k: [v] for k, v in unknown.items()}, **problems})
    for warning in unknown.values():
        log.warning("%s", warning)
    connector.start(dict(props))
    try:
        configs = connector.task_configs(tasks)
    finally:
        connector.stop()
    if not configs:
        raise ConfigError(f"connector {props.get('name')} returned no task configs")
    if len(configs) < tasks:
        log.warning(
            "connector %s returned %d task configs for tasks.max=%d: Spark task i runs config "
            "i mod %d",
            props.get("name"),
            len(configs),
            tasks,
            len(configs),
        )
    return [{**props, **config} for config in configs]


def plan_sink(parsed: SinkOptions, connector: SinkConnector) -> SinkTaskPlan:
    """Driver: the plan for every Spark task of the sink writer."""
    values, raw = parsed.values, parsed.connector_props
    configs = sink_task_configs(connector, parsed.providers.resolve(raw), values["tasks.max"])
    return SinkTaskPlan(
        connector=values["name"],
        task_class=class_path(connector.task_class()),
        task_configs=reverse_transform(raw, configs),
        max_poll_records=values[MAX_POLL_RECORDS],
        errors=parsed.errors,
        kafka=parsed.kafka,
        providers=parsed.providers,
        key_converter=values["key.converter"],
        value_converter=values["value.converter"],
        header_converter=values["header.converter"],
        converter_options=parsed.converter_options,
        transform_options=parsed.transform_options,
        hooks=commit_hooks.installed(),
        status_topic=str(raw.get("status.storage.topic") or SinkTaskPlan.status_topic),
    )
