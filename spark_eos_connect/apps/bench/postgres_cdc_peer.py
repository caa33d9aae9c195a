"""`--only postgres-cdc` side by side (issue 45): PostgresCdcSource, a Spark query, next to
Debezium 3.6.1.Final's PostgresConnector on a Kafka Connect 4.3.1 distributed worker
(`exactly.once.source.support=enabled`, as `connect_worker` configures it), on the same
PostgreSQL cluster and the same broker; and the same Java connector from its plugin folder
as an eosconnect query (issue 46: its tasks in a JVM task host), configured as on the worker.

The protocol, per side and per round, one side at a time (the two would contend for the
machine's 2 cores if run at once):

1. A fresh database gets the same table: `rows` rows (ids from 0, `size`-byte values).
2. **snapshot**: the connector starts with `snapshot.mode=initial` (eosconnect: the query's
   `start()` on the running session; Debezium: `PUT /connectors/NAME/config` on the running
   worker), timed until its topic's `rows` records are visible read_committed.
3. **streaming**: once the counting consumer has read those, `rows` inserts (ids from `rows`,
   1,000 per transaction) are committed, timed from the first one's start until the topic's
   `2 * rows` records are visible read_committed (the inserts' own time is in the timing).
4. The connector stops, its slot is dropped, and its topic is counted: `rows` snapshot
   records (`op` r) and `rows` inserts (`op` c), each id once.

Every side gets an untimed warm-up run (`WARMUP_ROWS`) first; then `ROUNDS` rounds, the order
reversed every other round (eosconnect first in round 1, Debezium on the worker first in round
2); each figure is the median of its rounds. Each side has its own slot, publication
(`publication.autocreate.mode=filtered`), topic prefix and topic (one partition, created
beforehand). All use JsonConverter without schemas for keys and values and
`max.batch.size=5000` (the figure the bench's eosconnect CDC query already used; Debezium's
other batch settings stay at their defaults, `max.queue.size=8192`); the queries also keep the
bench's `maxRecordsPerTrigger` and its 200 ms trigger.
"""

from __future__ import annotations

import contextlib
import json
import statistics
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from spark_eos_connect.apps.bench import connect_peer
from spark_eos_connect.apps.bench.config import (
    CDC_DEBEZIUM_SNAPSHOT,
    CDC_DEBEZIUM_STREAMING,
    CDC_EOS_SNAPSHOT,
    CDC_EOS_STREAMING,
    CDC_JAVA_SNAPSHOT,
    CDC_JAVA_STREAMING,
    POSTGRES_CDC,
)
from spark_eos_connect.apps.bench.kafka_io import VisibilityWatch
from spark_eos_connect.apps.bench.postgres_cdc import (
    MAX_CHANGES,
    cdc_options,
    insert_changes,
    start_query,
)
from spark_eos_connect.apps.bench.results import ModeResult, Verification
from spark_eos_connect.apps.connect_worker import ConnectRestError, ConnectWorker
from spark_eos_connect.jvm.jars import plugin_path
from spark_eos_connect.kafka.clients import admin_client, ensure_topic, read_to_end
from spark_eos_connect.testing.postgres import PostgresCluster, PostgresDatabase
from spark_eos_connect.testing.waiting import wait_for

