"""Source records on their way to Kafka: the transform chain, then the converters.

As in Connect's `AbstractWorkerSourceTask`, each polled record goes through the connector's
`transforms` chain (a stage may drop it), then its headers, key and value are converted to bytes
(`header.converter`, `key.converter`, `value.converter`). A failure in any of these steps is
retried while it is a `RetriableError` and `errors.retry.timeout` allows, then either fails the
task (`errors.tolerance=none`) or drops the record (`all`); `errors.log.enable` logs it, with the
record itself only under `errors.log.include.messages`.

Driver side: `parse_record_conversion` turns a connector's options into the `RecordConversion`
of its task plans (None when nothing is configured: records then go to Kafka as they are, on
the task's fast path), `record_conversion_problems` lists every problem in those options.
Task side: `RecordPreparer.prepare(records)` works through one poll's records in one loop and
returns the produce-ready ones and the positions of those it dropped.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, NamedTuple

from spark_eos_connect.api.config import (
    ConfigDef,
    ConfigType,
    InvalidConfigError,
    props_with_prefix,
)
from spark_eos_connect.api.data import Schema
from spark_eos_connect.api.source import SourceRecord
from spark_eos_connect.errors import ConfigError, DataError
from spark_eos_connect.runtime.errors_dlq import (
    SOURCE_ERRORS_CONFIG,
    ErrorPolicy,
    Stage,
    ToleranceExceededError,
    is_retriable,
    retry_delay_ms,
)
from spark_eos_connect.source.plan import RecordConversion
from spark_eos_connect.source.records import to_bytes

log = logging.getLogger(__name__)

KEY_CONVERTER: Final = "key.converter"
VALUE_CONVERTER: Final = "value.converter"
HEADER_CONVERTER: Final = "header.converter"
CONVERTER_OPTIONS: Final = (KEY_CONVERTER, VALUE_CONVERTER, HEADER_CONVERTER)
TRANSFORMS: Final = "transforms"
PREDICATES: Final = "predicates"

_DEFAULT_DOC = (
    "Not set: the default of this project's worker, which writes bytes as they are, str as "
    "UTF-8 and other values as compact JSON (what source records always produced here)."
)

SOURCE_CONVERTER_CONFIG: Final = (
    ConfigDef()
    .define(
        KEY_CONVERTER,
        ConfigType.STRING,
        None,
        None,
        "medium",
        "Writes record keys (with `key_schema`) as bytes: a Kafka Connect converter by class "
        "or short name (JsonConverter, StringConverter, ByteArrayConverter, LongConverter, "
        "...); its options are `key.converter.<option>`, e.g. `key.converter.schemas.enable`. "
        + _DEFAULT_DOC,
    )
    .define(
        VALUE_CONVERTER,
        ConfigType.STRING,
        None,
        None,
        "medium",
        "Writes record values as `key.converter` writes keys; options "
        "`value.converter.<option>`. " + _DEFAULT_DOC,
    )
    .define(
        HEADER_CONVERTER,
        ConfigType.STRING,
        None,
        None,
        "low",
        "Writes header values; options `header.converter.<option>`. Not set: header values are "
        "written as keys and values are by default (Connect's worker default is "
        "SimpleHeaderConverter: set it to get Connect's header bytes).",
    )
)
"""The source side's converter options (their `.<option>` suffixes go to the converter)."""


def conversion_option_names(props: Mapping[str, Any]) -> list[str]:
    """The options `RecordConversion.options` keeps: converter options and the chain's."""
    prefixes = tuple(f"{name}." for name in (*CONVERTER_OPTIONS, TRANSFORMS, PREDICATES))
    return [k for k in props if k in (TRANSFORMS, PREDICATES) or k.startswith(prefixes)]


def _has_chain(props: Mapping[str, Any]) -> bool:
    return bool(str(props.get(TRANSFORMS) or "").strip(" ,"))


# --- driver: options -----------------------------------------------------------------------------


