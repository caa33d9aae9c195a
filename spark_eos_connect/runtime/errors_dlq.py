"""Connect's error handling: `errors.tolerance`, retries, logging, and the sinks' dead letter queue.

A record that fails (converter, put) either stops the query with a message naming its topic,
partition and offset (`errors.tolerance=none`), or is skipped and, when
`errors.deadletterqueue.topic.name` is set, written to the DLQ with its original key, value,
headers and timestamp plus, with `errors.deadletterqueue.context.headers.enable=true`, Connect's
`__connect.errors.*` context headers (names and UTF-8 string values as Connect's
DeadLetterQueueReporter writes them). DLQ writes are at least once, as in Connect.
Used on executors (sink tasks) and on the driver (Delta sink).

Source connectors share the policy (`ErrorPolicy.for_source`, options `SOURCE_ERRORS_CONFIG`):
tolerance, `errors.retry.timeout`/`errors.retry.delay.max.ms` and logging, but no DLQ, as in
Connect (`source.conversion` applies it).
"""

from __future__ import annotations

import enum
import logging
import random
import traceback
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from spark_eos_connect.api.config import ConfigDef, ConfigType, Range, ValidString
from spark_eos_connect.errors import EosConnectError, RetriableError
from spark_eos_connect.kafka.dlq import DlqProducer, create_dlq_topic

log = logging.getLogger(__name__)

TOLERANCE = "errors.tolerance"
DLQ_TOPIC = "errors.deadletterqueue.topic.name"
DLQ_REPLICATION = "errors.deadletterqueue.topic.replication.factor"
DLQ_CONTEXT_HEADERS = "errors.deadletterqueue.context.headers.enable"
LOG_ENABLE = "errors.log.enable"
LOG_INCLUDE_MESSAGES = "errors.log.include.messages"
RETRY_TIMEOUT = "errors.retry.timeout"
RETRY_MAX_DELAY = "errors.retry.delay.max.ms"
DLQ_PREFIX = "errors.deadletterqueue."

ERRORS_CONFIG = (
    ConfigDef()
    .define(
        TOLERANCE,
        ConfigType.STRING,
        "none",
        ValidString.one_of("none", "all", case_insensitive=True),
        "medium",
        "`none`: a failing record stops the query; `all`: it is skipped (and sent to the DLQ).",
    )
    .define(
        DLQ_TOPIC,
        ConfigType.STRING,
        "",
        None,
        "medium",
        "Dead letter queue topic for failed records (created with 1 partition if missing).",
    )
    .define(
        DLQ_REPLICATION,
        ConfigType.INT,
        3,
        Range.at_least(-1),
        "low",
        "Replication factor of a created DLQ topic (capped at the number of brokers).",
    )
    .define(
        DLQ_CONTEXT_HEADERS,
        ConfigType.BOOLEAN,
        False,
        None,
        "medium",
        "Add Connect's `__connect.errors.*` headers describing the failure to DLQ records.",
    )
    .define(LOG_ENABLE, ConfigType.BOOLEAN, False, None, "low", "Log each failed record.")
    .define(
        LOG_INCLUDE_MESSAGES,
        ConfigType.BOOLEAN,
        False,
        None,
        "low",
        "Include key and value of failed records in the log.",
    )
)

SOURCE_ERRORS_CONFIG = (
    ConfigDef()
    .define(
        TOLERANCE,
        ConfigType.STRING,
        "none",
        ValidString.one_of("none", "all", case_insensitive=True),
        "medium",
        "For failures in transforms and converters: `none` fails the task (nothing of its open "
        "transaction is committed); `all` skips the record, whose source offset still commits.",
    )
    .define(
        RETRY_TIMEOUT,
        ConfigType.LONG,
        0,
        Range.at_least(-1),
        "medium",
        "How long (ms) a transform or converter raising `RetriableError` is tried again; 0: "
        "never, -1: without end. Other errors are never retried.",
    )
    .define(
        RETRY_MAX_DELAY,
        ConfigType.LONG,
        60000,
        Range.at_least(0),
        "medium",
        "The longest wait (ms) between two tries; waits double from 300 ms up to it, then are "
        "random below it.",
    )
).merge(ConfigDef(ERRORS_CONFIG.keys[name] for name in (LOG_ENABLE, LOG_INCLUDE_MESSAGES)))
"""The source side's `errors.*` options: Connect's, without the dead letter queue."""

