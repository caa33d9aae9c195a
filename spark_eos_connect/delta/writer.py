"""The Delta Lake sink, run per micro-batch on the driver through `foreachBatch`: it "writes each
micro-batch idempotently (`txnAppId`/`txnVersion`) and keeps its offsets with the data" (the
project's design).

    query = (
        spark.readStream.format("eosconnect").options(**options).load()
        .writeStream.foreachBatch(delta_sink(options))
        .option("checkpointLocation", checkpoint).start()
    )

Why the offsets live in the table as columns (`_kafka_topic`, `_kafka_partition`,
`_kafka_offset`): they are part of the same Delta commit as the data by construction, they are
in the table's snapshot (so log clean-up, checkpoints, VACUUM or other writers' commits never
lose them, unlike commit `userMetadata`, which only the history keeps), and the stored offset
of a partition is simply `max(_kafka_offset)`. Each batch: drop rows at or below the stored
offsets, handle failed records (`errors.tolerance`, DLQ), then one Delta commit with
`txnAppId` = connector name and `txnVersion` = batch id. If Spark's checkpoint was lost, batch
ids start again below the table's `txnVersion`, and Delta would silently skip new data: such a
batch uses the table's `txnVersion` + 1 instead. Commits carry `userMetadata` JSON naming the
connector, batch and `txnVersion`. When a record of the batch may leave no row (a value failing
`value.schema` sent to the DLQ, an upsert's tombstone), a pass over the batch before the write
finds those and the metadata also holds the connector's offsets after the batch: while the
history still holds that commit, it adds the offsets the rows do not. Otherwise every record
becomes a row and the batch is written in one pass.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from spark_eos_connect.delta.config import DeltaSinkConfig, parse_delta_config
from spark_eos_connect.errors import ConfigError
from spark_eos_connect.runtime.commit_hooks import installed as installed_hooks
from spark_eos_connect.runtime.config.option_keys import lowered
from spark_eos_connect.runtime.config.options import DataSourceOptions
from spark_eos_connect.runtime.errors_dlq import (
    ErrorPolicy,
    ErrorReporter,
    FailedRecord,
    Stage,
)
from spark_eos_connect.sink.kafka_input import (
    EARLIEST,
    TP,
    KafkaMetadata,
    offsets_from_json,
    offsets_to_json,
    parse_reader_options,
)

log = logging.getLogger(__name__)

TOPIC, PARTITION, OFFSET = "_kafka_topic", "_kafka_partition", "_kafka_offset"
TIMESTAMP, KEY = "_kafka_timestamp", "_kafka_key"
METADATA_COLUMNS = (TOPIC, PARTITION, OFFSET, TIMESTAMP, KEY)
_TOMBSTONE, _ERROR, _PARSED, _CORRUPT = (
    "_eosconnect_tombstone",
    "_eosconnect_error",
    "_eosconnect_parsed",
    "_eosconnect_corrupt",
)
NULL_KEY = "delta.mode=upsert needs a record key"
_TXN_APP_ID = "spark.databricks.delta.write.txnAppId"
_TXN_VERSION = "spark.databricks.delta.write.txnVersion"
_USER_METADATA = "spark.databricks.delta.commitInfo.userMetadata"


def lower_keys(options: Mapping[str, Any]) -> dict[str, str]:
    """Options as Spark passes them to data sources: lower-case names, string values."""
    return {k: str(v) for k, v in lowered(options).items()}


# --- the table's state (driver) -----------------------------------------------------------------


def table_location(spark: Any, config: DeltaSinkConfig) -> str | None:
    """The table's storage location; None when a catalog table does not exist yet."""
    if config.path:
        return config.path
    if not spark.catalog.tableExists(config.table):
        return None
    return str(spark.sql(f"DESCRIBE DETAIL {config.table}").first()["location"])


def _delta_log(spark: Any, location: str | None) -> Any:
    if location is None:
        return None
    delta_log = spark._jvm.org.apache.spark.sql.delta.DeltaLog.forTable(
        spark._jsparkSession, location
    )
    return delta_log if delta_log.tableExists() else None


def _snapshot(delta_log: Any) -> Any:
    return delta_log.update(
        getattr(delta_log, "update$default$1")(),
        getattr(delta_log, "update$default$2")(),
        getattr(delta_log, "update$default$3")(),
    )


