"""A Java connector that defines its own transactions (`transaction.boundary=connector`), this
project's test plugin `ScriptedTransactionsSourceConnector` (java/test-plugins, built by `make
setup` into a plugin folder of its own): numbered records in transactions of 30, every third
aborted, some spanning two micro-batches. The job is killed with SIGKILL (driver, Spark and
task hosts) at a commit point, then restarted, and the restart loses its JVM task host alone
(SIGKILL, the Python task host going on: the Spark task fails and its retry starts a new JVM
from the committed offsets): under read_committed every record of a committed transaction is
there once and no record of an aborted one is, and each restarted Java task read its committed
offset back as a `Long` (it fails on anything else), as did the restarted driver's connector
through its own context's offset reader (its task config says what it read).

`make test` runs the short form: the kill before a commit with a transaction open, a restart
without Spark's checkpoint, the JVM lost there with a transaction open. `make test-failover`
(`EOSCONNECT_FAILOVER=full`) adds a restart that keeps the checkpoint (Spark runs the killed
micro-batch again), a kill after a commit, the JVM lost after a commit and the whole task
host lost with its JVM. Also: the driver asks the Java connector whether it can define
transaction boundaries."""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from spark_eos_connect.api.source import ConnectorTransactionBoundaries
from spark_eos_connect.jvm import jars
from spark_eos_connect.jvm_tasks.connector import java_source_connector_class
from spark_eos_connect.testing.campaigns import full_run

from ..java_test_plugins import SCRIPTED, plugin_folder

pytestmark = pytest.mark.integration

JAVA_FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
RECORDS, TRANSACTION_SIZE, ABORT_EVERY = 600, 30, 3
PER_TRIGGER = 100  # transactions 3, 6, ... span two micro-batches
SHORT_PLAN = (("before_commit@1", False, "lose_jvm_poll@1"),)
"""(the kill, whether the restart keeps Spark's checkpoint, the host lost in the restart).
before_commit@1: the first commit of micro-batch 1 is transaction 3's (records 90-119, begun
in batch 0). The restart without a checkpoint numbers its micro-batches from 0 again: its
batch 0 reads 90-189, so its batch 1 starts with transaction 6 (180-209) open."""
FULL_PLAN = (
    *SHORT_PLAN,
    ("before_commit@1", True, "lose_jvm_poll@2"),  # Spark runs batch 1 again, then 2
    ("after_commit@2", False, "lose_jvm_after_commit@1"),  # transaction 6 just committed
    ("after_commit@2", False, "lose_host_after_commit@1"),
)
PLAN = FULL_PLAN if full_run() else SHORT_PLAN


