"""FileStreamSource through format("eosconnect"): the reader's rows, and offsets in the offsets
topic with Kafka Connect's exact key/value bytes (so a Connect worker could take them over)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from chispa import assert_df_equality

from spark_eos_connect.source.records import COMMITTED_ROW_DDL

pytestmark = pytest.mark.integration


def file_source_options(name: str, path: Path, topic: str, bootstrap: str) -> dict[str, str]:
    return {
        "name": name,
        "connector.class": "FileStreamSource",
        "file": str(path),
        "topic": topic,
        "kafka.bootstrap.servers": bootstrap,
    }


def run_one_batch(spark: Any, options: dict[str, str], checkpoint: Path) -> None:
    stream = spark.readStream.format("eosconnect").options(**options).load()
    kafka = {k: v for k, v in options.items() if k.startswith("kafka.")}
    query = (
        stream.writeStream.format("eosconnect")
        .options(name=options["name"], **kafka)
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(180)
    assert query.exception() is None


def test_stream_rows_are_the_committed_records(
    spark: Any,
    tmp_path: Path,
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    read_committed: Callable[..., list[Any]],
    unique_name: Callable[[str], str],
) -> None:
    """Whatever sink the stream goes to, its rows are the records the tasks committed to Kafka,
    one row each, with where Kafka stored them; a second trigger emits nothing again."""
    source = tmp_path / "in.txt"
    source.write_text("alpha\nbeta\n")
    topic = topic_factory("rows")
    name = unique_name("rows")
    table = name.replace("-", "_")
    options = file_source_options(name, source, topic, bootstrap_servers)
    tables = []
    for run in range(2):  # the second run, with a new checkpoint, finds nothing new in the file
        tables.append(f"{table}_{run}")
        stream = spark.readStream.format("eosconnect").options(**options).load()
        query = (
            stream.writeStream.format("memory")
            .queryName(tables[-1])
            .option("checkpointLocation", str(tmp_path / f"ck{run}"))
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination(180)
        assert query.exception() is None

    in_kafka = read_committed(topic)
    assert [r.value for r in in_kafka] == [b"alpha", b"beta"]
    rows = spark.table(tables[0])
    expected = spark.createDataFrame(
        [(topic, r.partition, r.offset) for r in in_kafka], COMMITTED_ROW_DDL
    )
    assert spark.table(tables[1]).count() == 0
    assert_df_equality(rows, expected, ignore_row_order=True, ignore_nullable=True)


def test_file_source_offsets_have_connects_exact_bytes(
    spark: Any,
    tmp_path: Path,
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    read_committed: Callable[..., list[Any]],
    unique_name: Callable[[str], str],
) -> None:
    source = tmp_path / "in.txt"
    source.write_text("one\ntwo\nthree\n")
    topic = topic_factory("file")
    name = unique_name("file")

    run_one_batch(
        spark, file_source_options(name, source, topic, bootstrap_servers), tmp_path / "ck"
    )

    assert [r.value for r in read_committed(topic)] == [b"one", b"two", b"three"]
    raw = [r for r in read_committed("eosconnect-offsets") if name.encode() in (r.key or b"")]
    expected_key = f'["{name}",{{"filename":"{source}"}}]'.encode()
    assert [(r.key, r.value) for r in raw] == [(expected_key, b'{"position":14}')]

    with source.open("a") as appended:
        appended.write("four\n")
    run_one_batch(
        spark, file_source_options(name, source, topic, bootstrap_servers), tmp_path / "ck"
    )

    assert [r.value for r in read_committed(topic)] == [b"one", b"two", b"three", b"four"]