HEADER_PREFIX = "__connect.errors."
HEADER_TOPIC = HEADER_PREFIX + "topic"
HEADER_PARTITION = HEADER_PREFIX + "partition"
HEADER_OFFSET = HEADER_PREFIX + "offset"
HEADER_CONNECTOR = HEADER_PREFIX + "connector.name"
HEADER_TASK = HEADER_PREFIX + "task.id"
HEADER_STAGE = HEADER_PREFIX + "stage"
HEADER_CLASS = HEADER_PREFIX + "class.name"
HEADER_EXCEPTION = HEADER_PREFIX + "exception.class.name"
HEADER_MESSAGE = HEADER_PREFIX + "exception.message"
HEADER_STACKTRACE = HEADER_PREFIX + "exception.stacktrace"


class Stage(enum.Enum):
    """Where a record failed (Connect's `Stage` names)."""

    KEY_CONVERTER = "KEY_CONVERTER"
    VALUE_CONVERTER = "VALUE_CONVERTER"
    HEADER_CONVERTER = "HEADER_CONVERTER"
    TRANSFORMATION = "TRANSFORMATION"
    TASK_PUT = "TASK_PUT"


@dataclass(frozen=True)
class ErrorPolicy:
    """Parsed `errors.*` options of one connector."""

    connector: str
    tolerate_all: bool = False
    dlq_topic: str | None = None
    dlq_replication_factor: int = 3
    context_headers: bool = False
    log_errors: bool = False
    log_messages: bool = False
    retry_timeout_ms: int = 0
    """How long a `RetriableError` is retried (-1: without end); sources only so far."""
    retry_max_delay_ms: int = 60000

    @staticmethod
    def from_options(connector: str, options: Mapping[str, Any]) -> ErrorPolicy:
        """Parse the `errors.*` options (lower-case keys)."""
        return ErrorPolicy.from_values(connector, ERRORS_CONFIG.parse(options))

    @staticmethod
    def from_values(connector: str, values: Mapping[str, Any]) -> ErrorPolicy:
        """The policy of `errors.*` values parsed with `ERRORS_CONFIG` (or a definition that
        merges it)."""
        return ErrorPolicy(
            connector=connector,
            tolerate_all=values[TOLERANCE].lower() == "all",
            dlq_topic=values[DLQ_TOPIC] or None,
            dlq_replication_factor=values[DLQ_REPLICATION],
            context_headers=values[DLQ_CONTEXT_HEADERS],
            log_errors=values[LOG_ENABLE],
            log_messages=values[LOG_INCLUDE_MESSAGES],
        )

    @staticmethod
    def for_source(connector: str, options: Mapping[str, Any]) -> ErrorPolicy:
        """Parse a source connector's `errors.*` options (`SOURCE_ERRORS_CONFIG`)."""
        values = SOURCE_ERRORS_CONFIG.parse(options)
        return ErrorPolicy(
            connector=connector,
            tolerate_all=values[TOLERANCE].lower() == "all",
            log_errors=values[LOG_ENABLE],
            log_messages=values[LOG_INCLUDE_MESSAGES],
            retry_timeout_ms=values[RETRY_TIMEOUT],
            retry_max_delay_ms=values[RETRY_MAX_DELAY],
        )


RETRY_MIN_DELAY_MS = 300
"""The first wait between two tries (Connect's `RETRIES_DELAY_MIN_MS`)."""


def is_retriable(error: BaseException) -> bool:
    """Whether `error`, or the error a stage wrapped (`__cause__`), is a `RetriableError`."""
    return isinstance(error, RetriableError) or isinstance(error.__cause__, RetriableError)


def retry_delay_ms(
    policy: ErrorPolicy, attempt: int, remaining_ms: float, rng: random.Random | None = None
) -> float:
    """The wait after failed try number `attempt` (1, 2, ...), as Connect's backoff: 300 ms
    doubling per try, random below `errors.retry.delay.max.ms` once past it, never beyond the
    retry deadline (`remaining_ms` left; infinite when the timeout is -1)."""
    delay: float = RETRY_MIN_DELAY_MS << min(attempt - 1, 40)
    if delay > policy.retry_max_delay_ms:
        delay = (rng or random).random() * policy.retry_max_delay_ms
    return max(0.0, min(delay, remaining_ms))


def source_dlq_problems(options: Mapping[str, Any]) -> dict[str, list[str]]:
    """One problem per `errors.deadletterqueue.*` option: sources have no dead letter queue."""
    return {
        name: [
            f"{name} is not supported on a source connector: as in Kafka Connect, only sink "
            "connectors have a dead letter queue (a source record that fails in a transform or "
            "converter was never a Kafka record to forward). Use errors.tolerance=all with "
            "errors.log.enable=true to skip and log such records"
        ]
        for name in sorted(options)
        if name.startswith(DLQ_PREFIX)
    }


