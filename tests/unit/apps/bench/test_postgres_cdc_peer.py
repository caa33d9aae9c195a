"""`--only postgres-cdc`'s side by side with Debezium: the pure parts (order, configs, counts,
verification lines, the rows of the table)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from spark_eos_connect.apps.bench.config import (
    CDC_DEBEZIUM_SNAPSHOT,
    CDC_DEBEZIUM_STREAMING,
    CDC_EOS_SNAPSHOT,
    CDC_EOS_STREAMING,
    CDC_JAVA_SNAPSHOT,
    CDC_JAVA_STREAMING,
    PEERS,
    POSTGRES_CDC,
)
from spark_eos_connect.apps.bench.postgres_cdc_peer import (
    DEBEZIUM,
    EOS,
    JAVA,
    Counts,
    Timing,
    count_records,
    debezium_config,
    eos_options,
    java_options,
    prefix_for,
    round_order,
    summarize,
    verifications,
)
from spark_eos_connect.apps.bench.report import table_rows
from spark_eos_connect.testing.postgres import PostgresDatabase

DATABASE = PostgresDatabase("127.0.0.1", 5433, "bench", "secret", "cdc_1")


def record(ident: int | None, op: str | None) -> tuple[bytes | None, bytes | None]:
    """A (key, value) pair as JsonConverter without schemas writes a change event."""
    key = None if ident is None else json.dumps({"id": ident}).encode()
    if op is None:
        return key, None
    value = {"before": None, "after": {"id": ident, "payload": "x"}, "op": op, "source": {}}
    return key, json.dumps(value).encode()


def test_the_order_alternates_so_that_each_side_goes_first_once() -> None:
    assert round_order(0) == (EOS, JAVA, DEBEZIUM)
    assert round_order(1) == (DEBEZIUM, JAVA, EOS)
    assert round_order(2) == (EOS, JAVA, DEBEZIUM)


def test_prefixes_are_slot_names_of_their_own() -> None:
    ours, theirs = prefix_for(EOS, "r1", "ab12"), prefix_for(DEBEZIUM, "r1", "ab12")
    assert ours == "bench_eos_r1_ab12" and theirs == "bench_dbz_r1_ab12"
    assert prefix_for(EOS, "Warmup", "AB") == "bench_eos_warmup_ab"
    assert prefix_for(JAVA, "r1", "ab12") == "bench_java_r1_ab12"


def test_the_java_side_is_the_workers_debezium_config_as_a_query() -> None:
    worker = debezium_config(DATABASE, "bench_java_r1_x")
    query = java_options(DATABASE, "bench_java_r1_x", "127.0.0.1:9092")
    assert {k: query[k] for k in worker} == worker
    assert Path(query["plugin.path"]).name == "debezium"
    assert (query["name"], query["kafka.bootstrap.servers"]) == (
        "bench_java_r1_x",
        "127.0.0.1:9092",
    )
    assert (
        query["maxRecordsPerTrigger"] == eos_options(DATABASE, "x", "b:1")["maxRecordsPerTrigger"]
    )
    assert PEERS[(POSTGRES_CDC, CDC_JAVA_SNAPSHOT)] == CDC_DEBEZIUM_SNAPSHOT
    assert PEERS[(POSTGRES_CDC, CDC_JAVA_STREAMING)] == CDC_DEBEZIUM_STREAMING


def test_both_sides_read_the_same_table_with_the_same_converters_and_batch() -> None:
    theirs = debezium_config(DATABASE, "bench_dbz_r1_x")
    ours = eos_options(DATABASE, "bench_eos_r1_x", "127.0.0.1:9092")
    same = (
        "database.hostname",
        "database.port",
        "database.dbname",
        "table.include.list",
        "snapshot.mode",
        "max.batch.size",
        "publication.autocreate.mode",
        "key.converter.schemas.enable",
        "value.converter.schemas.enable",
    )
    assert {k: ours[k] for k in same} == {k: theirs[k] for k in same}
    assert ours["snapshot.mode"] == "initial" and ours["publication.autocreate.mode"] == "filtered"
    assert theirs["key.converter"].endswith("JsonConverter") and ours["key.converter"] == (
        "JsonConverter"
    )
    assert theirs["plugin.name"] == "pgoutput" and theirs["slot.drop.on.stop"] == "true"
    assert (theirs["slot.name"], theirs["publication.name"]) == (
        "bench_dbz_r1_x",
        "bench_dbz_r1_x_pub",
    )
    assert (ours["slot.name"], ours["publication.name"], ours["topic.prefix"]) == (
        "bench_eos_r1_x",
        "bench_eos_r1_x_pub",
        "bench_eos_r1_x",
    )


def test_counts_split_snapshot_rows_from_changes_and_count_each_id_once() -> None:
    records = [record(i, "r") for i in range(3)] + [record(i, "c") for i in range(3, 6)]
    assert count_records(records, 3) == Counts(3, 3, 3, 3)


def test_duplicates_strays_and_tombstones_do_not_pass() -> None:
    records = [record(0, "r"), record(0, "r"), record(9, "r"), record(3, "c"), record(4, "u")]
    records.append(record(5, None))  # a tombstone
    counts = count_records(records, 3)
    assert counts == Counts(snapshot=3, snapshot_distinct=1, changes=3, changes_distinct=1)
    lines = verifications(EOS, "round 1", counts, 3)
    assert [v.ok for v in lines] == [False, False]
    assert lines[0].mode == f"{CDC_EOS_SNAPSHOT}, round 1"


def test_a_complete_run_verifies() -> None:
    lines = verifications(DEBEZIUM, "round 2", Counts(5, 5, 5, 5), 5)
    assert [v.ok for v in lines] == [True, True]
    assert [v.mode for v in lines] == [
        f"{CDC_DEBEZIUM_SNAPSHOT}, round 2",
        f"{CDC_DEBEZIUM_STREAMING}, round 2",
    ]
    assert [(v.expected, v.found, v.distinct) for v in lines] == [(5, 5, 5), (5, 5, 5)]


def test_a_row_is_the_median_of_its_rounds_and_names_each_round() -> None:
    timings = [Timing(4.0, 2.0, 0.5), Timing(6.0, 3.0, 0.6), Timing(5.0, 10.0, 0.7)]
    snapshot = summarize(EOS, "snapshot", timings, 1000)
    streaming = summarize(EOS, "streaming", timings, 1000)
    assert (snapshot.mode, snapshot.seconds, snapshot.records) == (CDC_EOS_SNAPSHOT, 5.0, 1000)
    assert "4.00, 6.00, 5.00 s" in snapshot.timing and "start()" in snapshot.timing
    assert (streaming.mode, streaming.seconds) == (CDC_EOS_STREAMING, 3.0)
    assert "0.50, 0.60, 0.70 s" in streaming.timing
    assert "PUT /connectors" in summarize(DEBEZIUM, "snapshot", timings, 1000).timing


def test_eosconnect_rows_are_compared_with_debeziums() -> None:
    timings = [Timing(2.0, 1.0, 0.1)]
    theirs = [Timing(4.0, 0.5, 0.1)]
    results = [
        summarize(EOS, "snapshot", timings, 100),
        summarize(DEBEZIUM, "snapshot", theirs, 100),
        summarize(EOS, "streaming", timings, 100),
        summarize(DEBEZIUM, "streaming", theirs, 100),
    ]
    rows = {row.result.mode: row for row in table_rows(results)}
    assert PEERS[(POSTGRES_CDC, CDC_EOS_SNAPSHOT)] == CDC_DEBEZIUM_SNAPSHOT
    assert rows[CDC_EOS_SNAPSHOT].ratio_to_peer == pytest.approx(2.0)
    assert rows[CDC_EOS_STREAMING].ratio_to_peer == pytest.approx(0.5)
    assert rows[CDC_DEBEZIUM_SNAPSHOT].ratio_to_peer is None