def record_conversion_problems(props: Mapping[str, Any]) -> dict[str, list[str]]:
    """Every problem in the converter, transform and `errors.*` options (references resolved),
    by option: converters and plugins are built (and closed) to check their options."""
    from spark_eos_connect.transforms import parse_transform_chain, transform_config_problems

    problems: dict[str, list[str]] = {}

    def add(found: Mapping[str, Sequence[str]]) -> None:
        for key, messages in found.items():
            problems.setdefault(key, []).extend(messages)

    for name in CONVERTER_OPTIONS:
        try:
            _converter(name, props)
        except InvalidConfigError as error:
            add(error.problems)
        except ConfigError as error:
            add({name: _messages(error)})
    chain_problems = transform_config_problems(props)
    add(chain_problems)
    if not chain_problems and _has_chain(props):
        try:
            parse_transform_chain(props).close()
        except InvalidConfigError as error:
            add(error.problems)
        except ConfigError as error:
            add({TRANSFORMS: _messages(error)})
    try:
        SOURCE_ERRORS_CONFIG.parse(props)
    except InvalidConfigError as error:
        add(error.problems)
    return problems


def _messages(error: ConfigError) -> list[str]:
    """The messages of an error, one per problem (a converter reports a list as one text)."""
    if isinstance(error, InvalidConfigError):
        return [m for messages in error.problems.values() for m in messages]
    text = str(error)
    listed = [line[4:] for line in text.splitlines() if line.startswith("  - ")]
    return listed if text.startswith("Invalid configuration (") and listed else [text]


def parse_record_conversion(
    connector: str, props: Mapping[str, Any], resolved: Mapping[str, Any]
) -> RecordConversion | None:
    """The conversion of a connector's records; None when nothing asks for one.

    `props` are the connector's options (references unresolved, kept in the plan), `resolved`
    the same with references resolved (checked here). Raises `InvalidConfigError` listing
    every problem.
    """
    problems = record_conversion_problems(resolved)
    if problems:
        raise InvalidConfigError(problems)
    errors = ErrorPolicy.for_source(connector, resolved)
    names = {name: resolved.get(name) for name in CONVERTER_OPTIONS}
    if not any(names.values()) and not _has_chain(resolved) and not errors.tolerate_all:
        return None
    return RecordConversion(
        key_converter=_text(names[KEY_CONVERTER]),
        value_converter=_text(names[VALUE_CONVERTER]),
        header_converter=_text(names[HEADER_CONVERTER]),
        options={k: str(props[k]) for k in conversion_option_names(props)},
        errors=errors,
    )


def _text(value: Any) -> str | None:
    return str(value).strip() if value is not None and str(value).strip() else None


# --- task: converters ----------------------------------------------------------------------------

DataWriter = Callable[[str, Schema | None, Any], bytes | None]
HeaderWriter = Callable[[str, str, Schema | None, Any], bytes | None]

DEFAULT_CONVERTER: Final = "default (bytes, str as UTF-8, other values as JSON)"


def _default_bytes(what: str, option: str, value: Any) -> bytes | None:
    try:
        return to_bytes(value)
    except (TypeError, ValueError) as error:
        raise DataError(
            f"{what}: no {option} is set, and the default writes bytes, str and JSON values, "
            f"not {type(value).__name__} ({error}); set {option} (e.g. JsonConverter)"
        ) from None


def _default_key(topic: str, schema: Schema | None, value: Any) -> bytes | None:
    return _default_bytes("key", KEY_CONVERTER, value)


def _default_value(topic: str, schema: Schema | None, value: Any) -> bytes | None:
    return _default_bytes("value", VALUE_CONVERTER, value)


def _default_header(topic: str, key: str, schema: Schema | None, value: Any) -> bytes | None:
    return _default_bytes(f"header {key!r}", HEADER_CONVERTER, value)


def _converter(option: str, props: Mapping[str, Any]) -> Any:
    """The configured converter of `option` (None when not set)."""
    from spark_eos_connect.converters import make_converter, make_header_converter

    name = _text(props.get(option))
    if name is None:
        return None
    options = props_with_prefix(props, f"{option}.")
    if option == HEADER_CONVERTER:
        return make_header_converter(name, options)
    return make_converter(name, options, is_key=option == KEY_CONVERTER)


def _connect_name(converter: Any) -> str:
    from spark_eos_connect.converters import CONVERTERS

    cls = type(converter)
    names = [java for java, known in CONVERTERS.items() if known is cls]
    return names[0] if names else f"{cls.__module__}.{cls.__qualname__}"