def committed_numbers() -> set[int]:
    """The records of the transactions the task commits (k + 1 not a multiple of 3)."""
    return {n for n in range(RECORDS) if (n // TRANSACTION_SIZE + 1) % ABORT_EVERY != 0}


def job_args(name: str, topic: str, bootstrap: str, checkpoint: Path) -> list[str]:
    options = {
        "topic": topic,
        "plugin.path": str(plugin_folder()),
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


def assert_exactly_the_committed_transactions(records: list[Any]) -> None:
    """Every record of a committed transaction once, none of an aborted one."""
    counts = Counter(int(r.value) for r in records)
    duplicated = sorted(n for n, seen in counts.items() if seen > 1)
    assert not duplicated, f"{len(duplicated)} duplicated, e.g. {duplicated[:5]}"
    aborted = sorted(set(counts) - committed_numbers())
    assert not aborted, f"{len(aborted)} records of aborted transactions visible: {aborted[:5]}"
    missing = sorted(committed_numbers() - set(counts))
    assert not missing, f"{len(missing)} missing, e.g. {missing[:5]}"


def task_states(status: list[Any], connector: str) -> list[str]:
    """Task 0's states in the status topic, in the order they were written."""
    key = f"status-task-{connector}-0".encode()
    return [json.loads(r.value)["state"] for r in status if r.key == key and r.value]


def seen_by_the_connector(read_committed: Callable[..., list[Any]], connector: str) -> list[str]:
    """`connector.saw.position` of each task config the connector's drivers wrote, in order:
    what the connector's own offset reader answered when its task configs were made."""
    key = f"task-{connector}-0".encode()
    return [
        json.loads(r.value)["properties"]["connector.saw.position"]
        for r in read_committed("eosconnect-configs")
        if r.key == key and r.value
    ]


@pytest.mark.parametrize(
    ("crash", "keep_checkpoint", "loss"),
    PLAN,
    ids=[f"{crash}-{'kept' if kept else 'lost'}-checkpoint-{loss}" for crash, kept, loss in PLAN],
)
def test_java_connector_transactions_survive_a_kill_and_a_lost_jvm_exactly_once(
    crash: str,
    keep_checkpoint: bool,
    loss: str,
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    read_committed: Callable[..., list[Any]],
    run_job: Callable[..., Any],
    unique_name: Callable[[str], str],
    tmp_path: Path,
) -> None:
    topic, name = topic_factory("java-txn"), unique_name("java-txn")
    checkpoint = tmp_path / "checkpoint"
    args = job_args(name, topic, bootstrap_servers, checkpoint)
    crashed = run_job("source_to_kafka.py", *args, fault=crash, marker=tmp_path / "crashed")
    assert crashed.returncode == -9, crashed.stderr[-3000:]
    assert (tmp_path / "crashed").read_text().strip() == crash
    # a kill before the commit leaves its transaction open until the restart fences it
    before = [int(r.value) for r in read_committed(topic, settled=crash.startswith("after"))]
    assert before, "a transaction committed before the kill: the restart resumes after it"
    assert len(set(before)) == len(before) and set(before) <= committed_numbers()
    key = json.dumps([name, {"topic": topic}], separators=(",", ":")).encode()
    committed_before = json.loads(
        [r.value for r in read_committed("eosconnect-offsets") if r.key == key][-1]
    )["position"]
    assert seen_by_the_connector(read_committed, name) == ["none"]  # nothing committed yet
    if not keep_checkpoint:  # the offsets topic alone says where the task goes on
        shutil.rmtree(checkpoint)
    lost = tmp_path / "lost"

    restarted = run_job("source_to_kafka.py", *args, fault=loss, marker=lost)

    assert restarted.returncode == 0, restarted.stderr[-3000:]  # Spark retried the task
    assert lost.read_text().strip() == loss  # fired once: the retry found the marker
    assert re.search(r"Lost task \d+\.0 in stage", restarted.stderr), restarted.stderr[-3000:]
    assert_exactly_the_committed_transactions(read_committed(topic))
    offsets = [r.value for r in read_committed("eosconnect-offsets") if r.key == key]
    assert offsets[-1] == b'{"position":600}', offsets[-3:]
    # the restarted driver's connector read its committed offset through its own context
    assert seen_by_the_connector(read_committed, name)[-1] == str(committed_before)
    if loss.startswith("lose_jvm"):  # its Python task host saw the JVM gone: FAILED, then ran
        states = task_states(read_committed("eosconnect-status"), name)
        assert "FAILED" in states and "RUNNING" in states[states.index("FAILED") :], states


def test_the_driver_asks_the_java_connector_whether_it_defines_transactions() -> None:
    scripted = java_source_connector_class(SCRIPTED, [str(plugin_folder())])()
    file = java_source_connector_class(JAVA_FILE_SOURCE, [str(jars.plugin_path("connect-file"))])()

    assert scripted.can_define_transaction_boundaries({"topic": "t"}) is (
        ConnectorTransactionBoundaries.SUPPORTED
    )
    assert file.can_define_transaction_boundaries({"topic": "t"}) is (
        ConnectorTransactionBoundaries.UNSUPPORTED  # Connect's default: refused at start
    )