def table_version(spark: Any, location: str | None) -> int | None:
    """The table's latest version; None when there is no table."""
    delta_log = _delta_log(spark, location)
    return None if delta_log is None else int(_snapshot(delta_log).version())


def committed_txn_version(spark: Any, location: str | None, app_id: str) -> int | None:
    """The last `txnVersion` committed for `app_id` (None if none).

    Delta keeps it in the snapshot, but no public API exposes it, so this asks the JVM's
    DeltaLog; reading it reconstructs the snapshot's state (a Spark job), so callers cache it.
    """
    delta_log = _delta_log(spark, location)
    if delta_log is None:
        return None
    txn = _snapshot(delta_log).transactions().get(app_id)
    return int(txn.get()) if txn.isDefined() else None


def _read_table(spark: Any, config: DeltaSinkConfig) -> Any:
    reader = spark.read.format("delta")
    return reader.load(config.path) if config.path else reader.table(config.table)


def _has_table(spark: Any, config: DeltaSinkConfig) -> bool:
    if config.path:
        return _is_delta_table(spark, config.path)
    return table_location(spark, config) is not None


def column_offsets(spark: Any, config: DeltaSinkConfig) -> dict[TP, int]:
    """The highest `_kafka_offset` per partition among the table's rows."""
    from pyspark.errors import AnalysisException
    from pyspark.sql import functions as F

    try:
        rows = (
            _read_table(spark, config)
            .groupBy(TOPIC, PARTITION)
            .agg(F.max(OFFSET).alias("offset"))
            .collect()
        )
    except AnalysisException as error:
        raise ConfigError(
            f"{config.location} is not a DeltaSink table: it needs the columns "
            f"{', '.join(METADATA_COLUMNS)} ({error})"
        ) from None
    return {
        (r[TOPIC], int(r[PARTITION])): int(r["offset"]) for r in rows if r["offset"] is not None
    }


def commit_offsets(spark: Any, config: DeltaSinkConfig, history: int = 50) -> dict[TP, int]:
    """The highest offset per partition recorded in the `userMetadata` of the connector's last
    commit among the latest `history` commits (`{}` when history no longer has one)."""
    from delta.tables import DeltaTable

    table = (
        DeltaTable.forPath(spark, config.path)
        if config.path
        else DeltaTable.forName(spark, str(config.table))
    )
    for row in table.history(history).select("userMetadata").collect():
        try:
            recorded = json.loads(row["userMetadata"] or "")["eosconnect"]
            if recorded["connector"] != config.name:
                continue
            offsets = offsets_from_json(recorded["offsets"])
        except (ValueError, TypeError, KeyError):
            continue
        return {tp: offset - 1 for tp, offset in offsets.items()}
    return {}


def last_recorded_batch(spark: Any, config: DeltaSinkConfig, history: int = 50) -> int | None:
    """The Spark batch id the connector's last commit recorded in its `userMetadata`, among the
    latest `history` commits (None when history no longer has one)."""
    from delta.tables import DeltaTable

    table = (
        DeltaTable.forPath(spark, config.path)
        if config.path
        else DeltaTable.forName(spark, str(config.table))
    )
    for row in table.history(history).select("userMetadata").collect():
        try:
            recorded = json.loads(row["userMetadata"] or "")["eosconnect"]
            if recorded["connector"] == config.name:
                return int(recorded["batch"])
        except (ValueError, TypeError, KeyError):
            continue
    return None


def stored_offsets(spark: Any, config: DeltaSinkConfig) -> dict[TP, int]:
    """The highest offset per partition the table has dealt with (`{}` without a table).

    The rows' `_kafka_offset` columns are the source of truth; the last commit's metadata adds
    records that left no row (failed records sent to the DLQ, upsert tombstones).
    """
    if not _has_table(spark, config):
        return {}
    return merge_max(column_offsets(spark, config), commit_offsets(spark, config))


def merge_max(*offsets: Mapping[TP, int]) -> dict[TP, int]:
    """The highest offset per partition over several maps."""
    merged: dict[TP, int] = {}
    for mapping in offsets:
        for tp, offset in mapping.items():
            merged[tp] = max(offset, merged.get(tp, offset))
    return merged


