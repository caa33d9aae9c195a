"""What one benchmark run writes (the same sizes for every mode) and the mode names."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

FILE = "file -> Kafka"
GENERATOR = "generator -> Kafka"
DELTA = "Kafka -> Delta"
SINK = "Kafka -> file"
READER = "Kafka -> noop"
FIRST_RECORD = "first record"
POSTGRES_CDC = "PostgreSQL -> Kafka"
CONVERTERS = "converters (no Kafka)"
POSTGRES = "rows -> PostgreSQL"
WORKS = {
    "file": FILE,
    "generator": GENERATOR,
    "delta": DELTA,
    "sink": SINK,
    "reader": READER,
    "first": FIRST_RECORD,
    "postgres-cdc": POSTGRES_CDC,
    "converters": CONVERTERS,
    "postgres": POSTGRES,
}
"""Short names (`--only`) of the works."""
TIMED_WORKS = (FIRST_RECORD,)
"""Works measured in seconds (lower is better), not in records/s."""

LIMIT = "limit"
CONNECT = "Kafka Connect EOS worker"
EXACTLY_ONCE = "eosconnect exactly-once"
JAVA_FILE_SOURCE = "eosconnect exactly-once, Connect's Java FileStreamSource"
AT_LEAST_ONCE = "eosconnect at-least-once"
SPARK_KAFKA = "Spark Kafka source"
KAFKA_DELTA_SINK = "Spark Kafka source + delta_sink"
EOSCONNECT_DELTA = "eosconnect + delta_sink"
EOSCONNECT_READER = "eosconnect reader"
JOB_FROM_NOTHING = "eosconnect job from nothing"
SPARK_FLOOR = "Spark: one-row Python stream from nothing"
QUERY_ON_SESSION = "eosconnect query on a running session"
CONNECT_FIRST = "Kafka Connect worker, config PUT"
PG_ALOS_UPSERT = "at-least-once upsert (executemany)"
PG_SINK_INSERT = "PostgresSink insert, exactly once"
PG_SINK_UPSERT = "PostgresSink upsert, exactly once"
CDC_EOS_SNAPSHOT = "eosconnect snapshot"
CDC_DEBEZIUM_SNAPSHOT = "Debezium on Connect EOS worker, snapshot"
CDC_EOS_STREAMING = "eosconnect streaming"
CDC_DEBEZIUM_STREAMING = "Debezium on Connect EOS worker, streaming"
CDC_JAVA_SNAPSHOT = "Debezium under eosconnect, snapshot"
CDC_JAVA_STREAMING = "Debezium under eosconnect, streaming"


def connect_sink(tasks: int) -> str:
    """The Kafka Connect sink worker's mode with `tasks` tasks."""
    return f"Kafka Connect sink worker, {tasks} task{'s' if tasks > 1 else ''}"


def eosconnect_sink(tasks: int) -> str:
    """The eosconnect FileStreamSink's mode with `tasks.max` = `tasks`."""
    return f"eosconnect FileStreamSink, {tasks} task{'s' if tasks > 1 else ''}"


SINK_TASKS = (1, 2)
"""The `tasks.max` each sink runs with."""

PEERS: dict[tuple[str, str], str] = {
    (FILE, EXACTLY_ONCE): CONNECT,
    (FILE, JAVA_FILE_SOURCE): CONNECT,
    (GENERATOR, AT_LEAST_ONCE): EXACTLY_ONCE,
    (DELTA, KAFKA_DELTA_SINK): SPARK_KAFKA,
    (DELTA, EOSCONNECT_DELTA): SPARK_KAFKA,
    **{(SINK, eosconnect_sink(n)): connect_sink(n) for n in SINK_TASKS},
    (READER, EOSCONNECT_READER): SPARK_KAFKA,
    (FIRST_RECORD, JOB_FROM_NOTHING): CONNECT_FIRST,
    (FIRST_RECORD, QUERY_ON_SESSION): CONNECT_FIRST,
    (CONVERTERS, "AvroConverter, source path"): "JsonConverter, source path",
    (CONVERTERS, "AvroConverter, sink path"): "JsonConverter, sink path",
    (POSTGRES, PG_SINK_INSERT): PG_ALOS_UPSERT,
    (POSTGRES, PG_SINK_UPSERT): PG_ALOS_UPSERT,
    (POSTGRES_CDC, CDC_EOS_SNAPSHOT): CDC_DEBEZIUM_SNAPSHOT,
    (POSTGRES_CDC, CDC_EOS_STREAMING): CDC_DEBEZIUM_STREAMING,
    (POSTGRES_CDC, CDC_JAVA_SNAPSHOT): CDC_DEBEZIUM_SNAPSHOT,
    (POSTGRES_CDC, CDC_JAVA_STREAMING): CDC_DEBEZIUM_STREAMING,
}
"""(work, mode) -> the mode of the same work it is compared with."""


