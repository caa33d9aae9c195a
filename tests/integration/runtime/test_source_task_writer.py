"""The task writer against the real broker, without Spark: zombie attempts are fenced, a
re-executed attempt never duplicates, aborted transactions leave neither records nor offsets."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pyarrow as pa
import pytest

from spark_eos_connect.connectors.generator import parse_generated_value
from spark_eos_connect.kafka.producers import ProducerFencedError
from spark_eos_connect.protocol.offsets_format import decode_offset_key, decode_offset_value
from spark_eos_connect.runtime.framework_config import parse_source_pipeline
from spark_eos_connect.runtime.source_coordinator import SourceCoordinator
from spark_eos_connect.runtime.source_plan import SourceTaskPlan
from spark_eos_connect.runtime.source_reader import read_source_task
from spark_eos_connect.runtime.source_writer import SourceTaskWriter

pytestmark = pytest.mark.integration

PER_BATCH = 400


@pytest.fixture
def plan_factory(
    bootstrap_servers: str, topic_factory: Callable[..., str], unique_name: Callable[[str], str]
) -> Callable[..., tuple[SourceCoordinator, str]]:
    def make(**extra: str) -> tuple[SourceCoordinator, str]:
        topic = topic_factory("writer")
        options = {
            "name": unique_name("writer"),
            "connector.class": "Generator",
            "topic": topic,
            "records.per.poll": "100",
            "maxRecordsPerTrigger": str(PER_BATCH),
            "kafka.bootstrap.servers": bootstrap_servers,
            **extra,
        }
        return SourceCoordinator(parse_source_pipeline(options)), topic

    return make


def committed_offsets(
    read_committed: Callable[..., list[Any]], connector: str
) -> list[tuple[dict[str, Any], Any]]:
    found = []
    for record in read_committed("eosconnect-offsets"):
        name, partition = decode_offset_key(record.key)
        if name == connector:
            found.append((partition, decode_offset_value(record.value)))
    return found


def writer(bootstrap: str, plan: SourceTaskPlan) -> SourceTaskWriter:
    return SourceTaskWriter({"bootstrap.servers": bootstrap}, lambda: plan, batch_id=0)


def test_newer_attempt_fences_older_one_which_cannot_commit(
    plan_factory: Callable[..., tuple[SourceCoordinator, str]],
    bootstrap_servers: str,
    read_committed: Callable[..., list[Any]],
) -> None:
    coordinator, topic = plan_factory()
    [plan] = coordinator.plan()
    batches = list(read_source_task(plan))
    successor_result = {}

    def zombie_input() -> Iterator[pa.RecordBatch]:
        yield batches[0]
        # The zombie has an open transaction with records in it; a retried attempt starts now.
        successor_result["r"] = writer(bootstrap_servers, plan).write(iter(batches))
        yield from batches[1:]

    with pytest.raises(ProducerFencedError, match="fenced by a newer producer"):
        writer(bootstrap_servers, plan).write(zombie_input())

    assert successor_result["r"].records == PER_BATCH
    counts = Counter(parse_generated_value(r.value) for r in read_committed(topic))
    assert sorted(counts) == [(0, n) for n in range(PER_BATCH)]
    assert set(counts.values()) == {1}


def test_reexecuted_attempt_after_a_commit_writes_nothing(
    plan_factory: Callable[..., tuple[SourceCoordinator, str]],
    bootstrap_servers: str,
    read_committed: Callable[..., list[Any]],
) -> None:
    coordinator, topic = plan_factory()
    [plan] = coordinator.plan()

    first = writer(bootstrap_servers, plan).write(read_source_task(plan))
    again = writer(bootstrap_servers, plan).write(read_source_task(plan))

    assert (first.records, first.transactions) == (PER_BATCH, 1)
    assert (again.records, again.transactions, again.stale_rows_skipped) == (0, 0, PER_BATCH)
    assert len(read_committed(topic)) == PER_BATCH
    [next_plan] = coordinator.plan()
    assert next_plan.committed == [
        (
            plan.committed[0][0] if plan.committed else {"generator": plan.connector, "task": 0},
            {"position": PER_BATCH},
        )
    ]


def test_aborted_transaction_leaves_no_records_and_no_offsets(
    plan_factory: Callable[..., tuple[SourceCoordinator, str]],
    bootstrap_servers: str,
    read_committed: Callable[..., list[Any]],
    read_uncommitted: Callable[..., list[Any]],
) -> None:
    coordinator, topic = plan_factory()
    [plan] = coordinator.plan()

    attempt = writer(bootstrap_servers, plan)

    def failing_input() -> Iterator[pa.RecordBatch]:
        yield from read_source_task(plan)
        assert attempt.producer is not None
        attempt.producer.flush(30)  # the records reach the broker inside the open transaction
        raise RuntimeError("the Spark task failed after producing")

    with pytest.raises(RuntimeError, match="failed after producing"):
        attempt.write(failing_input())

    assert len(read_uncommitted(topic)) == PER_BATCH
    assert read_committed(topic) == []
    assert committed_offsets(read_committed, plan.connector) == []
    [retry_plan] = coordinator.plan()
    assert retry_plan.committed == []


def test_at_least_once_mode_writes_records_then_offsets_without_transactions(
    plan_factory: Callable[..., tuple[SourceCoordinator, str]],
    bootstrap_servers: str,
    read_committed: Callable[..., list[Any]],
) -> None:
    coordinator, topic = plan_factory(**{"exactly.once.source.support": "disabled"})
    [plan] = coordinator.plan()

    result = writer(bootstrap_servers, plan).write(read_source_task(plan))

    assert not plan.exactly_once
    assert (result.records, result.exactly_once) == (PER_BATCH, False)
    assert len(read_committed(topic)) == PER_BATCH
    assert committed_offsets(read_committed, plan.connector)[-1][1] == {"position": PER_BATCH}


def test_connector_defined_boundaries_commit_where_the_task_asks(
    plan_factory: Callable[..., tuple[SourceCoordinator, str]],
    bootstrap_servers: str,
    read_committed: Callable[..., list[Any]],
) -> None:
    coordinator, topic = plan_factory(
        **{"transaction.boundary": "connector", "transaction.commit.every": "150"}
    )
    [plan] = coordinator.plan()
    boundaries: dict[int, str] = {}

    def publish(row: int, action: str) -> None:
        boundaries[row] = action

    result = SourceTaskWriter(
        {"bootstrap.servers": bootstrap_servers},
        lambda: plan,
        batch_id=0,
        boundaries=lambda: boundaries,
    ).write(read_source_task(plan, publish))

    assert boundaries == {149: "commit", 299: "commit"}
    # Two transactions the connector asked for, and the rest of the batch in a final one.
    assert (result.records, result.transactions) == (PER_BATCH, 3)
    assert len(read_committed(topic)) == PER_BATCH
    offsets = committed_offsets(read_committed, plan.connector)
    assert [offset for _, offset in offsets] == [
        {"position": 150},
        {"position": 300},
        {"position": PER_BATCH},
    ]


def test_connector_requested_abort_drops_that_transactions_records_and_offsets(
    plan_factory: Callable[..., tuple[SourceCoordinator, str]],
    bootstrap_servers: str,
    read_committed: Callable[..., list[Any]],
) -> None:
    coordinator, topic = plan_factory(**{"transaction.boundary": "connector"})
    [plan] = coordinator.plan()
    boundaries = {99: "commit", 199: "abort"}

    result = SourceTaskWriter(
        {"bootstrap.servers": bootstrap_servers},
        lambda: plan,
        batch_id=0,
        boundaries=lambda: boundaries,
    ).write(read_source_task(plan))

    assert (result.transactions, result.aborted_transactions) == (2, 1)
    values = sorted(parse_generated_value(r.value)[1] for r in read_committed(topic))
    assert values == [*range(0, 100), *range(200, PER_BATCH)]


def test_dedicated_offsets_topic_is_primary_and_mirrored_to_the_global_topic(
    plan_factory: Callable[..., tuple[SourceCoordinator, str]],
    bootstrap_servers: str,
    read_committed: Callable[..., list[Any]],
    unique_name: Callable[[str], str],
) -> None:
    dedicated = unique_name("connector-offsets")
    coordinator, _ = plan_factory(**{"offsets.storage.topic": dedicated})
    [plan] = coordinator.plan()

    writer(bootstrap_servers, plan).write(read_source_task(plan))

    def latest(topic: str) -> Any:
        values = [
            decode_offset_value(r.value)
            for r in read_committed(topic)
            if decode_offset_key(r.key)[0] == plan.connector
        ]
        return values[-1] if values else None

    assert plan.offsets_topic == dedicated
    assert latest(dedicated) == {"position": PER_BATCH}
    assert latest("eosconnect-offsets") == {"position": PER_BATCH}
    [next_plan] = coordinator.plan()
    assert [offset for _, offset in next_plan.committed] == [{"position": PER_BATCH}]