EOS: Final = "eosconnect"
JAVA: Final = "Debezium under eosconnect"
DEBEZIUM: Final = "Debezium"
SIDES: Final = (EOS, JAVA, DEBEZIUM)
MEASURES: Final = ("snapshot", "streaming")
DEBEZIUM_CONNECTOR: Final = "io.debezium.connector.postgresql.PostgresConnector"
JSON_CONVERTER: Final = "org.apache.kafka.connect.json.JsonConverter"
MAX_BATCH_SIZE: Final = "5000"
"""Both sides' `max.batch.size`: the figure the bench's eosconnect CDC query already used."""
ROUNDS: Final = 2
"""Measured rounds per side; the order alternates, so each side goes first once."""
WARMUP_ROWS: Final = 2_000
"""Rows (and then changes) of each side's untimed warm-up run."""
TIMEOUT_S: Final = 900.0
SLOT_GONE_TIMEOUT_S: Final = 60.0
MODES: Final = {
    (EOS, "snapshot"): CDC_EOS_SNAPSHOT,
    (EOS, "streaming"): CDC_EOS_STREAMING,
    (JAVA, "snapshot"): CDC_JAVA_SNAPSHOT,
    (JAVA, "streaming"): CDC_JAVA_STREAMING,
    (DEBEZIUM, "snapshot"): CDC_DEBEZIUM_SNAPSHOT,
    (DEBEZIUM, "streaming"): CDC_DEBEZIUM_STREAMING,
}
"""(side, measure) -> the mode's name in the report."""
TIMINGS: Final = {
    (EOS, "snapshot"): "query start() on a running session (snapshot.mode=initial)",
    (DEBEZIUM, "snapshot"): "PUT /connectors/NAME/config on a running worker "
    "(snapshot.mode=initial)",
    (EOS, "streaming"): "the idle streaming query",
    (JAVA, "snapshot"): "query start() on a running session (snapshot.mode=initial)",
    (JAVA, "streaming"): "the idle streaming query",
    (DEBEZIUM, "streaming"): "the idle streaming connector",
}


# -- pure parts ----------------------------------------------------------------------------


def round_order(index: int) -> tuple[str, ...]:
    """The sides' order in round `index` (from 0): eosconnect first in even rounds, reversed
    in odd ones."""
    return SIDES if index % 2 == 0 else SIDES[::-1]


def prefix_for(side: str, label: str, run_id: str) -> str:
    """A topic prefix that is also a valid slot name (lower case, digits, underscores)."""
    short = {EOS: "eos", JAVA: "java", DEBEZIUM: "dbz"}[side]
    return f"bench_{short}_{label}_{run_id}".lower()


def debezium_config(database: PostgresDatabase, prefix: str) -> dict[str, str]:
    """Debezium's PostgresConnector on `public.bench`: pgoutput, slot and publication named
    after `prefix` (dropped on stop, created filtered), JsonConverter without schemas."""
    return {
        "connector.class": DEBEZIUM_CONNECTOR,
        "tasks.max": "1",
        **database.connector_options(),
        "topic.prefix": prefix,
        "plugin.name": "pgoutput",
        "slot.name": prefix,
        "slot.drop.on.stop": "true",
        "publication.name": f"{prefix}_pub",
        "publication.autocreate.mode": "filtered",
        "table.include.list": "public.bench",
        "snapshot.mode": "initial",
        "max.batch.size": MAX_BATCH_SIZE,
        "key.converter": JSON_CONVERTER,
        "key.converter.schemas.enable": "false",
        "value.converter": JSON_CONVERTER,
        "value.converter.schemas.enable": "false",
    }


def java_options(database: PostgresDatabase, prefix: str, bootstrap: str) -> dict[str, str]:
    """Debezium's Java connector as an eosconnect query: the worker's config (`debezium_config`)
    with the plugin folder, the query's name and Kafka, and the bench's `maxRecordsPerTrigger`."""
    return {
        **debezium_config(database, prefix),
        "name": prefix,
        "plugin.path": str(plugin_path("debezium")),
        "maxRecordsPerTrigger": cdc_options(database, prefix, bootstrap)["maxRecordsPerTrigger"],
        "kafka.bootstrap.servers": bootstrap,
    }


def eos_options(database: PostgresDatabase, prefix: str, bootstrap: str) -> dict[str, str]:
    """The bench's PostgresCdcSource options (`postgres_cdc.cdc_options`), with a snapshot and
    a slot and a filtered publication of its own, named after `prefix`."""
    return {
        **cdc_options(database, prefix, bootstrap),
        "slot.name": prefix,
        "publication.name": f"{prefix}_pub",
        "publication.autocreate.mode": "filtered",
        "table.include.list": "public.bench",
        "snapshot.mode": "initial",
        "max.batch.size": MAX_BATCH_SIZE,
    }