def _is_delta_table(spark: Any, path: str) -> bool:
    from delta.tables import DeltaTable

    return bool(DeltaTable.isDeltaTable(spark, path))


def _session(spark: Any) -> Any:
    if spark is not None:
        return spark
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    from spark_eos_connect.spark.session import local_spark_session

    return local_spark_session(app_name="eosconnect-delta-offsets")


def table_offsets(config: DeltaSinkConfig, spark: Any = None) -> dict[TP, int]:
    """Driver: the next offset to read per partition, according to the table."""
    return {tp: offset + 1 for tp, offset in stored_offsets(_session(spark), config).items()}


def resume_offsets(stored: Mapping[TP, int], partitions: Iterable[TP]) -> dict[TP, int]:
    """Where each subscribed partition resumes: after the table's offset, or at the earliest
    offset (-2) where the table has none. Only `partitions` appear, every one of them: Spark's
    Kafka source refuses explicit offsets that leave out a partition it is assigned or name
    one it is not. Empty when the table holds none of `partitions`."""
    wanted = sorted(set(partitions))
    if not any(tp in stored for tp in wanted):
        return {}
    return {tp: stored.get(tp, EARLIEST) for tp in wanted}


def starting_offsets(options: Mapping[str, Any], spark: Any = None) -> str | None:
    """Driver: `startingOffsets` JSON that resumes after the table's offsets, for when the
    consumer group and Spark's checkpoint are gone (None: the table has no offsets of the
    subscribed topics). It names every partition of the subscribed topics that exists now;
    those the table does not know start at the earliest offset (see `resume_offsets`)."""
    stored = table_offsets(
        parse_delta_config(DataSourceOptions.read(lower_keys(options)).rest), spark
    )
    if not stored:
        return None
    reader = parse_reader_options(options)
    metadata = KafkaMetadata(reader.providers.resolve(reader.kafka, prefix="kafka."))
    offsets = resume_offsets(stored, metadata.partitions(reader))
    return json.dumps(offsets_to_json(offsets)) if offsets else None


# --- rows (driver-built plans) ------------------------------------------------------------------


def only_new(df: Any, stored: Mapping[TP, int]) -> Any:
    """Rows whose offset is above what the table holds for their partition."""
    if not stored:
        return df
    from pyspark.sql import functions as F

    known = df.sparkSession.createDataFrame(
        [(t, p, o) for (t, p), o in sorted(stored.items())],
        "_s_topic string, _s_partition int, _s_offset long",
    )
    on = (df["topic"] == known["_s_topic"]) & (df["partition"] == known["_s_partition"])
    joined = df.join(F.broadcast(known), on, "left")
    return joined.where(F.col("_s_offset").isNull() | (F.col("offset") > F.col("_s_offset"))).drop(
        "_s_topic", "_s_partition", "_s_offset"
    )


def value_fields(value_schema: str) -> list[str]:
    """Column names declared by `value.schema` (checked against the reserved names)."""
    from pyspark.sql.types import DataType, StructType

    try:
        parsed = DataType.fromDDL(value_schema)
    except Exception as error:
        raise ConfigError(f"Invalid value.schema {value_schema!r}: {error}") from None
    if not isinstance(parsed, StructType):
        raise ConfigError("value.schema must list fields, e.g. 'id INT, name STRING'")
    names = parsed.fieldNames()
    reserved = [n for n in names if n.startswith(("_kafka_", "_eosconnect_"))]
    if reserved:
        raise ConfigError(f"value.schema fields may not start with _kafka_: {reserved}")
    return names


def check_rows(rows: Any, config: DeltaSinkConfig, options: Mapping[str, Any] | None = None) -> Any:
    """Add the parsed value (JSON mode, or decoded by `value.converter` with its `options`) and
    an error column (null for good rows)."""
    from pyspark.sql import functions as F

    error = F.lit(None).cast("string")
    if config.value_converter:
        from spark_eos_connect.delta.connect_rows import decoded_rows

        rows = decoded_rows(rows, options or {}, _PARSED, _ERROR)
        error = F.col(_ERROR)
    elif config.value_schema:
        schema = f"{config.value_schema}, {_CORRUPT} STRING"
        parsed = F.from_json(
            F.col("value").cast("string"),
            schema,
            {"mode": "PERMISSIVE", "columnNameOfCorruptRecord": _CORRUPT},
        )
        rows = rows.withColumn(_PARSED, parsed)
        bad = F.col("value").isNotNull() & (
            F.col(_PARSED).isNull() | F.col(f"{_PARSED}.{_CORRUPT}").isNotNull()
        )
        message = f"value is not JSON matching value.schema ({config.value_schema})"
        error = F.when(bad, F.lit(message))
    if config.mode == "upsert":
        error = F.coalesce(error, F.when(F.col("key").isNull(), F.lit(NULL_KEY)))
    return rows.withColumn(_ERROR, error)


