"""`readStream.format("eosconnect").option("topics", ...)`: Kafka topics as a Spark stream.

Driver side: `EosConnectKafkaStreamReader` (one per query, in a long-lived Python process) plans
each micro-batch as offset ranges below the last stable offsets, so a micro-batch replayed from
Spark's offsets reads exactly the same records. With a `name`, it also follows the sink
connector's target state in the config topic and, after a stop, continues from the consumer
group's offsets (`sink.lifecycle`). Executor side: `read()` reads one range with a
read_committed consumer and yields Arrow batches (rows as in `KAFKA_ROW_DDL`). For a sink
connector run by `SinkTask`s the stream carries no records: each sink task's input partition
yields its assigned ranges (`SINK_RANGE_DDL`), and the writer's task reads them itself on the
task's host (`sink.host`), so the records never cross Spark's JVM. Such a stream's schema
carries the reader's options to the writer (`spark.reader_options`).

The options are read once (`parse_kafka_stream`), each with its definition: the reader's own,
the sink connector's worker settings (`sink.lifecycle`), and `tasks.max` and `takeover` as the
sink writer parses them (`sink.options`), so a value the writer would refuse is refused here.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxRows,
    SupportsTriggerAvailableNow,
)

from spark_eos_connect.api.config import ConfigDef
from spark_eos_connect.kafka.clients import ensure_reachable
from spark_eos_connect.kafka.security import authenticates
from spark_eos_connect.runtime.config.config_references import ConfigProviders
from spark_eos_connect.runtime.config.framework_config import TAKEOVER, TAKEOVER_CONFIG
from spark_eos_connect.runtime.config.options import DataSourceOptions
from spark_eos_connect.sink.kafka_input import (
    TP,
    KafkaMetadata,
    KafkaReaderConfig,
    OffsetRange,
    parse_reader_options,
    plan_end_offsets,
    plan_ranges,
    ranges_batch,
    read_ranges,
    task_assignments,
)
from spark_eos_connect.sink.lifecycle import (
    SinkLifecycle,
    SinkLifecycleConfig,
    StreamOffsets,
    batch_start,
    continued,
    decode_stream_offsets,
    encode_stream_offsets,
    parse_sink_lifecycle,
    rebased,
)
from spark_eos_connect.spark.drain import draining
from spark_eos_connect.spark.worker_gc import settle_heap
from spark_eos_connect.spark.worker_signals import stop_has_begun

log = logging.getLogger(__name__)


@dataclass
class KafkaRangePartition(InputPartition):
    """The offset range one Spark task reads in a micro-batch (driver → executor)."""

    ranges: tuple[OffsetRange, ...]
    kafka: dict[str, str]
    poll_timeout_ms: int
    providers: ConfigProviders = field(default_factory=ConfigProviders)


@dataclass
class SinkTaskPartition(InputPartition):
    """One sink task's assignment in a micro-batch (driver → executor): its rows tell the
    writer's task which ranges to read (`sink.host`)."""

    task: int
    ranges: tuple[OffsetRange, ...]
    generation: int
    run: str


def runs_sink_tasks(connector_class: str) -> bool:
    """Whether the connector's rows go to its `SinkTask`s through the `eosconnect` writer
    (not DeltaSink's `foreachBatch`, nor a class that does not resolve)."""
    from spark_eos_connect.errors import EosConnectError
    from spark_eos_connect.plugins.connectors import resolve_connector_class
    from spark_eos_connect.spark.sink_writer import FOREACH_BATCH_HINT

    try:
        cls = resolve_connector_class(connector_class)
    except EosConnectError:
        return False
    return not getattr(cls, FOREACH_BATCH_HINT, None)


def _parsed(read: DataSourceOptions, definitions: ConfigDef, name: str) -> Any:
    """Option `name` parsed with its definition in `definitions`, references resolved; raises
    `InvalidConfigError` naming the option."""
    given = {name: read.props[name]} if name in read.props else {}
    definition = ConfigDef([definitions.keys[name]])
    return definition.parse(read.checked_providers().resolve(given))[name]