@dataclass(frozen=True)
class FailedRecord:
    """A consumed record that failed, with where and why."""

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    headers: Sequence[tuple[str, bytes | None]]
    timestamp_ms: int | None
    stage: Stage
    executing_class: str
    error: BaseException
    context: str = ""
    """What failed, for the error message (a transformation's alias and class, say)."""

    def where(self) -> str:
        """`topic=t partition=p offset=o`."""
        return f"topic={self.topic} partition={self.partition} offset={self.offset}"


class ToleranceExceededError(EosConnectError):
    """A record failed with `errors.tolerance=none`; the message names the record."""


def qualified_name(cls: type) -> str:
    """`module.Class` of an exception or class, as the DLQ header shows it."""
    return f"{cls.__module__}.{cls.__qualname__}"


def context_headers(failed: FailedRecord, connector: str, task: int) -> list[tuple[str, bytes]]:
    """Connect's DLQ context headers for `failed` (UTF-8 string values)."""
    error = failed.error
    values = [
        (HEADER_TOPIC, failed.topic),
        (HEADER_PARTITION, str(failed.partition)),
        (HEADER_OFFSET, str(failed.offset)),
        (HEADER_CONNECTOR, connector),
        (HEADER_TASK, str(task)),
        (HEADER_STAGE, failed.stage.value),
        (HEADER_CLASS, failed.executing_class),
        (HEADER_EXCEPTION, qualified_name(type(error))),
        (HEADER_MESSAGE, str(error)),
        (HEADER_STACKTRACE, "".join(traceback.format_exception(error))),
    ]
    return [(name, text.encode("utf-8")) for name, text in values]


def ensure_dlq_topic(
    kafka: Mapping[str, Any], policy: ErrorPolicy, timeout_s: float = 30.0
) -> None:
    """Driver: create the DLQ topic (1 partition) if it does not exist."""
    if not policy.dlq_topic:
        return
    create_dlq_topic(
        kafka, policy.dlq_topic, policy.dlq_replication_factor, DLQ_REPLICATION, timeout_s
    )


class ErrorReporter:
    """Handles failed records of one task: raise (tolerance none) or log and send to the DLQ.

    `close()` flushes the DLQ producer; call it before offsets covering the records are
    committed, so a failed record is in the DLQ before it counts as consumed.
    """

    def __init__(self, policy: ErrorPolicy, kafka: Mapping[str, Any], task: int = 0) -> None:
        self.policy = policy
        self.kafka = dict(kafka)
        self.task = task
        self.failed = 0
        self._dlq: DlqProducer | None = None

    def report(self, failed: FailedRecord) -> None:
        """Raise `ToleranceExceededError` unless tolerance is `all`; then log and queue."""
        if not self.policy.tolerate_all:
            raise ToleranceExceededError(
                f"Tolerance exceeded in error handler: connector {self.policy.connector} failed "
                f"in stage {failed.stage.value}"
                f"{' in ' + failed.context if failed.context else ''} on record {failed.where()}: "
                f"{qualified_name(type(failed.error))}: {failed.error} (errors.tolerance=none)"
            ) from failed.error
        self.failed += 1
        if self.policy.log_errors:
            detail = ""
            if self.policy.log_messages:
                detail = f" key={failed.key!r} value={failed.value!r}"
            log.error(
                "Error in stage %s for record %s: %s%s",
                failed.stage.value,
                failed.where(),
                failed.error,
                detail,
            )
        if self.policy.dlq_topic:
            self._send(failed)

    def _send(self, failed: FailedRecord) -> None:
        if self._dlq is None:
            self._dlq = DlqProducer(self.kafka, str(self.policy.dlq_topic))
        headers = list(failed.headers)
        if self.policy.context_headers:
            headers += context_headers(failed, self.policy.connector, self.task)
        self._dlq.send(failed.value, failed.key, headers, failed.timestamp_ms)

    def close(self, timeout_s: float = 60.0) -> None:
        """Flush DLQ records; raise if some could not be written."""
        dlq = self._dlq
        left = dlq.flush(timeout_s) if dlq is not None else None
        if dlq is None or left is None:
            return
        if left > 0 or dlq.delivery_errors:
            raise EosConnectError(
                f"could not write every failed record to the dead letter queue "
                f"{self.policy.dlq_topic}: {left} undelivered after {timeout_s:.0f}s, errors "
                f"{dlq.delivery_errors[:3]}"
            )
