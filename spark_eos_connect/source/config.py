"""A source pipeline's options, parsed: framework settings, Kafka client settings, the rest.

The framework's option definitions are shared with sinks (`runtime.config.framework_config`);
what is read here is what a source query alone needs, including its records' converters,
transforms and `errors.*` (`source.conversion`), as a Connect worker reads them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from spark_eos_connect.api.config import ConfigType, InvalidConfigError, parse_value
from spark_eos_connect.errors import ConfigError
from spark_eos_connect.jvm_tasks.resolution import (
    java_converter_problems,
    plugin_path_entries,
    plugin_stages,
    runs_as_java_plugin,
    without_stages,
)
from spark_eos_connect.runtime.config.config_references import ConfigProviders, has_reference
from spark_eos_connect.runtime.config.connect_options import (
    alias_case_problems,
    refused_option_problems,
)
from spark_eos_connect.runtime.config.framework_config import (
    FRAMEWORK_CONFIG,
    WorkerConfig,
    parse_framework_values,
)
from spark_eos_connect.runtime.config.options import DataSourceOptions
from spark_eos_connect.runtime.errors_dlq import SOURCE_ERRORS_CONFIG
from spark_eos_connect.source.conversion import (
    CONVERTER_OPTIONS,
    conversion_option_names,
    parse_record_conversion,
    record_conversion_problems,
)
from spark_eos_connect.source.plan import RecordConversion


@dataclass(frozen=True, kw_only=True)
class SourcePipelineConfig(WorkerConfig):
    """Parsed options of a source pipeline: the worker's settings (`offsets_topic`: the
    worker's global offsets topic), the connector's framework settings, Kafka client settings,
    the rest."""

    name: str
    connector_class: str
    tasks_max: int
    exactly_once_required: bool
    transaction_boundary: str
    transaction_interval_ms: int
    connector_offsets_topic: str | None
    max_records_per_trigger: int
    max_poll_duration_ms: int
    kafka: dict[str, str] = field(default_factory=dict)
    connector_props: dict[str, str] = field(default_factory=dict)
    providers: ConfigProviders = field(default_factory=ConfigProviders)
    """The config providers; `kafka` and `connector_props` hold references unresolved."""
    conversion: RecordConversion | None = None
    """Converters, transforms and `errors.*` of the records; None: records go as they are."""
    takeover: bool = False
    """Take the connector over from a driver that is alive (option `takeover`)."""

    @property
    def primary_offsets_topic(self) -> str:
        """Where tasks commit offsets transactionally: the dedicated topic if any, else global."""
        return self.connector_offsets_topic or self.offsets_topic

    def task_transactional_id(self, task: int) -> str:
        """`<group.id>-<connector>-<task>`, the transactional id of one source task."""
        return f"{self.group_id}-{self.name}-{task}"

    @property
    def leader_transactional_id(self) -> str:
        """`connect-cluster-<group.id>`, the config-topic leader's transactional id."""
        return f"connect-cluster-{self.group_id}"

    @property
    def offsets_transactional_id(self) -> str:
        """`<group.id>-<connector>`, used when offsets are altered or reset."""
        return f"{self.group_id}-{self.name}"


def parse_source_pipeline(
    options: Mapping[str, Any] | DataSourceOptions,
) -> SourcePipelineConfig:
    """Parse data source options; raises ConfigError naming every bad option."""
    read = DataSourceOptions.read(options)
    kafka = read.kafka
    if "bootstrap.servers" not in kafka:
        raise ConfigError(
            "Missing option kafka.bootstrap.servers: the Kafka cluster to write to "
            "(e.g. .option('kafka.bootstrap.servers', 'localhost:9092'))"
        )
    if "transactional.id" in kafka:
        raise ConfigError(
            "Option kafka.transactional.id cannot be set: source tasks use "
            "<group.id>-<connector>-<task> so that zombie tasks are fenced"
        )
    providers = read.checked_providers()
    rest = read.props
    problems = {**alias_case_problems(rest), **refused_option_problems(rest)}
    if problems:
        raise InvalidConfigError(problems)
    values = parse_framework_values(rest, providers)
    connector_props = {k: str(v) for k, v in rest.items() if k not in FRAMEWORK_CONFIG}
    for key in ("name", "connector.class", "tasks.max"):  # references stay references
        raw = rest.get(key)
        connector_props[key] = str(raw) if has_reference(raw) else str(values[key])
    conversion = _record_conversion(values, connector_props, providers)
    return SourcePipelineConfig(
        name=values["name"],
        connector_class=values["connector.class"],
        tasks_max=values["tasks.max"],
        **WorkerConfig.fields_from(values, rest),
        exactly_once_required=values["exactly.once.support"].lower() == "required",
        transaction_boundary=values["transaction.boundary"].lower(),
        transaction_interval_ms=values["transaction.boundary.interval.ms"],
        connector_offsets_topic=values["offsets.storage.topic"],
        max_records_per_trigger=values["maxrecordspertrigger"],
        max_poll_duration_ms=values["maxpolldurationms"],
        kafka=kafka,
        connector_props=connector_props,
        providers=providers,
        conversion=conversion,
        takeover=bool(values["takeover"]),
    )


def _record_conversion(
    values: Mapping[str, Any], connector_props: dict[str, str], providers: ConfigProviders
) -> RecordConversion | None:
    """What converts the connector's records here: nothing for a Java plugin, whose JVM task
    host converts them (its converter classes may be plugin.path's, checked as `load()` checks
    them: `jvm_tasks.resolution.java_converter_problems`)."""
    resolved = providers.resolve(record_options(connector_props))
    plugin_path = values["plugin.path"]
    if not runs_as_java_plugin(str(values["connector.class"]), plugin_path):
        return parse_record_conversion(values["name"], connector_props, resolved)
    checked = {**connector_props, **resolved, "connector.class": values["connector.class"]}
    problems = conversion_problems(checked, plugin_path)
    if problems:
        raise InvalidConfigError(problems)
    return None


def conversion_problems(props: Mapping[str, Any], plugin_path: str | None) -> dict[str, list[str]]:
    """Every problem this project finds in the converter, transform, predicate and `errors.*`
    options (references resolved). For a Java connector, a converter class `plugin.path` holds
    is fine, and the transforms and predicates whose classes it holds are the plugins' own:
    the connector JVM's `validate` checks their options (`jvm_tasks.resolution.plugin_stages`);
    a stage class found nowhere is named with the folders."""
    stages = plugin_stages(props, plugin_path)
    checked = without_stages(props, stages)
    problems = java_converter_problems(record_conversion_problems(checked), props, plugin_path)
    for key in sorted(set(props) - set(checked)):  # a transform's negate of a plugin predicate
        if key.startswith("transforms.") and key.endswith(".negate"):
            try:
                parse_value(key, props[key], ConfigType.BOOLEAN)
            except ConfigError as error:
                problems.setdefault(key, []).append(str(error))
    if runs_as_java_plugin(str(props.get("connector.class") or ""), plugin_path):
        entries = plugin_path_entries(plugin_path)
        for key in [k for k in problems if k.startswith(("transforms.", "predicates."))]:
            if key.endswith(".type"):
                problems[key] = [
                    f"{message}; plugin.path {entries} does not hold it either"
                    for message in problems[key]
                ]
    return problems


def record_options(props: Mapping[str, Any]) -> dict[str, Any]:
    """The options that decide how records are converted: converters, chain, `errors.*`."""
    names = {*conversion_option_names(props), *CONVERTER_OPTIONS, *SOURCE_ERRORS_CONFIG.names()}
    return {k: v for k, v in props.items() if k in names}