def split_batches(total: int, size: int) -> list[int]:
    """`total` records in batches of `size`, the last one partial."""
    sizes = []
    left = total
    while left > 0:
        sizes.append(min(size, left))
        left -= sizes[-1]
    return sizes


@dataclass(frozen=True)
class BenchConfig:
    """The sizes of one run."""

    records: int = 1_000_000
    """Measured records of the generator and Kafka -> Delta modes."""
    file_records: int = 3_000_000
    """Lines of the file the file -> Kafka modes write (FileStreamSource, exactly once, against
    Connect's EOS worker), as issue 26 measured that steady state: each side's start-up (the
    query's, the connector's) is a smaller share of the time than with fewer lines."""
    tasks: int = 2
    """The Generator's `tasks.max` (FileStreamSource always has one task)."""
    per_trigger: int = 450_000
    """`maxRecordsPerTrigger` (and `maxOffsetsPerTrigger`): records per micro-batch, all tasks.
    By default the last batch is small (100,000 after two of 450,000), so the fixed cost of a
    batch and the cost of a record can be told apart."""
    value_size: int = 100
    """The Generator's `value.size`, the file's line length and the Delta topic's value size."""
    records_per_poll: int = 10_000
    """The Generator's `records.per.poll`."""
    file_batch_size: int = 10_000
    """FileStreamSource's `batch.size` (Connect's and eosconnect's)."""
    delta_rounds: int = 3
    """Measured rounds per Kafka -> Delta reader (after an unmeasured warm-up round each); an odd
    count, so that the median is one round's time and one slow round does not move it."""
    delta_partitions: int = 2
    """Partitions of the Kafka -> Delta input topic."""
    sink_records: int = 3_000_000
    """Records of the topic the sinks and the readers into `noop` read."""
    sink_partitions: int = 2
    """Partitions of that topic."""
    sink_per_trigger: int = 1_000_000
    """`maxRecordsPerTrigger` / `maxOffsetsPerTrigger` of the sink and `noop` queries."""
    reader_rounds: int = 3
    """Measured rounds per reader into `noop` (after a warm-up round each; odd: a median)."""
    first_record_runs: int = 3
    """Runs of each first-record mode (the median is kept)."""
    works: tuple[str, ...] = (
        FILE,
        GENERATOR,
        DELTA,
        SINK,
        READER,
        FIRST_RECORD,
        POSTGRES,
        CONVERTERS,
    )
    """Which works run."""

    def __post_init__(self) -> None:
        for name in (
            "records",
            "file_records",
            "tasks",
            "per_trigger",
            "records_per_poll",
            "file_batch_size",
            "delta_rounds",
            "delta_partitions",
            "sink_records",
            "sink_partitions",
            "sink_per_trigger",
            "reader_rounds",
            "first_record_runs",
        ):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, not {getattr(self, name)}")
        if self.value_size < 0:
            raise ValueError(f"value_size must be at least 0, not {self.value_size}")
        if self.records % self.tasks:
            raise ValueError(
                f"records ({self.records}) must be a multiple of tasks ({self.tasks}): every "
                "generator task writes the same number of records"
            )
        unknown = set(self.works) - set(WORKS.values())
        if unknown or not self.works:
            raise ValueError(f"works must be among {sorted(WORKS.values())}, not {self.works}")

    # -- generator -> Kafka: per task, one unmeasured warm-up batch, then the measured ones --

    @property
    def task_records(self) -> int:
        """Measured generator records of one task."""
        return self.records // self.tasks

    @property
    def task_batch(self) -> int:
        """Generator records of one task in a full micro-batch: its share of the trigger (a
        task keeps what it polled beyond its share for the next batch)."""
        return math.ceil(self.per_trigger / self.tasks)

    def generator_batches(self) -> list[int]:
        """One task's measured batch sizes."""
        return split_batches(self.task_records, self.task_batch)

    @property
    def task_total(self) -> int:
        """Everything one generator task writes (its `max.records`): warm-up plus measured."""
        return self.task_batch + self.task_records

    @property
    def generator_total(self) -> int:
        """Everything a generator mode writes to its topic."""
        return self.task_total * self.tasks

    # -- file -> Kafka: one task, every batch timed ---------------------------------------

    def file_batches(self) -> list[int]:
        """The file's lines in micro-batches of the single task."""
        return split_batches(self.file_records, self.per_trigger)

    def as_dict(self) -> dict[str, Any]:
        """For the JSON report."""
        return {**asdict(self), "works": list(self.works)}


QUICK = {
    "records": 100_000,
    "file_records": 100_000,
    "per_trigger": 45_000,
    "delta_rounds": 1,
    "sink_records": 300_000,
    "sink_per_trigger": 100_000,
    "reader_rounds": 1,
    "first_record_runs": 1,
}
"""`--quick`: a tenth of the records, one measured round per reader, one first-record run."""

DELTA_WARMUP_RECORDS = 10_000
"""Records of the small topic each Kafka -> Delta reader warms up on."""