def table_rows(checked: Any, config: DeltaSinkConfig) -> Any:
    """Good rows in the table's shape: data columns, then the `_kafka_*` columns."""
    from pyspark.sql import functions as F

    if config.value_schema or config.value_converter:
        names = (
            value_fields(config.value_schema)
            if config.value_schema
            else checked.schema[_PARSED].dataType.fieldNames()
        )
        data = [F.col(f"{_PARSED}.`{name}`").alias(name) for name in names]
    else:
        data = [F.col("value"), F.col("headers")]
    meta = [
        F.col("topic").alias(TOPIC),
        F.col("partition").alias(PARTITION),
        F.col("offset").alias(OFFSET),
        F.col("timestamp").alias(TIMESTAMP),
        F.col("key").alias(KEY),
    ]
    tombstone = F.col("value").isNull().alias(_TOMBSTONE)
    return checked.where(F.col(_ERROR).isNull()).select(*data, *meta, tombstone)


def _put_hook(df: Any, batch_id: int) -> Any:
    """With commit hooks armed at `put` (the crash tests): a stage that reaches the point inside
    the write job, after rows reached the writer; otherwise `df` as it is."""
    hooks = installed_hooks()
    if not hooks.armed("put"):
        return df

    def pass_through(batches: Iterator[Any]) -> Iterator[Any]:
        yield from batches
        hooks.reached("put", batch_id)

    return df.mapInArrow(pass_through, df.schema)


# --- the writer (driver) ------------------------------------------------------------------------


@dataclass(frozen=True)
class _TableState:
    version: int | None
    txn: int | None
    stored: dict[TP, int]