# --- task: preparing records ---------------------------------------------------------------------


class ReadyRecord(NamedTuple):
    """A record ready to produce; `position` is where it was in the polled list."""

    position: int
    topic: str
    partition: int | None
    key: bytes | None
    value: bytes | None
    headers: list[tuple[str, bytes | None]] | None
    timestamp: int | None


@dataclass
class PreparedRecords:
    """One poll's records after the chain and the converters."""

    ready: list[ReadyRecord] = field(default_factory=list)
    dropped: list[int] = field(default_factory=list)
    """Positions of the records a stage filtered or a tolerated failure skipped."""


_FAILED: Final[Any] = object()


class RecordPreparer:
    """Runs one task's records through its chain and converters.

    `options` are `conversion.options` with references resolved; `task` names the task in logs
    and errors (`<connector>-<task>`, as Connect does); `clock` and `sleep` (seconds) pace
    retries.
    """

    def __init__(
        self,
        conversion: RecordConversion,
        options: Mapping[str, Any],
        task: str,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        from spark_eos_connect.transforms import TransformChain, parse_transform_chain
        from spark_eos_connect.transforms.arrow import split_topic_stages

        self.policy = conversion.errors
        self.task = task
        self.failed = 0
        """Records dropped by a tolerated failure so far."""
        self._clock, self._sleep = clock, sleep
        names = (conversion.key_converter, conversion.value_converter, conversion.header_converter)
        options = {**options, **{o: n for o, n in zip(CONVERTER_OPTIONS, names, strict=True) if n}}
        key, value, header = (_converter(name, options) for name in CONVERTER_OPTIONS)
        self._key: DataWriter = key.from_connect_data if key else _default_key
        self._value: DataWriter = value.from_connect_data if value else _default_value
        self._header: HeaderWriter = header.from_connect_header if header else _default_header
        self._classes = {
            Stage.KEY_CONVERTER: _connect_name(key) if key else DEFAULT_CONVERTER,
            Stage.VALUE_CONVERTER: _connect_name(value) if value else DEFAULT_CONVERTER,
            Stage.HEADER_CONVERTER: _connect_name(header) if header else DEFAULT_CONVERTER,
        }
        self.chain = parse_transform_chain(options) if _has_chain(options) else TransformChain()
        self._head, rest = split_topic_stages(self.chain)
        self._stages = rest.stages
        self._topics: dict[str, str | None] = {}

    def prepare(self, records: Sequence[SourceRecord]) -> PreparedRecords:
        """The produce-ready records of one poll, in order, and the positions of those dropped."""
        from spark_eos_connect.transforms import ConnectRecord, Header

        result = PreparedRecords()
        ready, dropped = result.ready, result.dropped
        stages, head, write_headers = self._stages, self._head, self._write_headers
        key_of, value_of = self._key, self._value
        for index, record in enumerate(records):
            topic = record.topic
            if head:
                routed = self._route(topic, record)
                if routed is None:
                    dropped.append(index)
                    continue
                topic = routed
            partition, timestamp = record.partition, record.timestamp
            key_schema, key, value_schema, value = (
                record.key_schema,
                record.key,
                record.value_schema,
                record.value,
            )
            headers: Sequence[Any] = record.headers
            if stages:
                current: Any = ConnectRecord(
                    topic,
                    partition,
                    key_schema,
                    key,
                    value_schema,
                    value,
                    timestamp,
                    tuple(Header(name, data) for name, data in headers),
                )
                for stage in stages:
                    try:
                        current = stage.apply(current)
                    except Exception as error:
                        current = self._recover(
                            error, Stage.TRANSFORMATION, stage.apply, (current,), record
                        )
                    if current is None or current is _FAILED:
                        break
                if current is None or current is _FAILED:
                    dropped.append(index)
                    continue
                topic, partition, timestamp = (
                    current.topic,
                    current.kafka_partition,
                    current.timestamp,
                )
                key_schema, key = current.key_schema, current.key
                value_schema, value = current.value_schema, current.value
                headers = current.headers
            raw_headers = None
            if headers:
                try:
                    raw_headers = write_headers(topic, headers)
                except Exception as error:
                    raw_headers = self._recover(
                        error, Stage.HEADER_CONVERTER, write_headers, (topic, headers), record
                    )
                    if raw_headers is _FAILED:
                        dropped.append(index)
                        continue
            try:
                key_bytes = key_of(topic, key_schema, key)
            except Exception as error:
                key_bytes = self._recover(
                    error, Stage.KEY_CONVERTER, key_of, (topic, key_schema, key), record
                )
                if key_bytes is _FAILED:
                    dropped.append(index)
                    continue
            try:
                value_bytes = value_of(topic, value_schema, value)
            except Exception as error:
                value_bytes = self._recover(
                    error, Stage.VALUE_CONVERTER, value_of, (topic, value_schema, value), record
                )
                if value_bytes is _FAILED:
                    dropped.append(index)
                    continue
            ready.append(
                ReadyRecord(index, topic, partition, key_bytes, value_bytes, raw_headers, timestamp)
            )
        return result

    def _write_headers(self, topic: str, headers: Sequence[Any]) -> list[tuple[str, bytes | None]]:
        """Header bytes: `(name, data)` pairs of a source record or a chain's `Header`s."""
        write = self._header
        written = []
        for header in headers:
            if isinstance(header, tuple):
                name, schema, data = header[0], None, header[1]
            else:
                name, schema, data = header.key, header.schema, header.value
            written.append((name, write(topic, name, schema, data)))
        return written

    def _route(self, topic: str, record: SourceRecord) -> str | None:
        """The topic after the chain's topic-only head (decided once per topic), None when it
        drops the record (filtered, or a tolerated failure)."""
        try:
            return self._topics[topic]
        except KeyError:
            pass
        try:
            routed = self._head.outcome(topic)
        except Exception as error:
            outcome = self._recover(
                error, Stage.TRANSFORMATION, self._head.outcome, (topic,), record
            )
            return None if outcome is _FAILED else outcome
        self._topics[topic] = routed
        return routed

    def _recover(
        self,
        error: Exception,
        stage: Stage,
        call: Callable[..., Any],
        args: tuple[Any, ...],
        record: SourceRecord,
    ) -> Any:
        """Retry `call` while `error` is retriable and the timeout allows; then the result, or
        `_FAILED` when the failure is tolerated (raises `ToleranceExceededError` otherwise)."""
        policy = self.policy
        timeout = policy.retry_timeout_ms
        if is_retriable(error) and timeout != 0:
            deadline = float("inf") if timeout < 0 else self._clock() + timeout / 1000
            attempt = 1
            while is_retriable(error) and self._clock() < deadline:
                remaining = (deadline - self._clock()) * 1000
                self._sleep(retry_delay_ms(policy, attempt, remaining) / 1000)
                attempt += 1
                try:
                    return call(*args)
                except Exception as again:
                    error = again
        return self._failed(error, stage, record)

    def _failed(self, error: Exception, stage: Stage, record: SourceRecord) -> Any:
        class_name = getattr(error, "class_name", None) or self._classes.get(stage, "")
        if self.policy.log_errors:
            detail = f", where source record is = {record!r}" if self.policy.log_messages else ""
            log.error(
                "Error encountered in task %s. Executing stage '%s' with class '%s'%s.",
                self.task,
                stage.value,
                class_name,
                detail,
                exc_info=error,
            )
        if not self.policy.tolerate_all:
            raise ToleranceExceededError(
                f"Tolerance exceeded in error handler: task {self.task} failed in stage "
                f"{stage.value} with class {class_name} on a record for topic {record.topic}: "
                f"{type(error).__name__}: {error} (errors.tolerance=none; nothing of the "
                "open transaction is committed)"
            ) from error
        self.failed += 1
        return _FAILED

    def close(self) -> None:
        """Close the chain's transformations and predicates."""
        self.chain.close()


def last_offsets(
    records: Sequence[SourceRecord],
) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
    """The last source offset of each source partition among `records`, in order of appearance
    of those last records (dropped records included: their offsets commit too)."""
    last: dict[int, int] = {}
    for index, record in enumerate(records):
        if record.source_partition is not None:
            last[id(record.source_partition)] = index
    chosen = [records[i] for i in sorted(last.values())]
    return [(r.source_partition, r.source_offset) for r in chosen if r.source_partition is not None]
