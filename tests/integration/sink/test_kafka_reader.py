"""`readStream.format("eosconnect").option("topics", ...)`: the rows Spark sees (chispa),
admission control, new partitions, and the same records when a batch is replayed."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from chispa import assert_df_equality

from spark_eos_connect.sink.kafka_input import KAFKA_ROW_DDL

pytestmark = pytest.mark.integration

TIMESTAMP_MS = int(time.time() * 1000) - 60_000  # recent: older records fall to retention


def read_rows(
    spark: Any,
    options: dict[str, str],
    checkpoint: Path,
    run_available_now: Callable[..., Any],
) -> tuple[Any, Any]:
    """Run the reader until it has read what is there; (its rows as a DataFrame, the query)."""
    rows: list[Any] = []
    stream = spark.readStream.format("eosconnect").options(**options).load()
    writer = stream.writeStream.foreachBatch(lambda df, _: rows.extend(df.collect()))
    query = run_available_now(writer, checkpoint)
    assert query.exception() is None
    return spark.createDataFrame(rows, KAFKA_ROW_DDL), query


def test_rows_carry_each_committed_record(
    spark: Any,
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    produce: Callable[..., None],
    run_available_now: Callable[..., Any],
    tmp_path: Path,
) -> None:
    topic = topic_factory("rows", partitions=2)
    produce(topic, [(0, b"k0", b"v0"), (1, b"k1", b"v1")], headers=[("h", b"1")],
            timestamp=TIMESTAMP_MS)  # fmt: skip
    produce(topic, [(0, b"gone", b"aborted")], abort=True)
    produce(topic, [(0, None, b"v2"), (1, b"k3", None)], timestamp=TIMESTAMP_MS)
    options = {"topics": topic, "kafka.bootstrap.servers": bootstrap_servers}

    rows, _ = read_rows(spark, options, tmp_path / "ck", run_available_now)

    when = dt.datetime.fromtimestamp(TIMESTAMP_MS / 1000, tz=dt.UTC).replace(tzinfo=None)
    header = [("h", b"1")]
    expected = spark.createDataFrame(
        [
            (topic, 0, 0, when, b"k0", b"v0", header),
            (topic, 1, 0, when, b"k1", b"v1", header),
            (topic, 0, 4, when, None, b"v2", None),
            (topic, 1, 2, when, b"k3", None, None),
        ],
        KAFKA_ROW_DDL,
    )
    assert_df_equality(rows, expected, ignore_row_order=True, ignore_nullable=True)


def test_max_records_per_trigger_splits_batches_and_new_partitions_are_read(
    spark: Any,
    bootstrap_servers: str,
    kafka_config: dict[str, Any],
    topic_factory: Callable[..., str],
    produce: Callable[..., None],
    run_available_now: Callable[..., Any],
    tmp_path: Path,
) -> None:
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewPartitions

    topic = topic_factory("admission", partitions=2)
    produce(topic, [(i % 2, None, str(i).encode()) for i in range(40)])
    options = {
        "topics": topic,
        "maxRecordsPerTrigger": "15",
        "kafka.bootstrap.servers": bootstrap_servers,
    }

    rows, query = read_rows(spark, options, tmp_path / "ck", run_available_now)

    sizes = [p["numInputRows"] for p in query.recentProgress if p["numInputRows"]]
    assert max(sizes) <= 15 and len(sizes) >= 3
    assert sorted(int(r.value) for r in rows.collect()) == list(range(40))

    admin = AdminClient(kafka_config)
    admin.create_partitions([NewPartitions(topic, 3)])[topic].result()
    producer = Producer(kafka_config)
    while len(producer.list_topics(topic, timeout=10).topics[topic].partitions) < 3:
        time.sleep(0.1)
    producer.produce(topic, b"new", partition=2)
    assert producer.flush(30) == 0
    again, _ = read_rows(spark, options, tmp_path / "ck", run_available_now)

    new_rows = again.where("partition = 2").collect()
    assert [(r.offset, r.value) for r in new_rows] == [(0, b"new")]
