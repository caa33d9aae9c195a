"""Task hosts against the real broker: micro-batches of one task from any worker go to one
host that keeps the task; a kept producer fenced in between is replaced without loss or
duplicates."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from spark_eos_connect.connectors.generator import parse_generated_value
from spark_eos_connect.kafka.producers import fence_transactional_id
from spark_eos_connect.source.config import parse_source_pipeline
from spark_eos_connect.source.coordinator import SourceCoordinator
from spark_eos_connect.source.host import host_socket_path, run_on_host

pytestmark = pytest.mark.integration

PER_BATCH = 300


@pytest.fixture
def spool(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("EOSCONNECT_SPOOL_DIR", str(tmp_path / "spool"))
    yield tmp_path / "spool"


def test_a_fenced_kept_producer_is_replaced_and_the_batch_written_once(
    spool: Path,
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    read_committed: Callable[..., list[Any]],
    unique_name: Callable[[str], str],
) -> None:
    kafka = {"bootstrap.servers": bootstrap_servers}
    topic = topic_factory("host")
    coordinator = SourceCoordinator.open(
        parse_source_pipeline(
            {
                "name": unique_name("host"),
                "connector.class": "Generator",
                "topic": topic,
                "records.per.poll": "100",
                "maxRecordsPerTrigger": str(PER_BATCH),
                "kafka.bootstrap.servers": bootstrap_servers,
            }
        )
    )

    def batch(batch_id: int) -> int:
        [plan] = coordinator.plan()
        return sum(rows.num_rows for rows in run_on_host(kafka, plan, batch_id))

    assert batch(0) == PER_BATCH
    [plan] = coordinator.plan()
    socket_path = host_socket_path(kafka, plan)
    assert socket_path.exists()  # the host keeps the task between micro-batches
    host_log = socket_path.with_suffix(".log")
    # An attempt elsewhere claims the task's transactional id and dies before committing.
    fence_transactional_id(kafka, plan.transactional_id)
    assert batch(1) == PER_BATCH
    assert "kept producer was fenced; starting afresh" in host_log.read_text()
    assert batch(2) == PER_BATCH

    counts = Counter(parse_generated_value(r.value)[1] for r in read_committed(topic))
    assert counts == Counter(range(3 * PER_BATCH))
