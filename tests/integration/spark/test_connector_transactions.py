"""Connector-defined transactions through Spark (`transaction.boundary=connector`): only the
task ends its transactions, they may span micro-batches, aborted ones are dropped while the live
task polls on, and a kill with a transaction open loses and duplicates nothing."""

from __future__ import annotations

import signal
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from spark_eos_connect.testing import fibonacci_transactions, wait_for

pytestmark = pytest.mark.integration

TOTAL = 232  # transactions of 1, 1, 2, ..., 89 records; the data ends on a boundary
PER_TRIGGER = 12  # micro-batches end on boundaries (12: commit, 20: abort) and inside them
CONNECTOR = "spark_eos_connect.testing.ScriptedTransactionsConnector"


def committed_values() -> list[int]:
    return [
        n
        for first, size, committed in fibonacci_transactions(TOTAL)
        if committed
        for n in range(first, first + size)
    ]


def test_transactions_of_the_connector_commit_and_abort_where_it_asks(
    spark: Any,
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    read_committed: Callable[..., list[Any]],
    unique_name: Callable[[str], str],
    tmp_path: Path,
) -> None:
    topic = topic_factory("scripted")
    name = unique_name("scripted")
    kafka = {"kafka.bootstrap.servers": bootstrap_servers}
    spark.conf.set("spark.sql.streaming.numRecentProgressUpdates", "1000")
    stream = (
        spark.readStream.format("eosconnect")
        .options(name=name, topic=topic, **kafka)
        .option("connector.class", CONNECTOR)
        .option("records.total", str(TOTAL))
        .option("records.per.poll", "7")
        .option("log.dir", str(tmp_path))
        .option("transaction.boundary", "connector")
        .option("maxRecordsPerTrigger", str(PER_TRIGGER))
        .load()
    )
    query = (
        stream.writeStream.format("eosconnect")
        .options(name=name, **kafka)
        .option("checkpointLocation", str(tmp_path / "ck"))
        .trigger(processingTime="100 milliseconds")
        .start()
    )
    expected = committed_values()
    try:
        wait_for(
            lambda: len(read_committed(topic, settled=False)) >= len(expected),
            180,
            "every transaction",
        )

        def input_rows() -> int:
            return sum(p["numInputRows"] for p in query.recentProgress)

        # The batch that committed the last transaction reports after Kafka has it.
        wait_for(lambda: input_rows() >= len(expected), 60, "the last batch's progress")
        assert query.isActive and query.exception() is None
        rows_seen = input_rows()
    finally:
        query.stop()

    assert [int(r.value) for r in read_committed(topic)] == expected
    assert rows_seen == len(expected)  # one row per committed record, none emitted twice
    polled = Counter(int(v) for v in (tmp_path / "polled.log").read_text().split())
    assert polled == Counter(range(TOTAL))  # no record polled twice: no task attempt restarted
    acked = [int(line.split()[0]) for line in (tmp_path / "acks.log").read_text().splitlines()]
    assert acked == expected


def test_kill_with_a_connector_transaction_open_then_restart_keeps_only_committed_ones(
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    read_committed: Callable[..., list[Any]],
    run_job: Callable[..., Any],
    start_job: Callable[..., Any],
    unique_name: Callable[[str], str],
    tmp_path: Path,
) -> None:
    topic = topic_factory("scripted-crash")
    args = [
        "--name",
        unique_name("scripted-crash"),
        "--connector-class",
        CONNECTOR,
        "--max-records-per-trigger",
        str(PER_TRIGGER),
        "--option",
        f"topic={topic}",
        "--option",
        f"records.total={TOTAL}",
        "--option",
        "transaction.boundary=connector",
        "--bootstrap-servers",
        bootstrap_servers,
        "--checkpoint",
        str(tmp_path / "ck"),
    ]
    marker = tmp_path / "fired"
    # Batch 3 polls records 36..47 inside the transaction of records 33..53.
    crashed = run_job("source_to_kafka.py", *args, fault="poll@3", marker=marker)
    assert crashed.returncode == -9, crashed.stderr[-3000:]
    assert marker.read_text().strip() == "poll@3"
    before = [int(r.value) for r in read_committed(topic, settled=False)]
    assert before == [n for n in committed_values() if n < 33]

    # Micro-batches inside a long transaction commit nothing, so the job cannot tell idleness
    # from its input rows: it runs until every transaction is in, then is asked to stop.
    restarted = start_job("source_to_kafka.py", *args)
    expected = committed_values()
    wait_for(
        lambda: len(read_committed(topic, settled=False)) >= len(expected), 240, "every transaction"
    )
    restarted.process.send_signal(signal.SIGTERM)
    assert restarted.process.wait(120) == 0, restarted.log.read_text()[-3000:]
    assert [int(r.value) for r in read_committed(topic)] == expected
