"""Running a `SinkTask` over one Spark task's Kafka rows (DESIGN §2.2, Connect's WorkerSinkTask).

Driver side: `parse_sink_options` and `plan_sink` check the options, start the connector once
to get its task configs and build a picklable `SinkTaskPlan`. Executor side: `run_sink_task`
instantiates the task, then `initialize`, `start`, `open(partitions)`, `put` in chunks of
`consumer.override.max.poll.records`, `pre_commit(current_offsets)`, `close`, `stop`; the
result carries the offsets `pre_commit` returned, which the driver commits to the group.
Converters (`key.converter`, `value.converter`, `header.converter`, from
`spark_eos_connect.converters`) turn the raw bytes into record keys, values, their schemas and
header values; then the connector's `transforms` chain (with `predicates`) runs on each record
before `put`, as in Connect's WorkerSinkTask: a record a stage filters out is not put, but its
offset counts as consumed; a failing stage is a `TRANSFORMATION` failure. Records that fail are
handled by `errors.tolerance` (see `errors_dlq`). The rows arrive as columns (`sink_rows`):
converters convert a whole column at once (`Converter.to_connect_column`), record by record
only to find the records of a column that failed. `sink_config_problems` lists every problem of
the writer's options (framework, converters, transforms, predicates, `errors.*`) by option.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from spark_eos_connect.api.config import (
    ConfigDef,
    ConfigType,
    InvalidConfigError,
    Range,
    props_with_prefix,
)
from spark_eos_connect.api.data import Schema, SchemaAndValue
from spark_eos_connect.api.sink import SinkConnector, SinkRecord, SinkTask, SinkTaskContext
from spark_eos_connect.api.sink import TopicPartition as SinkTopicPartition
from spark_eos_connect.converters import (
    ConnectColumn,
    Converter,
    HeaderConverter,
    make_converter,
    make_header_converter,
)
from spark_eos_connect.errors import ConfigError, EosConnectError
from spark_eos_connect.plugins.loader import class_path, load_class
from spark_eos_connect.ports import CommitHooks
from spark_eos_connect.protocol.sink_groups import sink_group_id
from spark_eos_connect.runtime import commit_hooks
from spark_eos_connect.runtime.commit_hooks import NO_HOOKS
from spark_eos_connect.runtime.config_references import (
    ConfigProviders,
    has_reference,
    is_provider_option,
    reverse_transform,
)
from spark_eos_connect.runtime.errors_dlq import (
    ERRORS_CONFIG,
    ErrorPolicy,
    ErrorReporter,
    FailedRecord,
    Stage,
    qualified_name,
)
from spark_eos_connect.runtime.framework_config import split_options
from spark_eos_connect.sink.kafka_input import TP
from spark_eos_connect.sink.rows import RawRecord, RecordChunk, chunks
from spark_eos_connect.transforms.arrow import split_topic_stages

log = logging.getLogger(__name__)

MAX_POLL_RECORDS = "consumer.override.max.poll.records"

SINK_FRAMEWORK_CONFIG = (
    ConfigDef()
    .define("name", ConfigType.STRING, importance="high", doc="Unique connector name.")
    .define(
        "connector.class",
        ConfigType.STRING,
        importance="high",
        doc="The sink connector: a dotted Python path or a shipped short name.",
    )
    .define(
        "tasks.max",
        ConfigType.INT,
        1,
        Range.at_least(1),
        "high",
        "The number of sink tasks, as in Connect: the Kafka reader given the same options "
        "(`connector.class` among them) plans min(tasks.max, partitions) Spark tasks, the "
        "subscribed partitions dealt to them in turn; Spark task i runs the connector's task "
        "config i (i mod their number if it returns fewer).",
    )
    .define(
        "key.converter",
        ConfigType.STRING,
        "ByteArrayConverter",
        None,
        "medium",
        "Turns key bytes into record keys and `key_schema`: a Kafka Connect converter by class "
        "or short name (ByteArrayConverter, StringConverter, JsonConverter, LongConverter, ...); "
        "its options are `key.converter.<option>`, e.g. `key.converter.schemas.enable`.",
    )
    .define(
        "value.converter",
        ConfigType.STRING,
        "ByteArrayConverter",
        None,
        "medium",
        "Turns value bytes into record values and `value_schema`, as `key.converter` does; "
        "options `value.converter.<option>`.",
    )
    .define(
        "header.converter",
        ConfigType.STRING,
        "ByteArrayConverter",
        None,
        "low",
        "Turns header bytes into header values; options `header.converter.<option>`. The "
        "default keeps the bytes (Connect's default is SimpleHeaderConverter: set it to get "
        "Connect's header values).",
    )
    .define(
        MAX_POLL_RECORDS,
        ConfigType.INT,
        500,
        Range.at_least(1),
        "low",
        "The most records one `put` call receives.",
    )
).merge(ERRORS_CONFIG)


# --- converters ----------------------------------------------------------------------------------

CONVERTER_OPTIONS = ("key.converter", "value.converter", "header.converter")


def converter_options(options: Mapping[str, Any]) -> dict[str, str]:
    """Every `<key|value|header>.converter.<option>` option (the converters' own settings)."""
    prefixes = tuple(f"{name}." for name in CONVERTER_OPTIONS)
    return {k: str(v) for k, v in options.items() if k.startswith(prefixes)}


@dataclass(frozen=True)
class RecordConverters:
    """The key, value and header converters of one sink task (`spark_eos_connect.converters`)."""

    key: Converter
    value: Converter
    header: HeaderConverter

    @classmethod
    def build(cls, names: Mapping[str, str], options: Mapping[str, Any]) -> RecordConverters:
        """Converters named by `names` (option to class name) configured from `options` (full
        option names); raises `ConfigError` naming the bad option."""
        key, value, header = (props_with_prefix(options, f"{name}.") for name in CONVERTER_OPTIONS)
        return cls(
            make_converter(names["key.converter"], key, is_key=True),
            make_converter(names["value.converter"], value, is_key=False),
            make_header_converter(names["header.converter"], header),
        )


# --- driver: options and plan -------------------------------------------------------------------


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


@dataclass(frozen=True)
class SinkOptions:
    """Parsed writer options: framework values, connector props, Kafka client settings."""

    values: dict[str, Any]
    connector_props: dict[str, str]
    kafka: dict[str, str]
    errors: ErrorPolicy
    providers: ConfigProviders = field(default_factory=ConfigProviders)
    converter_options: dict[str, str] = field(default_factory=dict)
    transform_options: dict[str, str] = field(default_factory=dict)


TRANSFORMS = "transforms"
PREDICATES = "predicates"


def transform_options(options: Mapping[str, Any]) -> dict[str, str]:
    """`transforms`, `predicates` and every `transforms.*`/`predicates.*` option."""
    prefixes = (f"{TRANSFORMS}.", f"{PREDICATES}.")
    return {
        k: str(v)
        for k, v in options.items()
        if k in (TRANSFORMS, PREDICATES) or k.startswith(prefixes)
    }


def has_chain(options: Mapping[str, Any]) -> bool:
    """Whether `transforms` names at least one alias."""
    return bool(str(options.get(TRANSFORMS) or "").strip(" ,"))


Problems = dict[str, list[str]]


def _add(problems: Problems, found: Mapping[str, Iterable[str]]) -> None:
    for name, messages in found.items():
        problems.setdefault(name, []).extend(messages)


def _messages(option: str, error: ConfigError) -> Problems:
    """An error's problems by option (a plain `ConfigError` is filed under `option`)."""
    if isinstance(error, InvalidConfigError):
        return error.problems
    text = str(error)
    return {option: [text if option in text else f"{option}: {text}"]}


def sink_config_problems(options: Mapping[str, Any]) -> Problems:
    """Every problem of a sink writer's options by option name: `kafka.bootstrap.servers`, the
    framework's options, each converter and its options, `transforms`/`predicates` (each
    transformation and predicate configured, then closed) and `errors.*`. References to config
    providers are resolved; the connector's own options are its `validate`'s business."""
    from spark_eos_connect.runtime.connect_options import alias_case_problems, restore_alias_case
    from spark_eos_connect.transforms import parse_transform_chain, transform_config_problems

    problems: Problems = {}
    rest, kafka = split_options({str(k).lower(): v for k, v in options.items()})
    if "bootstrap.servers" not in kafka:
        problems["kafka.bootstrap.servers"] = [
            "Missing option kafka.bootstrap.servers: the Kafka cluster whose consumer group "
            "connect-<name> receives the committed offsets"
        ]
    try:
        providers = ConfigProviders.from_options(rest)
    except ConfigError as error:
        _add(problems, _messages("config.providers", error))
        providers = ConfigProviders(())
    props = restore_alias_case({k: v for k, v in rest.items() if not is_provider_option(k)})
    _add(problems, alias_case_problems(props))
    resolved: dict[str, Any] = {}
    framework = {**converter_options(props), **transform_options(props)}
    framework.update({k: v for k, v in props.items() if k in SINK_FRAMEWORK_CONFIG})
    for name, value in framework.items():  # the connector's own options resolve in plan_sink
        try:
            resolved[name] = providers.resolve({name: value})[name]
        except ConfigError as error:
            _add(problems, _messages(name, error))
            resolved[name] = value
    values: dict[str, Any] = {}
    try:
        values = SINK_FRAMEWORK_CONFIG.parse(
            {k: v for k, v in resolved.items() if k in SINK_FRAMEWORK_CONFIG}
        )
    except InvalidConfigError as error:
        _add(problems, error.problems)
    for name in CONVERTER_OPTIONS:
        if name in problems:
            continue
        converter = str(values.get(name) or resolved.get(name) or "ByteArrayConverter")
        own = props_with_prefix(resolved, f"{name}.")
        try:
            if name == "header.converter":
                make_header_converter(converter, own)
            else:
                make_converter(converter, own, is_key=name == "key.converter")
        except ConfigError as error:
            _add(problems, _messages(name, error))
    chain_problems = transform_config_problems(resolved)
    _add(problems, chain_problems)
    if not chain_problems and has_chain(resolved):
        try:
            parse_transform_chain(resolved).close()
        except ConfigError as error:
            _add(problems, _messages(TRANSFORMS, error))
    return problems


def parse_sink_options(options: Mapping[str, Any]) -> SinkOptions:
    """Parse `writeStream.format("eosconnect")` options for a sink connector; raises one
    `InvalidConfigError` listing every problem (`sink_config_problems`)."""
    from spark_eos_connect.runtime.connect_options import restore_alias_case

    problems = sink_config_problems(options)
    if problems:
        raise InvalidConfigError(problems)
    rest, kafka = split_options({str(k).lower(): v for k, v in options.items()})
    providers = ConfigProviders.from_options(rest)
    rest = restore_alias_case({k: v for k, v in rest.items() if not is_provider_option(k)})
    framework = {k: v for k, v in rest.items() if k in SINK_FRAMEWORK_CONFIG}
    values = SINK_FRAMEWORK_CONFIG.parse(providers.resolve(framework))
    props = {k: str(v) for k, v in rest.items() if k not in SINK_FRAMEWORK_CONFIG}
    for key in ("name", "connector.class", "tasks.max"):  # references stay references
        raw = rest.get(key)
        props[key] = str(raw) if has_reference(raw) else str(values[key])
    errors = ErrorPolicy.from_options(values["name"], rest)
    return SinkOptions(
        values,
        props,
        kafka,
        errors,
        providers,
        converter_options(rest),
        transform_options(rest),
    )


def sink_task_configs(
    connector: SinkConnector, props: dict[str, str], tasks: int
) -> list[dict[str, str]]:
    """Validate the connector's options, start it, and return its task configs."""
    problems = {r.name: r.errors for r in connector.validate(props) if r.errors}
    if problems:
        raise InvalidConfigError(problems)
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
    )