@dataclass(frozen=True)
class Counts:
    """What one side's topic held: snapshot records (`op` r) and the others, with the distinct
    ids among them that were expected (ids below `rows` for the snapshot, from `rows` to
    `2 * rows` for the inserts, `op` c)."""

    snapshot: int
    snapshot_distinct: int
    changes: int
    changes_distinct: int


def count_records(records: Iterable[tuple[bytes | None, bytes | None]], rows: int) -> Counts:
    """Counts of `(key, value)` pairs as JsonConverter without schemas wrote them: the key
    `{"id": n}`, the value Debezium's envelope (`op`, `after`); tombstones and records of any
    other kind count as changes that were not expected."""
    snapshot, changes = 0, 0
    snapshot_ids: set[int] = set()
    change_ids: set[int] = set()
    for key, value in records:
        envelope = json.loads(value) if value is not None else None
        op = envelope.get("op") if isinstance(envelope, dict) else None
        ident = json.loads(key).get("id") if key is not None else None
        if op == "r":
            snapshot += 1
            if isinstance(ident, int) and 0 <= ident < rows:
                snapshot_ids.add(ident)
            continue
        changes += 1
        if op == "c" and isinstance(ident, int) and rows <= ident < 2 * rows:
            change_ids.add(ident)
    return Counts(snapshot, len(snapshot_ids), changes, len(change_ids))


def verifications(side: str, label: str, counts: Counts, rows: int) -> list[Verification]:
    """The snapshot's and the streaming's verification lines of one run of a side."""
    return [
        Verification(
            POSTGRES_CDC,
            f"{MODES[(side, 'snapshot')]}, {label}",
            rows,
            counts.snapshot,
            counts.snapshot_distinct,
        ),
        Verification(
            POSTGRES_CDC,
            f"{MODES[(side, 'streaming')]}, {label}",
            rows,
            counts.changes,
            counts.changes_distinct,
        ),
    ]


@dataclass(frozen=True)
class Timing:
    """One run of one side: seconds to the snapshot's last row, to the last change (from the
    inserts' start) and of the inserts alone."""

    snapshot_s: float
    streaming_s: float
    inserts_s: float


def summarize(side: str, measure: str, timings: Sequence[Timing], rows: int) -> ModeResult:
    """A side's `measure` ("snapshot" or "streaming") row: the median of its rounds, each
    round's seconds in the timing line."""
    seconds = [t.snapshot_s if measure == "snapshot" else t.streaming_s for t in timings]
    rounds = ", ".join(f"{s:.2f}" for s in seconds)
    timing = f"{_timing_start(side, measure)} until its last record is visible "
    timing += f"read_committed; median of {len(seconds)} rounds ({rounds} s)"
    if measure == "streaming":
        inserts = ", ".join(f"{t.inserts_s:.2f}" for t in timings)
        timing += f"; the inserts themselves took {inserts} s"
    return ModeResult(
        POSTGRES_CDC, MODES[(side, measure)], rows, statistics.median(seconds), timing=timing
    )


def _timing_start(side: str, measure: str) -> str:
    if measure == "snapshot":
        return f"from {TIMINGS[(side, measure)]}"
    return f"from the first insert's start (1,000 per transaction) into {TIMINGS[(side, measure)]}"


# -- the connectors ------------------------------------------------------------------------


@dataclass
class Running:
    """A started connector: `alive()` raises when it failed, `stop()` stops it."""

    alive: Callable[[], None]
    stop: Callable[[], None]


def start_eos(spark: Any, options: Mapping[str, str], checkpoint: Path) -> Running:
    """An eosconnect CDC query (PostgresCdcSource, or Debezium from its plugin folder) on the
    running session."""
    query = start_query(spark, dict(options), checkpoint)

    def alive() -> None:
        if not query.isActive:
            raise RuntimeError(f"the eosconnect query stopped: {query.exception()}")

    return Running(alive, query.stop)