class DeltaTableWriter:
    """Driver: writes micro-batches into one Delta table, exactly once (see module doc)."""

    def __init__(self, props: Mapping[str, Any]) -> None:
        read = DataSourceOptions.read(lower_keys(props))
        rest, self.kafka = read.rest, read.kafka
        self.config = parse_delta_config(rest)
        self.options = rest
        if self.config.value_converter:
            from spark_eos_connect.delta.connect_rows import registry_converter

            registry_converter(rest)  # refuses a converter without registry schemas, up front
        self.errors = ErrorPolicy.from_options(self.config.name, rest)
        if self.config.value_schema:
            value_fields(self.config.value_schema)
        self._state: _TableState | None = None
        self._after_restart = False
        """Whether a batch of this writer re-ran one committed before a restart: later batches
        then continue at txnVersion batch + 1, which needs no word."""
        self.last_summary = ""
        self.failed = 0

    def _table_state(self, spark: Any) -> _TableState:
        """The table's state, from the last commit of this writer while nobody else wrote."""
        location = table_location(spark, self.config)
        version = table_version(spark, location)
        if self._state is None or self._state.version != version:
            self._state = _TableState(
                version,
                committed_txn_version(spark, location, self.config.name),
                stored_offsets(spark, self.config),
            )
        return self._state

    def _report_failures(self, checked: Any) -> None:
        from pyspark.sql import functions as F

        bad = (
            checked.where(F.col(_ERROR).isNotNull())
            .select("topic", "partition", "offset", "key", "value", "headers", "timestamp", _ERROR)
            .orderBy("topic", "partition", "offset")
            .collect()
        )
        reporter = ErrorReporter(self.errors, self.kafka)
        for row in bad:
            stage = Stage.KEY_CONVERTER if row[_ERROR] == NULL_KEY else Stage.VALUE_CONVERTER
            timestamp = row["timestamp"]
            reporter.report(
                FailedRecord(
                    row["topic"],
                    int(row["partition"]),
                    int(row["offset"]),
                    row["key"],
                    row["value"],
                    tuple((h["key"], h["value"]) for h in row["headers"] or ()),
                    None if timestamp is None else int(timestamp.timestamp() * 1000),
                    stage,
                    f"{__name__}.DeltaTableWriter",
                    ValueError(row[_ERROR]),
                )
            )
        reporter.close()
        self.failed = len(bad)

    def _commit(self, spark: Any, rows: Any, txn_version: int, metadata: str) -> None:
        config = self.config
        if config.mode == "append":
            writer = (
                rows.drop(_TOMBSTONE)
                .write.format("delta")
                .mode("append")
                .option("txnAppId", config.name)
                .option("txnVersion", txn_version)
                .option("userMetadata", metadata)
                .option("mergeSchema", str(bool(config.value_converter)).lower())
            )
            writer.save(config.path) if config.path else writer.saveAsTable(config.table)
            return
        self._merge(spark, rows, txn_version, metadata)

    def _merge(self, spark: Any, rows: Any, txn_version: int, metadata: str) -> None:
        from delta.tables import DeltaTable
        from pyspark.sql import Window
        from pyspark.sql import functions as F

        config = self.config
        if not _has_table(spark, config):
            empty = rows.drop(_TOMBSTONE).limit(0).write.format("delta").mode("append")
            empty.save(config.path) if config.path else empty.saveAsTable(config.table)
        latest = Window.partitionBy(TOPIC, KEY).orderBy(F.col(OFFSET).desc(), F.col(PARTITION))
        source = rows.withColumn("_rank", F.row_number().over(latest)).where("_rank = 1")
        columns = [c for c in rows.columns if c != _TOMBSTONE]
        values: dict[str, Any] = {c: f"s.`{c}`" for c in columns}
        table = (
            DeltaTable.forPath(spark, config.path)
            if config.path
            else DeltaTable.forName(spark, str(config.table))
        )
        settings = {
            _TXN_APP_ID: config.name,
            _TXN_VERSION: str(txn_version),
            _USER_METADATA: metadata,
        }
        for key, value in settings.items():
            spark.conf.set(key, value)
        try:
            (
                table.alias("t")
                .merge(
                    source.alias("s"),
                    f"t.{TOPIC} = s.{TOPIC} AND t.{KEY} = s.{KEY}",
                )
                .whenMatchedDelete(condition=f"s.{_TOMBSTONE}")
                .whenMatchedUpdate(set=values)
                .whenNotMatchedInsert(condition=f"NOT s.{_TOMBSTONE}", values=values)
                .execute()
            )
        finally:
            for key in settings:
                spark.conf.unset(key)

    def _txn_version(self, spark: Any, batch_id: int, committed: int | None) -> int:
        """The `txnVersion` for `batch_id`: the batch id, or the next after `committed` when the
        table is ahead of Spark's batch ids (the rows at or below the table's offsets are
        dropped either way, so nothing lands twice).

        The table is ahead after a restart that re-runs the batch a crash interrupted between
        its Delta commit and Spark's (the batch the last commit recorded): normal, said at
        info level, and every later batch of the run follows one version ahead. A batch id
        below the recorded one means Spark's batch ids started again (a replaced checkpoint):
        that is warned about.
        """
        if committed is None or batch_id > committed:
            return batch_id
        if not self._after_restart:
            recorded = last_recorded_batch(spark, self.config)
            if recorded is not None and batch_id >= recorded:
                self._after_restart = True
                log.info(
                    "batch %d: %s holds batch %d as txnVersion %d, committed before this run; "
                    "resuming after the table's offsets as txnVersion %d",
                    batch_id,
                    self.config.location,
                    recorded,
                    committed,
                    committed + 1,
                )
            else:
                log.warning(
                    "batch %d is below batch %s, the last one %s committed to %s (Spark "
                    "checkpoint replaced?): committing it as txnVersion %d",
                    batch_id,
                    recorded,
                    self.config.name,
                    self.config.location,
                    committed + 1,
                )
        return committed + 1

    def _metadata(self, batch_id: int, txn_version: int, stored: Mapping[TP, int] | None) -> str:
        """Commit `userMetadata`: the connector's offsets after this batch (next to read), when
        they were computed (`None`: every record of the batch left a row, which holds them)."""
        recorded: dict[str, Any] = {
            "connector": self.config.name,
            "batch": batch_id,
            "txnVersion": txn_version,
        }
        if stored is not None:
            offsets = {tp: offset + 1 for tp, offset in stored.items()}
            recorded["offsets"] = offsets_to_json(offsets)
        return json.dumps({"eosconnect": recorded}, separators=(",", ":"))

    def _records_may_leave_no_row(self) -> bool:
        """Whether a record of a batch can end in no row: a value failing `value.schema`, an
        upsert's tombstone or missing key. Only then must the commit carry offsets that the
        rows do not, and failed records be reported before it, which takes a pass over the
        batch before the write."""
        config = self.config
        return bool(config.value_schema or config.value_converter) or config.mode == "upsert"

    def write(self, df: Any, batch_id: int) -> dict[TP, int]:
        """Write one micro-batch of Kafka rows; the next offset per partition it covered, when
        computed (`{}` otherwise: the Delta task commits no group offsets either way)."""
        from pyspark.sql import functions as F

        spark = df.sparkSession
        self.failed = 0
        state = self._table_state(spark)
        stored = dict(state.stored)
        # Not cached: a micro-batch reads the same records every time (fixed offset ranges,
        # read_committed), and reading them twice (statistics, then the write) measured
        # faster than building Spark's cache of every row and writing from it.
        rows = only_new(df, stored)
        checked = check_rows(rows, self.config, self.options)
        if not self._records_may_leave_no_row():
            return self._write_every_row(spark, checked, batch_id, state)
        stats = (
            checked.groupBy("topic", "partition")
            .agg(
                F.max("offset").alias("last"),
                F.count(F.when(F.col(_ERROR).isNull(), 1)).alias("good"),
                F.count(F.col(_ERROR)).alias("bad"),
            )
            .collect()
        )
        if not stats:
            self.last_summary = f"batch {batch_id}: no new records for {self.config.location}"
            return {}
        covered = {(r["topic"], int(r["partition"])): int(r["last"]) for r in stats}
        written = sum(int(r["good"]) for r in stats)
        if any(r["bad"] for r in stats):
            self._report_failures(checked)
        good = table_rows(checked, self.config)
        txn_version = self._txn_version(spark, batch_id, state.txn)
        stored = merge_max(stored, covered)
        metadata = self._metadata(batch_id, txn_version, stored)
        self._commit(spark, _put_hook(good, batch_id), txn_version, metadata)
        location = table_location(spark, self.config)
        self._state = _TableState(table_version(spark, location), txn_version, stored)
        self.last_summary = (
            f"batch {batch_id}: {written} rows written to {self.config.location} "
            f"(txnVersion {txn_version}, table version {self._state.version}), {self.failed} "
            "failed records tolerated, offsets kept in the table"
        )
        return {tp: offset + 1 for tp, offset in covered.items()}

    def _write_every_row(
        self, spark: Any, checked: Any, batch_id: int, state: _TableState
    ) -> dict[TP, int]:
        """Write a batch whose every record becomes a row, in one pass: the rows carry the
        offsets, and the rows written are counted as they are written. The writer's own idea
        of the table's offsets stays what it read (a lower bound, all `only_new` needs while
        nobody else writes the table; another writer's commit makes it read them again)."""
        from pyspark.sql import Observation
        from pyspark.sql import functions as F

        counted = Observation(f"eosconnect-delta-{self.config.name}-{batch_id}")
        good = table_rows(checked, self.config).observe(counted, F.count(F.lit(1)).alias("rows"))
        txn_version = self._txn_version(spark, batch_id, state.txn)
        metadata = self._metadata(batch_id, txn_version, None)
        self._commit(spark, _put_hook(good, batch_id), txn_version, metadata)
        written = int(counted.get["rows"])
        location = table_location(spark, self.config)
        self._state = _TableState(table_version(spark, location), txn_version, state.stored)
        self.last_summary = (
            f"batch {batch_id}: {written} rows written to {self.config.location} "
            f"(txnVersion {txn_version}, table version {self._state.version}), offsets kept in "
            "the table"
        )
        return {}


# --- foreachBatch entry point (driver) ----------------------------------------------------------