# --- executor: the task's life cycle ------------------------------------------------------------


@dataclass(frozen=True)
class SinkTaskResult:
    """What one Spark task did (executor → driver); offsets are `(topic, partition, next)`."""

    task: int
    records_put: int
    records_failed: int
    current: list[tuple[str, int, int]]
    committable: list[tuple[str, int, int]]
    records_filtered: int = 0
    """Records a transformation filtered out (not put; their offsets count as consumed)."""


def load_task_class(dotted: str) -> type[SinkTask]:
    """Import `package.module.Class` and check it is a SinkTask."""
    return load_class(dotted, "sink task class", SinkTask)


def _header_values(headers: list[tuple[tuple[str, SchemaAndValue], ...]]) -> list[Any]:
    """`(name, value)` headers for `SinkRecord`s (no Python loop when no row has any)."""
    if not any(headers):
        return headers
    return [tuple((name, data.value) for name, data in row) for row in headers]


class _SinkTaskRun:
    """One task over one Spark task's rows; see `run_sink_task`."""

    def __init__(self, plan: SinkTaskPlan, task: int, batch_id: int | None) -> None:
        self.plan = plan
        self.task_id = task
        self.batch_id = batch_id
        self.config = plan.providers.resolve(plan.task_configs[task % len(plan.task_configs)])
        self.task = load_task_class(plan.task_class)()
        self.context = SinkTaskContext(self.config)
        self.reporter = ErrorReporter(plan.errors, plan.resolved_kafka(), task)
        self.converters = plan.converters()
        self.chain = plan.transform_chain()
        self.head, rest = split_topic_stages(self.chain)
        self.stages = rest.stages
        self.routes: dict[str, str | None] = {}
        """The topic-only head's outcome per topic (decided once per topic)."""
        self.filtered = 0
        self.assigned: set[TP] = set()
        self.skip_below: dict[TP, int] = {}
        self.current: dict[TP, int] = {}
        self.put_count = 0

    def _failed(
        self, raw: RawRecord, stage: Stage, cls: type | str, error: BaseException, context: str = ""
    ) -> FailedRecord:
        return FailedRecord(
            raw.topic,
            raw.partition,
            raw.offset,
            raw.key,
            raw.value,
            raw.headers,
            raw.timestamp_ms,
            stage,
            cls if isinstance(cls, str) else qualified_name(cls),
            error,
            context,
        )

    def _column(
        self,
        converter: Converter,
        stage: Stage,
        rows: RecordChunk,
        data: pa.Array,
        failed: dict[int, FailedRecord],
    ) -> ConnectColumn:
        """A key or value column converted a topic run at a time; when a run fails as a whole
        it is converted record by record and each failing record is kept in `failed` (the
        first stage a record fails in is the one reported, as Connect converts key, value,
        then headers)."""
        schemas: list[Schema | None] = []
        values: list[Any] = []
        for topic, start, stop in rows.topic_runs():
            part = data.slice(start, stop - start)
            try:
                run_schemas, run_values = converter.to_connect_column(topic, part)
            except Exception:
                run_schemas, run_values = self._one_by_one(
                    converter, stage, rows, start, part, failed
                )
            schemas += run_schemas
            values += run_values
        return schemas, values

    def _one_by_one(
        self,
        converter: Converter,
        stage: Stage,
        rows: RecordChunk,
        start: int,
        part: pa.Array,
        failed: dict[int, FailedRecord],
    ) -> ConnectColumn:
        schemas: list[Schema | None] = []
        values: list[Any] = []
        for row, data in enumerate(part.to_pylist(), start):
            converted = SchemaAndValue.NULL
            if row not in failed:
                try:
                    converted = converter.to_connect_data(rows.topics[row], data)
                except Exception as error:
                    failed[row] = self._failed(rows.raw(row), stage, type(converter), error)
            schemas.append(converted.schema)
            values.append(converted.value)
        return schemas, values

    def _headers(
        self, rows: RecordChunk, failed: dict[int, FailedRecord]
    ) -> list[tuple[tuple[str, SchemaAndValue], ...]]:
        """Each row's headers through the header converter (rows without headers: `()`)."""
        converter = self.converters.header
        converted: list[tuple[tuple[str, SchemaAndValue], ...]] = [()] * len(rows)
        if not any(rows.headers):
            return converted
        for row, headers in enumerate(rows.headers):
            if not headers or row in failed:
                continue
            topic = rows.topics[row]
            try:
                converted[row] = tuple(
                    (name, converter.to_connect_header(topic, name, data)) for name, data in headers
                )
            except Exception as error:
                failed[row] = self._failed(
                    rows.raw(row), Stage.HEADER_CONVERTER, type(converter), error
                )
        return converted

    def _records(self, rows: RecordChunk) -> tuple[list[SinkRecord], list[int]]:
        """The chunk's records for `put` and the row of each: keys, values and headers
        converted a column at a time, then the transforms; failures are reported in row
        order."""
        failed: dict[int, FailedRecord] = {}
        converters = self.converters
        key_schemas, keys = self._column(
            converters.key, Stage.KEY_CONVERTER, rows, rows.keys, failed
        )
        value_schemas, values = self._column(
            converters.value, Stage.VALUE_CONVERTER, rows, rows.values, failed
        )
        headers = self._headers(rows, failed)
        for row in sorted(failed):
            self.reporter.report(failed[row])
        if self.chain:
            converted = (keys, values, key_schemas, value_schemas, headers)
            return self._transformed(rows, converted, failed)
        plain = _header_values(headers)
        columns: list[list[Any]] = [
            rows.topics,
            rows.partitions,
            rows.offsets,
            keys,
            values,
            rows.timestamps,
            plain,
            key_schemas,
            value_schemas,
        ]
        kept = list(range(len(rows)))
        if failed:
            keep = [row not in failed for row in kept]
            columns = [list(itertools.compress(column, keep)) for column in columns]
            kept = list(itertools.compress(kept, keep))
        return list(map(SinkRecord, *columns)), kept

    def _transformed(
        self, rows: RecordChunk, columns: tuple[list[Any], ...], failed: dict[int, FailedRecord]
    ) -> tuple[list[SinkRecord], list[int]]:
        """The records after the transforms (those converted), with their rows."""
        from spark_eos_connect.transforms import ConnectRecord, Header

        keys, values, key_schemas, value_schemas, headers = columns
        records: list[SinkRecord] = []
        kept: list[int] = []
        for row in range(len(rows)):
            if row in failed:
                continue
            record = ConnectRecord(
                rows.topics[row],
                rows.partitions[row],
                key_schemas[row],
                keys[row],
                value_schemas[row],
                values[row],
                rows.timestamps[row],
                tuple(Header(name, data.value, data.schema) for name, data in headers[row]),
                kafka_offset=rows.offsets[row],
            )
            transformed = self._transform(rows, row, record)
            if transformed is not None:
                records.append(transformed)
                kept.append(row)
        return records, kept

    def _transform(self, rows: RecordChunk, row: int, record: Any) -> SinkRecord | None:
        """The record after the chain (None: filtered, or a tolerated failure), as Connect's
        WorkerSinkTask runs it after the converters; the topic-only head is decided once per
        topic. The offset stays the consumed record's, whatever the topic becomes."""
        from spark_eos_connect.transforms import TransformationError

        topic_read = rows.topics[row]
        try:
            if self.head:
                if topic_read not in self.routes:
                    self.routes[topic_read] = self.head.outcome(topic_read)
                topic = self.routes[topic_read]
                if topic is None:
                    self.filtered += 1
                    return None
                if topic != record.topic:
                    record = record.new_record(topic=topic)
            for stage in self.stages:
                record = stage.apply(record)
                if record is None:
                    self.filtered += 1
                    return None
        except TransformationError as error:
            where = "predicate of transformation" if error.in_predicate else "transformation"
            self.reporter.report(
                self._failed(
                    rows.raw(row),
                    Stage.TRANSFORMATION,
                    error.class_name,
                    error.cause,
                    f"{where} '{error.alias}' ({TRANSFORMS}.{error.alias}.type={error.class_name})",
                )
            )
            return None
        return SinkRecord(
            record.topic,
            rows.partitions[row] if record.kafka_partition is None else record.kafka_partition,
            rows.offsets[row],
            record.key,
            record.value,
            record.timestamp,
            tuple((header.key, header.value) for header in record.headers),
            record.key_schema,
            record.value_schema,
        )

    def _open_new(self, rows: RecordChunk) -> None:
        new = rows.partitions_seen - self.assigned
        if not new:
            return
        self.assigned |= new
        self.context.update_assignment(SinkTopicPartition(*tp) for tp in self.assigned)
        self.task.open([SinkTopicPartition(*tp) for tp in sorted(new)])
        self._take_resets()

    def _take_resets(self) -> None:
        """`context.offset(...)` requests: skip ahead within the batch; rewinds cannot be."""
        for tp, offset in self.context.take_offset_resets().items():
            key = (tp.topic, tp.partition)
            if offset < self.current.get(key, 0):
                log.warning(
                    "%s asked to rewind %s-%d to %d; a micro-batch cannot be rewound, records "
                    "are read again only when the batch is retried",
                    type(self.task).__name__,
                    key[0],
                    key[1],
                    offset,
                )
            self.skip_below[key] = offset

    def _wanted(self, rows: RecordChunk) -> RecordChunk:
        """The rows not skipped by a `context.offset(...)` request."""
        if not self.skip_below:
            return rows
        skip = self.skip_below
        wanted = [
            row
            for row, tp in enumerate(zip(rows.topics, rows.partitions, strict=True))
            if rows.offsets[row] >= skip.get(tp, -1)
        ]
        return rows if len(wanted) == len(rows) else rows.select(wanted)

    def _put(self, records: list[SinkRecord], kept: list[int], rows: RecordChunk) -> None:
        if not records:
            return
        try:
            self.task.put(records)
            self.put_count += len(records)
            return
        except Exception as error:
            if not self.plan.errors.tolerate_all:
                first, last = records[0], records[-1]
                raise EosConnectError(
                    f"{type(self.task).__name__}.put failed for {len(records)} record(s) from "
                    f"topic={first.topic} partition={first.kafka_partition} "
                    f"offset={first.kafka_offset} to topic={last.topic} "
                    f"partition={last.kafka_partition} offset={last.kafka_offset}: "
                    f"{qualified_name(type(error))}: {error} (errors.tolerance=none)"
                ) from error
        # errors.tolerance=all: find the failing records one by one (at-least-once for the rest)
        for record, row in zip(records, kept, strict=True):
            try:
                self.task.put([record])
                self.put_count += 1
            except Exception as error:
                self.reporter.report(
                    self._failed(rows.raw(row), Stage.TASK_PUT, type(self.task), error)
                )

    def process(self, chunk: RecordChunk) -> None:
        """Open new partitions, convert, put; the rows count as consumed."""
        self._open_new(chunk)
        wanted = self._wanted(chunk)
        records, kept = self._records(wanted)
        self._put(records, kept, wanted)
        self._take_resets()
        for tp, offset in chunk.next_offsets().items():
            self.current[tp] = max(self.current.get(tp, 0), offset)

    def commit_offsets(self) -> dict[TP, int]:
        """Flush the DLQ, then ask `pre_commit` which offsets may be committed."""
        self.reporter.close()
        if not self.current:
            return {}
        given = {SinkTopicPartition(*tp): offset for tp, offset in self.current.items()}
        returned = self.task.pre_commit(dict(given)) or {}
        committable: dict[TP, int] = {}
        for tp, offset in returned.items():
            key = (tp[0], int(tp[1]))
            if key not in self.assigned:
                log.warning("ignoring pre_commit offset for unassigned partition %s-%s", *key)
            elif isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
                raise EosConnectError(
                    f"{type(self.task).__name__}.pre_commit returned invalid offset {offset!r} "
                    f"for {key[0]}-{key[1]}"
                )
            else:
                committable[key] = offset
        return committable

    def close(self) -> None:
        """`close(partitions)` then `stop()`."""
        try:
            if self.assigned:
                self.task.close([SinkTopicPartition(*tp) for tp in sorted(self.assigned)])
        finally:
            try:
                self.task.stop()
            finally:
                self.chain.close()

    def run(self, batches: Iterable[pa.RecordBatch]) -> SinkTaskResult:
        self.task.initialize(self.context)
        self.task.start(dict(self.config))
        try:
            for number, chunk in enumerate(chunks(batches, self.plan.max_poll_records)):
                self.process(chunk)
                if number == 0:
                    self.plan.hooks.reached("put", self.batch_id)
            committable = self.commit_offsets()
        except BaseException:
            try:
                self.close()
            except Exception:
                log.exception("closing sink task %d after a failure failed too", self.task_id)
            try:
                self.reporter.close(timeout_s=5.0)
            except Exception:
                log.exception("flushing the dead letter queue after a failure failed")
            raise
        self.close()
        return SinkTaskResult(
            task=self.task_id,
            records_put=self.put_count,
            records_failed=self.reporter.failed,
            current=[(t, p, o) for (t, p), o in sorted(self.current.items())],
            committable=[(t, p, o) for (t, p), o in sorted(committable.items())],
            records_filtered=self.filtered,
        )


def run_sink_task(
    plan: SinkTaskPlan, task: int, batches: Iterable[pa.RecordBatch], batch_id: int | None
) -> SinkTaskResult:
    """Executor: run task config `task` over the rows; raises if a record fails (tolerance
    none) or `put`/`flush` fails, so that nothing gets committed for the micro-batch."""
    return _SinkTaskRun(plan, task, batch_id).run(batches)


def merge_committable(results: Iterable[SinkTaskResult]) -> dict[TP, int]:
    """Driver: the offsets to commit for a micro-batch (highest per partition)."""
    merged: dict[TP, int] = {}
    for result in results:
        for topic, partition, offset in result.committable:
            merged[(topic, partition)] = max(offset, merged.get((topic, partition), offset))
    return merged