def sink_tasks(options: Mapping[str, Any] | DataSourceOptions) -> int | None:
    """`tasks.max` when the options name a sink `connector.class` run by `SinkTask`s, else
    None; a value the writer would refuse is refused here."""
    read = DataSourceOptions.read(options)
    connector = read.get("connector.class")
    if not connector or not runs_sink_tasks(str(connector)):
        return None
    from spark_eos_connect.sink.options import SINK_FRAMEWORK_CONFIG

    return int(_parsed(read, SINK_FRAMEWORK_CONFIG, "tasks.max"))


@dataclass(frozen=True)
class KafkaStreamConfig:
    """A Kafka stream reader's options, read once (`parse_kafka_stream`)."""

    reader: KafkaReaderConfig
    """The topics, where to start, the read limit, the Kafka client settings."""
    lifecycle: SinkLifecycleConfig | None
    """The sink connector `name` the stream follows; None without a `name`."""
    sink_tasks: int | None
    """The number of sink tasks a micro-batch is planned for (`sink_tasks`); None: one Spark
    task per topic partition with records."""


def parse_kafka_stream(options: Mapping[str, Any] | DataSourceOptions) -> KafkaStreamConfig:
    """Parse the options of `readStream.format("eosconnect").option("topics", ...)` with the
    definitions of the reader (`READER_CONFIG`), of the connector's worker
    (`sink.lifecycle`) and of the sink writer (`tasks.max`, `takeover`); raises `ConfigError`
    naming the option."""
    read = DataSourceOptions.read(options)
    reader = parse_reader_options(read)
    lifecycle = parse_sink_lifecycle(read)
    takeover = bool(_parsed(read, TAKEOVER_CONFIG, TAKEOVER))
    if lifecycle is not None:
        lifecycle = replace(lifecycle, takeover=takeover)
    return KafkaStreamConfig(reader, lifecycle, sink_tasks(read))


class EosConnectKafkaStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Micro-batches of Kafka records; Spark's offsets are `{"topic": {"partition": offset}}`
    (plus the reserved keys of `sink.lifecycle` for a named sink connector)."""

    def __init__(self, options: Mapping[str, Any] | DataSourceOptions) -> None:
        parsed = parse_kafka_stream(options)
        self.config: KafkaReaderConfig = parsed.reader
        self._lifecycle_config: SinkLifecycleConfig | None = parsed.lifecycle
        self._lifecycle: SinkLifecycle | None = None
        self._metadata: KafkaMetadata | None = None
        self._available_now: dict[TP, int] | None = None
        self._sink_tasks = parsed.sink_tasks
        self._run = uuid.uuid4().hex
        """This run of the query (a reader lives for one): its sink tasks are its own."""

    def _kafka(self) -> KafkaMetadata:
        if self._metadata is None:
            kafka = self.config.providers.resolve(self.config.kafka, prefix="kafka.")
            if not authenticates(kafka):  # the driver's first call: a wrong address named
                ensure_reachable(kafka)
            self._metadata = KafkaMetadata(kafka)
        return self._metadata

    def _connector(self) -> SinkLifecycle | None:
        """The named sink connector (registered on first use), or None without a `name`."""
        if self._lifecycle is None and self._lifecycle_config is not None:
            self._lifecycle = SinkLifecycle(self._lifecycle_config)
        return self._lifecycle

    def _latest(self) -> dict[TP, int]:
        metadata = self._kafka()
        return metadata.last_stable_offsets(metadata.partitions(self.config))

    def initialOffset(self) -> dict[str, Any]:
        """Driver: consumer group `connect-<name>`'s offsets, else `startingOffsets`."""
        metadata = self._kafka()  # first: an unreachable cluster is reported as such
        connector = self._connector()
        commit = connector.view(force=True).tasks_commit if connector is not None else None
        offsets = metadata.initial_offsets(self.config)
        return encode_stream_offsets(StreamOffsets(offsets, None, commit))

    def getDefaultReadLimit(self) -> ReadLimit:
        """Driver: `maxRecordsPerTrigger` if set."""
        limit = self.config.max_records_per_trigger
        return ReadAllAvailable() if limit is None else ReadMaxRows(limit)

    def prepareForTriggerAvailableNow(self) -> None:
        """Driver: `Trigger.AvailableNow` reads up to the offsets stable right now."""
        self._available_now = self._latest()

    def latestOffset(
        self, start: dict[str, Any] | None = None, limit: ReadLimit | None = None
    ) -> dict[str, Any]:
        """Driver: the next batch's end, capped by the read limit (shared by lag).

        While the connector is PAUSED or STOPPED, or the job drains: `start` (no new batch).
        After a stop: a batch from the group's offsets, its start recorded in the end
        (`sink_lifecycle`).
        """
        current = decode_stream_offsets(start)
        if draining():  # the job is stopping between micro-batches
            return start if start is not None else encode_stream_offsets(current)
        connector = self._connector()
        view = connector.view() if connector is not None else None
        if view is not None and not view.running:
            return start if start is not None else encode_stream_offsets(current)
        if connector is None or view is None or not connector.rebase_due(current, view):
            return encode_stream_offsets(continued(current, self._plan_end(current.next, limit)))
        begin = self._kafka().initial_offsets(self.config)
        end = rebased(begin, self._plan_end(begin, limit), view.tasks_commit)
        connector.rebased()
        log.info("connector %s continues from its consumer group's offsets", self.config.name)
        return encode_stream_offsets(end)

    def _plan_end(self, begin: dict[TP, int], limit: ReadLimit | None) -> dict[TP, int]:
        """The end after `begin`: up to the last stable offsets (or Trigger.AvailableNow's)."""
        latest = self._latest()
        if self._available_now is not None:
            target = self._available_now
            latest = {tp: min(o, target.get(tp, begin.get(tp, 0))) for tp, o in latest.items()}
        rows = limit.max_rows if isinstance(limit, ReadMaxRows) else None
        return plan_end_offsets(begin, latest, rows)

    def reportLatestOffset(self) -> dict[str, Any] | None:
        """Driver: the last stable offsets, for the query's progress."""
        return encode_stream_offsets(StreamOffsets(self._latest()))

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> Sequence[InputPartition]:
        """Driver: one input partition per topic partition with records in the batch; for a
        sink connector (`connector.class` given), one per sink task: `tasks.max`, at most one
        per partition, the partitions dealt to them in turn (`task_assignments`), so that
        Spark task i runs the connector's task i over its partitions, as Connect's task i.

        The batch starts at `start`, or at the start recorded in `end` after a rebase, so a
        replayed batch reads exactly the same ranges.
        """
        last = decode_stream_offsets(end)
        first = batch_start(decode_stream_offsets(start), last)
        if self._sink_tasks is not None:
            generation = self._generation()
            assigned = task_assignments(first, last.next, self._sink_tasks)
            return [
                SinkTaskPartition(task, ranges, generation, self._run)
                for task, ranges in enumerate(assigned)
            ]
        config = self.config
        return [
            KafkaRangePartition((r,), config.kafka, config.poll_timeout_ms, config.providers)
            for r in plan_ranges(first, last.next)
        ]

    def _generation(self) -> int:
        """The connector's latest task-config commit in the config topic (-1: none)."""
        connector = self._connector()
        commit = connector.view().tasks_commit if connector is not None else None
        return -1 if commit is None else commit

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        """Executor: the committed records of one range, or a sink task's ranges."""
        settle_heap()
        if isinstance(partition, SinkTaskPartition):
            yield ranges_batch(
                partition.task, partition.ranges, partition.generation, partition.run
            )
            return
        assert isinstance(partition, KafkaRangePartition)
        kafka = partition.providers.resolve(partition.kafka, prefix="kafka.")
        yield from read_ranges(kafka, partition.ranges, partition.poll_timeout_ms)

    def commit(self, end: dict[str, Any]) -> None:
        """Driver: nothing; sinks commit offsets to the consumer group (or keep them)."""

    def stop(self) -> None:
        """Driver: report the connector unassigned and drop the clients."""
        stop_has_begun()
        if self._lifecycle is not None:
            try:
                self._lifecycle.close()
            except Exception as error:  # the query stops anyway
                log.warning("closing connector %s: %s", self.config.name, error)
            self._lifecycle = None
        self._metadata = None
