"""A Java connector that defines its own transactions (`transaction.boundary=connector`), this
project's test plugin `ScriptedTransactionsSourceConnector` (java/test-plugins, built by `make
setup` into a plugin folder of its own): numbered records in transactions of 30, every third
aborted, some spanning two micro-batches. The job is killed with SIGKILL at a commit point,
its transaction open, then restarted: under read_committed every record of a committed
transaction is there once and no record of an aborted one is, and the restarted Java task read
its committed offset back as a `Long` (it fails on anything else). Also: the driver asks the
Java connector whether it can define transaction boundaries."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from spark_eos_connect.api.source import ConnectorTransactionBoundaries
from spark_eos_connect.jvm import jars
from spark_eos_connect.jvm_tasks.connector import java_source_connector_class

pytestmark = pytest.mark.integration

SCRIPTED = "io.github.sparkeosconnect.testplugins.ScriptedTransactionsSourceConnector"
JAVA_FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
RECORDS, TRANSACTION_SIZE, ABORT_EVERY = 600, 30, 3
PER_TRIGGER = 100  # transactions 3, 6, ... span two micro-batches
CRASH = "before_commit@1"
"""The first commit of micro-batch 1 is transaction 3's (records 90-119, begun in batch 0)."""


def scripted_plugin_folder() -> Path:
    """The plugin folder `make setup` builds java/test-plugins into (a missing one fails)."""
    folder = jars.cache_root() / "test-plugins" / "scripted-transactions"
    if not any(folder.glob("*.jar")):
        pytest.fail(f"{folder} holds no jar: run `make setup`, which builds java/test-plugins")
    return folder


def committed_numbers() -> set[int]:
    """The records of the transactions the task commits (k + 1 not a multiple of 3)."""
    return {n for n in range(RECORDS) if (n // TRANSACTION_SIZE + 1) % ABORT_EVERY != 0}


def job_args(name: str, topic: str, bootstrap: str, checkpoint: Path) -> list[str]:
    options = {
        "topic": topic,
        "plugin.path": str(scripted_plugin_folder()),
        "records": str(RECORDS),
        "transaction.size": str(TRANSACTION_SIZE),
        "abort.every": str(ABORT_EVERY),
        "exactly.once.support": "required",
    }
    args = ["--name", name, "--connector-class", SCRIPTED, "--transaction-boundary", "connector"]
    args += ["--max-records-per-trigger", str(PER_TRIGGER)]
    for key, value in options.items():
        args += ["--option", f"{key}={value}"]
    args += ["--bootstrap-servers", bootstrap, "--checkpoint", str(checkpoint)]
    return [*args, "--until-idle", "--timeout", "240"]


def test_java_connector_transactions_survive_a_kill_exactly_once(
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    read_committed: Callable[..., list[Any]],
    run_job: Callable[..., Any],
    unique_name: Callable[[str], str],
    tmp_path: Path,
) -> None:
    topic, name = topic_factory("java-txn"), unique_name("java-txn")
    args = job_args(name, topic, bootstrap_servers, tmp_path / "checkpoint")
    marker = tmp_path / "fired"

    crashed = run_job("source_to_kafka.py", *args, fault=CRASH, marker=marker)

    assert crashed.returncode == -9, crashed.stderr[-3000:]
    assert marker.read_text().strip() == CRASH
    before = [int(r.value) for r in read_committed(topic, settled=False)]
    assert before, "a transaction committed before the kill: the restart resumes after it"
    assert len(set(before)) == len(before) and set(before) <= committed_numbers()

    restarted = run_job("source_to_kafka.py", *args)

    assert restarted.returncode == 0, restarted.stderr[-3000:]
    counts = Counter(int(r.value) for r in read_committed(topic))
    duplicated = sorted(n for n, seen in counts.items() if seen > 1)
    assert not duplicated, f"{len(duplicated)} duplicated, e.g. {duplicated[:5]}"
    aborted = sorted(set(counts) - committed_numbers())
    assert not aborted, f"{len(aborted)} records of aborted transactions visible: {aborted[:5]}"
    missing = sorted(committed_numbers() - set(counts))
    assert not missing, f"{len(missing)} missing, e.g. {missing[:5]}"
    key = json.dumps([name, {"topic": topic}], separators=(",", ":")).encode()
    offsets = [r.value for r in read_committed("eosconnect-offsets") if r.key == key]
    assert offsets[-1] == b'{"position":600}', offsets[-3:]


def test_the_driver_asks_the_java_connector_whether_it_defines_transactions() -> None:
    scripted = java_source_connector_class(SCRIPTED, [str(scripted_plugin_folder())])()
    file = java_source_connector_class(JAVA_FILE_SOURCE, [str(jars.plugin_path("connect-file"))])()

    assert scripted.can_define_transaction_boundaries({"topic": "t"}) is (
        ConnectorTransactionBoundaries.SUPPORTED
    )
    assert file.can_define_transaction_boundaries({"topic": "t"}) is (
        ConnectorTransactionBoundaries.UNSUPPORTED  # Connect's default: refused at start
    )