def start_debezium(worker: ConnectWorker, name: str, config: Mapping[str, str]) -> Running:
    """Debezium's connector created on the running worker; deleted on stop."""
    worker.put_connector(name, config)

    def stop() -> None:
        with contextlib.suppress(OSError, ValueError, ConnectRestError):
            worker.request("DELETE", f"/connectors/{name}")

    return Running(lambda: worker.raise_if_failed(name), stop)


def drop_slot(database: PostgresDatabase, slot: str) -> None:
    """Wait until nothing reads `slot` (Debezium drops its own on stop), then drop it if it is
    still there: an idle slot of a finished run holds no process but keeps WAL."""

    def idle() -> bool:
        with database.connect() as connection:
            row = connection.execute(
                "SELECT active FROM pg_replication_slots WHERE slot_name = %s", (slot,)
            ).fetchone()
        return row is None or not row[0]

    wait_for(idle, SLOT_GONE_TIMEOUT_S, f"slot {slot} to be released")
    with database.connect() as connection:
        connection.execute(
            "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots "
            "WHERE slot_name = %s AND NOT active",
            (slot,),
        )


# -- one run of one side -------------------------------------------------------------------


def fresh_table(cluster: PostgresCluster, rows: int, size: int) -> PostgresDatabase:
    """A new database holding `bench(id bigint primary key, payload text)` with `rows` rows."""
    database = cluster.create_database("cdc")
    database.execute(
        "CREATE TABLE bench (id bigint PRIMARY KEY, payload text)",
        "INSERT INTO bench SELECT g, repeat('x', "
        f"{int(size)}) FROM generate_series(0, {int(rows) - 1}) g",
        "VACUUM ANALYZE bench",
    )
    return database


def wait_read(watch: VisibilityWatch, count: int, alive: Callable[[], None]) -> None:
    """Until the watch's counting consumer has read `count` records (what is there already)."""
    deadline = time.monotonic() + TIMEOUT_S
    while watch.reader.count < count:
        if watch.error is not None:
            raise RuntimeError(f"counting failed: {watch.error!r}") from watch.error
        if time.monotonic() > deadline:
            raise TimeoutError(f"{watch.reader.count:,} of {count:,} records read")
        alive()
        time.sleep(0.05)


def timed_run(
    kafka: Mapping[str, Any],
    topic: str,
    database: PostgresDatabase,
    start: Callable[[], Running],
    rows: int,
    size: int,
) -> Timing:
    """Start the connector, time its snapshot, then the inserts' changes; stopped after."""
    running: Running | None = None
    try:
        with VisibilityWatch(kafka, topic, 1, rows) as watch:
            started = time.monotonic()
            running = start()
            snapshot_s = watch.wait(TIMEOUT_S, running.alive) - started
        with VisibilityWatch(kafka, topic, 1, 2 * rows) as changes:
            wait_read(changes, rows, running.alive)
            first = time.monotonic()
            insert_changes(database, rows, rows, size)
            inserts_s = time.monotonic() - first
            streaming_s = changes.wait(TIMEOUT_S, running.alive) - first
    finally:
        if running is not None:
            running.stop()
    return Timing(snapshot_s, streaming_s, inserts_s)


