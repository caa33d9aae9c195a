"""A running source query reacts to target states written in the config topic: STOPPED writes
nothing (I4), resuming continues exactly from the committed offsets, also after the connector
failed before and during its shutdown (KIP-875's test plan, with Spark running the tasks)."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from spark_eos_connect.connectors.generator import parse_generated_value
from spark_eos_connect.storage.config_store import KafkaConfigStore
from spark_eos_connect.storage.status_store import KafkaStatusStore
from spark_eos_connect.testing import wait_for

pytestmark = pytest.mark.integration


def test_stop_then_resume_a_running_query(
    generator_query: Callable[..., Any],
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    read_committed: Callable[..., list[Any]],
    unique_name: Callable[[str], str],
    tmp_path: Path,
) -> None:
    topic = topic_factory("lifecycle")
    name = unique_name("lifecycle")
    query = generator_query(
        name,
        topic,
        **{
            "connector.class": "spark_eos_connect.testing.FaultyGeneratorConnector",
            "faults.dir": str(tmp_path),
        },
    )
    store = KafkaConfigStore(
        {"bootstrap.servers": bootstrap_servers}, "eosconnect-configs", "eosconnect"
    )
    statuses = KafkaStatusStore({"bootstrap.servers": bootstrap_servers}, "eosconnect-status")

    def connector_state() -> str | None:
        status = statuses.read_to_end().connector_status(name)
        return None if status is None else status.state.value

    try:
        wait_for(
            lambda: len(read_committed(topic, settled=False)) > 0, 120, "records before the stop"
        )
        (tmp_path / "raise-error").touch()  # the connector fails in the background ...
        wait_for(lambda: connector_state() == "FAILED", 60, "the connector to be FAILED")
        failed_count = len(read_committed(topic))
        wait_for(
            lambda: len(read_committed(topic, settled=False)) > failed_count,
            120,
            "tasks to keep running",
        )
        (tmp_path / "fail-on-stop").touch()  # ... and again while it stops
        store.leader().stop_connector(name)
        wait_for(
            lambda: (
                query.status["message"] != "Processing new data"
                and not query.status["isTriggerActive"]
            ),
            60,
            "the query to go idle",
        )
        stopped_count = len(read_committed(topic))
        snapshot = store.read_to_end()
        assert snapshot.target_state(name) == "STOPPED"
        assert snapshot.task_configs(name) == []
        wait_for(lambda: connector_state() == "STOPPED", 60, "the connector to be STOPPED")
        time.sleep(3)  # a stopped connector must not write, however long it stays stopped
        assert len(read_committed(topic)) == stopped_count

        (tmp_path / "fail-on-stop").unlink()
        store.leader().put_target_state(name, "STARTED")
        wait_for(
            lambda: len(read_committed(topic, settled=False)) > stopped_count + 100,
            120,
            "records after resume",
        )
        assert connector_state() == "RUNNING"
        lifecycle = (tmp_path / "lifecycle.log").read_text().split()
        assert lifecycle[-3:] == ["start", "stop", "start"]  # a fresh instance after the stop
    finally:
        query.stop()

    counts = Counter(parse_generated_value(r.value) for r in read_committed(topic))
    positions = sorted(n for _, n in counts)
    assert set(counts.values()) == {1}
    assert positions == list(range(len(positions)))  # resumed exactly where it stopped