@dataclass
class SideBySide:
    """What the runs share: the session, the worker, the cluster, the sizes; and what the
    measured rounds found."""

    spark: Any
    worker: ConnectWorker
    cluster: PostgresCluster
    kafka: Mapping[str, Any]
    folder: Path
    rows: int
    size: int
    log: Callable[[str], None]
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:8])
    timings: dict[str, list[Timing]] = field(default_factory=lambda: {s: [] for s in SIDES})
    checks: list[Verification] = field(default_factory=list)

    def starter(self, side: str, database: PostgresDatabase, prefix: str) -> Callable[[], Running]:
        """How `side` starts on `database` under `prefix`."""
        if side in (EOS, JAVA):
            options_of = eos_options if side == EOS else java_options
            options = options_of(database, prefix, self.kafka["bootstrap.servers"])
            checkpoint = self.folder / prefix / "checkpoint"
            return lambda: start_eos(self.spark, options, checkpoint)
        config = debezium_config(database, prefix)
        return lambda: start_debezium(self.worker, prefix, config)

    def run(self, side: str, label: str, rows: int) -> tuple[Timing, Counts]:
        """One run of `side` on a fresh table of `rows` rows; its slot dropped after."""
        database = fresh_table(self.cluster, rows, self.size)
        prefix = prefix_for(side, label, self.run_id)
        topic = f"{prefix}.public.bench"
        ensure_topic(admin_client(dict(self.kafka)), topic, partitions=1)
        try:
            timing = timed_run(
                self.kafka, topic, database, self.starter(side, database, prefix), rows, self.size
            )
        finally:
            drop_slot(database, prefix)
        records = read_to_end(dict(self.kafka), [topic], "read_committed", 300.0)
        counts = count_records(((r.key, r.value) for r in records), rows)
        self.log(
            f"  {side} {label}: snapshot {timing.snapshot_s:.2f}s, streaming "
            f"{timing.streaming_s:.2f}s (inserts {timing.inserts_s:.2f}s), {counts}"
        )
        return timing, counts

    def warm_up(self) -> None:
        """An untimed run of each side; it must deliver what it was given."""
        for side in SIDES:
            _, counts = self.run(side, "warmup", WARMUP_ROWS)
            failing = [v for v in verifications(side, "warm-up", counts, WARMUP_ROWS) if not v.ok]
            if failing:
                raise RuntimeError("; ".join(v.describe() for v in failing))

    def measure(self, rounds: int) -> None:
        """`rounds` rounds, each side once per round, the order alternating."""
        for index in range(rounds):
            for side in round_order(index):
                timing, counts = self.run(side, f"r{index + 1}", self.rows)
                self.timings[side].append(timing)
                self.checks.extend(verifications(side, f"round {index + 1}", counts, self.rows))

    def results(self) -> list[ModeResult]:
        """The snapshot rows, then the streaming rows, eosconnect's first."""
        return [
            summarize(side, measure, self.timings[side], self.rows)
            for measure in MEASURES
            for side in SIDES
        ]


@contextlib.contextmanager
def debezium_worker(
    kafka: Mapping[str, Any], folder: Path, log: Callable[[str], None]
) -> Iterator[ConnectWorker]:
    """The bench's Connect worker with Debezium's plugin folder on its `plugin.path`."""
    extra = {"plugin.path": str(plugin_path("debezium"))}
    name = f"bench-cdc-{uuid.uuid4().hex[:8]}"
    with connect_peer.running_worker(kafka, name, folder, extra) as (worker, startup_s):
        log(f"Kafka Connect worker {worker.url} up in {startup_s:.1f}s (log {worker.log_path})")
        yield worker


def run_side_by_side(
    spark: Any,
    records: int,
    size: int,
    kafka: Mapping[str, Any],
    folder: Path,
    log: Callable[[str], None],
    rounds: int = ROUNDS,
    warm_up: bool = True,
) -> tuple[list[ModeResult], list[Verification]]:
    """Every side's snapshot and streaming rows, and each measured run's verifications
    (`folder` holds the worker's files and the queries' checkpoints); `warm_up=False` leaves
    out the untimed run of each side first (for a test of the counting, not of speed)."""
    rows = min(records, MAX_CHANGES)
    with (
        PostgresCluster() as cluster,
        debezium_worker(kafka, folder / "connect", log) as worker,
    ):
        runs = SideBySide(spark, worker, cluster, kafka, folder, rows, size, log)
        if warm_up:
            runs.warm_up()
        runs.measure(rounds)
    return runs.results(), runs.checks
