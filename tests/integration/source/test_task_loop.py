"""Live source tasks against the real broker, without Spark: kept tasks and producers across
micro-batches, zombies fenced, re-executed attempts write nothing, aborted transactions leave
neither records nor offsets, connector-defined transactions end only where the task says."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from confluent_kafka import KafkaError, KafkaException

from spark_eos_connect.connectors.generator import parse_generated_value
from spark_eos_connect.kafka.producers import ProducerFencedError
from spark_eos_connect.ports import DeliveryCallback, TransactionalProducer
from spark_eos_connect.protocol.generations import TaskStartupError
from spark_eos_connect.protocol.murmur2 import default_partition
from spark_eos_connect.protocol.offsets_format import decode_offset_key, decode_offset_value
from spark_eos_connect.source.config import parse_source_pipeline
from spark_eos_connect.source.coordinator import SourceCoordinator
from spark_eos_connect.source.plan import SourceTaskPlan
from spark_eos_connect.source.records import COMMITTED_ROW_SCHEMA
from spark_eos_connect.source.task_clients import KafkaTaskClients
from spark_eos_connect.source.task_failures import TaskFailures
from spark_eos_connect.source.task_loop import (
    BatchResult,
    DeliveryFailedError,
    InternalTopicError,
    LiveSourceTask,
    run_task_once,
)
from spark_eos_connect.testing import fibonacci_transactions

pytestmark = pytest.mark.integration

PER_BATCH = 400
SCRIPTED = "spark_eos_connect.testing.ScriptedTransactionsConnector"


@pytest.fixture
def plan_factory(
    bootstrap_servers: str, topic_factory: Callable[..., str], unique_name: Callable[[str], str]
) -> Callable[..., tuple[SourceCoordinator, str]]:
    def make(**extra: str) -> tuple[SourceCoordinator, str]:
        topic = extra.pop("topic", None) or topic_factory("live")
        options = {
            "name": unique_name("live"),
            "connector.class": "Generator",
            "topic": topic,
            "records.per.poll": "100",
            "maxRecordsPerTrigger": str(PER_BATCH),
            "kafka.bootstrap.servers": bootstrap_servers,
            **extra,
        }
        return SourceCoordinator.open(parse_source_pipeline(options)), topic

    return make


def committed_offsets(
    read_committed: Callable[..., list[Any]], connector: str, topic: str = "eosconnect-offsets"
) -> list[tuple[dict[str, Any], Any]]:
    found = []
    for record in read_committed(topic):
        name, partition = decode_offset_key(record.key)
        if name == connector:
            found.append((partition, decode_offset_value(record.value)))
    return found


def run(live: LiveSourceTask, plan: SourceTaskPlan, batch_id: int = 0) -> BatchResult:
    result = BatchResult()
    rows = [batch for batch in live.run_batch(plan, batch_id, result)]
    assert sum(batch.num_rows for batch in rows) == result.records
    return result


def generated(read: Callable[..., list[Any]], topic: str) -> Counter[int]:
    return Counter(parse_generated_value(r.value)[1] for r in read(topic))


def test_a_kept_task_goes_on_polling_with_the_same_producer(
    plan_factory: Callable[..., tuple[SourceCoordinator, str]],
    bootstrap_servers: str,
    read_committed: Callable[..., list[Any]],
) -> None:
    coordinator, topic = plan_factory()
    [plan] = coordinator.plan()
    live = LiveSourceTask({"bootstrap.servers": bootstrap_servers}, plan)
    producer = None
    try:
        results = []
        for batch in range(3):
            [plan] = coordinator.plan()
            assert live.matches(plan)
            results.append(run(live, plan, batch))
            producer = producer or live.producer
            assert live.producer is producer
    finally:
        live.close()

    assert [(r.records, r.transactions, r.reused) for r in results] == [
        (PER_BATCH, 1, False),
        (PER_BATCH, 1, True),
        (PER_BATCH, 1, True),
    ]
    assert generated(read_committed, topic) == Counter(range(3 * PER_BATCH))


def test_a_kept_producer_fenced_by_a_newer_attempt_cannot_commit(
    plan_factory: Callable[..., tuple[SourceCoordinator, str]],
    bootstrap_servers: str,
    read_committed: Callable[..., list[Any]],
) -> None:
    kafka = {"bootstrap.servers": bootstrap_servers}
    coordinator, topic = plan_factory()
    [plan] = coordinator.plan()
    zombie = LiveSourceTask(kafka, plan)
    try:
        run(zombie, plan)
        [plan] = coordinator.plan()
        assert zombie.matches(plan)
        assert run_task_once(kafka, plan).records == PER_BATCH  # a newer attempt, elsewhere
        [plan] = coordinator.plan()
        assert not zombie.matches(plan)  # its offsets moved without it
        with pytest.raises(ProducerFencedError, match="fenced by a newer producer"):
            run(zombie, plan)  # forced anyway: Kafka refuses the kept producer
    finally:
        zombie.close()

    assert generated(read_committed, topic) == Counter(range(2 * PER_BATCH))


def test_a_kept_producer_of_an_older_generation_never_writes_after_a_reconfiguration(
    plan_factory: Callable[..., tuple[SourceCoordinator, str]],
    bootstrap_servers: str,
    read_committed: Callable[..., list[Any]],
) -> None:
    kafka = {"bootstrap.servers": bootstrap_servers}
    coordinator, topic = plan_factory()
    [old_plan] = coordinator.plan()
    zombie = LiveSourceTask(kafka, old_plan)
    try:
        run(zombie, old_plan)
        # A new driver starts a new generation, fencing every task producer of the old one.
        successor, _ = plan_factory(name=old_plan.connector, topic=topic)
        [new_plan] = successor.plan()
        assert not zombie.matches(new_plan)
        # Forced to run its old plan anyway: its start-up check or Kafka refuses it.
        with pytest.raises((TaskStartupError, ProducerFencedError)):
            run(zombie, old_plan)
        assert run_task_once(kafka, new_plan).records == PER_BATCH
    finally:
        zombie.close()

    assert generated(read_committed, topic) == Counter(range(2 * PER_BATCH))


def rows_of(plan: SourceTaskPlan, kafka: dict[str, Any], batch_id: int) -> tuple[Any, BatchResult]:
    """What one fresh attempt of `plan` as micro-batch `batch_id` emits, and its result."""
    live, result = LiveSourceTask(kafka, plan), BatchResult()
    try:
        rows = pa.Table.from_batches(
            list(live.run_batch(plan, batch_id, result)), schema=COMMITTED_ROW_SCHEMA
        )
    finally:
        live.close()
    return rows, result


def test_a_reexecuted_attempt_after_a_commit_writes_nothing_and_emits_the_same_rows(
    plan_factory: Callable[..., tuple[SourceCoordinator, str]],
    bootstrap_servers: str,
    read_committed: Callable[..., list[Any]],
) -> None:
    kafka = {"bootstrap.servers": bootstrap_servers}
    coordinator, topic = plan_factory()
    [plan] = coordinator.plan()

    first_rows, first = rows_of(plan, kafka, 7)
    again_rows, again = rows_of(plan, kafka, 7)  # Spark's retry of the same micro-batch
    other_rows, other = rows_of(plan, kafka, 8)  # another batch planned from the same offsets

    assert (first.records, first.transactions, first.replayed) == (PER_BATCH, 1, False)
    assert (again.records, again.stale_rows_skipped, again.replayed) == (PER_BATCH, 0, True)
    assert again_rows.equals(first_rows)
    written = read_committed(topic)
    assert sorted(first_rows.column("offset").to_pylist()) == [r.offset for r in written]
    assert (other.records, other.transactions, other.stale_rows_skipped) == (0, 0, PER_BATCH)
    assert other_rows.num_rows == 0
    assert len(written) == PER_BATCH
    [next_plan] = coordinator.plan()
    assert [offset for _, offset in next_plan.committed] == [{"position": PER_BATCH}]


class _FailingCommit:
    """A producer whose commit fails after everything, offsets included, was produced."""

    def __init__(self, producer: Any) -> None:
        self._producer = producer

    def __getattr__(self, name: str) -> Any:
        return getattr(self._producer, name)

    def commit_transaction(self, *args: Any) -> None:
        self._producer.flush(30)  # records and offsets reach the broker inside the transaction
        raise RuntimeError("the task failed between producing its offsets and committing")


class FailingCommitClients(KafkaTaskClients):
    """The task's real clients, with a producer that fails at `commit_transaction`."""

    def task_producer(
        self, transactional_id: str | None, on_delivery: DeliveryCallback
    ) -> TransactionalProducer:
        return _FailingCommit(super().task_producer(transactional_id, on_delivery))  # type: ignore[return-value]


def test_aborted_transaction_leaves_no_records_and_no_offsets(
    plan_factory: Callable[..., tuple[SourceCoordinator, str]],
    bootstrap_servers: str,
    read_committed: Callable[..., list[Any]],
    read_uncommitted: Callable[..., list[Any]],
) -> None:
    coordinator, topic = plan_factory()
    [plan] = coordinator.plan()
    kafka = {"bootstrap.servers": bootstrap_servers}
    live = LiveSourceTask(kafka, plan, clients=FailingCommitClients(kafka))
    with pytest.raises(RuntimeError, match="between producing its offsets and committing"):
        run(live, plan)
    live.close()

    assert len(read_uncommitted(topic)) == PER_BATCH
    assert committed_offsets(read_uncommitted, plan.connector) == [
        ({"generator": plan.connector, "task": 0}, {"position": PER_BATCH})
    ]
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

    result = run_task_once({"bootstrap.servers": bootstrap_servers}, plan)

    assert not plan.exactly_once
    assert (result.records, result.exactly_once) == (PER_BATCH, False)
    assert len(read_committed(topic)) == PER_BATCH
    assert committed_offsets(read_committed, plan.connector)[-1][1] == {"position": PER_BATCH}


def test_at_least_once_mode_fails_and_keeps_the_offset_when_kafka_refuses_a_record(
    plan_factory: Callable[..., tuple[SourceCoordinator, str]],
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    read_committed: Callable[..., list[Any]],
) -> None:
    small = topic_factory("small", config={"max.message.bytes": "1000"})
    coordinator, _ = plan_factory(
        topic=small, **{"exactly.once.source.support": "disabled", "value.size": "5000"}
    )
    [plan] = coordinator.plan()

    with pytest.raises(DeliveryFailedError, match="Kafka refused"):
        run_task_once({"bootstrap.servers": bootstrap_servers}, plan)

    assert committed_offsets(read_committed, plan.connector) == []
    [retry_plan] = coordinator.plan()
    assert retry_plan.committed == []


@pytest.mark.parametrize("internal", ["eosconnect-offsets", "dedicated", "eosconnect-configs"])
def test_records_for_an_internal_topic_fail_the_task_at_once(
    internal: str,
    plan_factory: Callable[..., tuple[SourceCoordinator, str]],
    bootstrap_servers: str,
    read_committed: Callable[..., list[Any]],
    read_uncommitted: Callable[..., list[Any]],
    unique_name: Callable[[str], str],
) -> None:
    dedicated = unique_name("connector-offsets")
    target = dedicated if internal == "dedicated" else internal
    coordinator, _ = plan_factory(topic=target, **{"offsets.storage.topic": dedicated})
    [plan] = coordinator.plan()

    with pytest.raises(InternalTopicError, match=f"produced a record to '{target}'"):
        run_task_once({"bootstrap.servers": bootstrap_servers}, plan)

    def ours(record: Any) -> bool:
        return (record.value or b"").startswith(b"g:") and record.key is not None

    assert committed_offsets(read_committed, plan.connector, dedicated) == []
    assert not [r for r in read_uncommitted(target) if ours(r)]


def test_connector_transactions_stay_open_across_micro_batches_until_the_task_ends_them(
    plan_factory: Callable[..., tuple[SourceCoordinator, str]],
    bootstrap_servers: str,
    read_committed: Callable[..., list[Any]],
) -> None:
    coordinator, topic = plan_factory(
        **{"transaction.boundary": "connector", "transaction.commit.every": "300"}
    )
    [plan] = coordinator.plan()
    live = LiveSourceTask({"bootstrap.servers": bootstrap_servers}, plan)
    try:
        first = run(live, plan, 0)
        # 300 committed; 100 polled records stay in the open transaction.
        assert (first.records, first.transactions, first.open_transaction) == (300, 1, True)
        assert len(read_committed(topic, settled=False)) == 300
        [plan] = coordinator.plan()
        assert live.matches(plan)
        second = run(live, plan, 1)
        assert (second.records, second.transactions, second.open_transaction) == (300, 1, True)
    finally:
        live.close()  # the open transaction (records 600..799) is aborted

    assert generated(read_committed, topic) == Counter(range(600))
    offsets = committed_offsets(read_committed, plan.connector)
    assert [offset for _, offset in offsets] == [{"position": 300}, {"position": 600}]


@pytest.mark.parametrize("per_poll", [7, 0], ids=["record-boundaries", "poll-boundaries"])
def test_scripted_transactions_commit_and_abort_exactly_where_the_task_asks(
    per_poll: int,
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    unique_name: Callable[[str], str],
    read_committed: Callable[..., list[Any]],
    tmp_path: Path,
) -> None:
    """Fibonacci-sized transactions, even sizes aborted: boundaries on the first record, on the
    last record of a micro-batch (commit and abort), several in one poll, and an empty poll
    after the last one; every record polled once, `commit_record` for exactly the committed."""
    total = 232  # 1 + 1 + 2 + ... + 89: the data ends exactly on a boundary
    topic = topic_factory("scripted")
    options = {
        "name": unique_name("scripted"),
        "connector.class": SCRIPTED,
        "topic": topic,
        "records.total": str(total),
        "records.per.poll": str(per_poll),
        "log.dir": str(tmp_path),
        "transaction.boundary": "connector",
        "maxRecordsPerTrigger": "12",  # ends on boundaries 12 (commit) and 20 (abort), too
        "kafka.bootstrap.servers": bootstrap_servers,
    }
    coordinator = SourceCoordinator.open(parse_source_pipeline(options))
    [plan] = coordinator.plan()
    live = LiveSourceTask({"bootstrap.servers": bootstrap_servers}, plan)
    results = []
    try:
        for batch in range(40):
            [plan] = coordinator.plan()
            assert live.matches(plan)
            results.append(run(live, plan, batch))
    finally:
        live.close()

    committed_values = [
        n
        for first, size, committed in fibonacci_transactions(total)
        if committed
        for n in range(first, first + size)
    ]
    in_kafka = read_committed(topic)
    assert [int(r.value) for r in in_kafka] == committed_values
    assert sum(r.records for r in results) == len(committed_values)
    polled = (tmp_path / "polled.log").read_text().split()
    assert Counter(int(v) for v in polled) == Counter(range(total))
    acks = [line.split() for line in (tmp_path / "acks.log").read_text().splitlines()]
    assert [(int(v), t, int(p), int(o)) for v, t, p, o in acks] == [
        (int(r.value), topic, r.partition, r.offset) for r in in_kafka
    ]
    aborted = sum(1 for _, _, committed in fibonacci_transactions(total) if not committed)
    assert sum(r.aborted_transactions for r in results) == aborted
    assert not results[-1].open_transaction


def test_dedicated_offsets_topic_is_primary_and_mirrored_to_the_global_topic(
    plan_factory: Callable[..., tuple[SourceCoordinator, str]],
    bootstrap_servers: str,
    read_committed: Callable[..., list[Any]],
    unique_name: Callable[[str], str],
) -> None:
    dedicated = unique_name("connector-offsets")
    coordinator, _ = plan_factory(**{"offsets.storage.topic": dedicated})
    [plan] = coordinator.plan()

    run_task_once({"bootstrap.servers": bootstrap_servers}, plan)

    def latest(topic: str) -> Any:
        values = [offset for _, offset in committed_offsets(read_committed, plan.connector, topic)]
        return values[-1] if values else None

    assert plan.offsets_topic == dedicated
    assert latest(dedicated) == {"position": PER_BATCH}
    assert latest("eosconnect-offsets") == {"position": PER_BATCH}
    [next_plan] = coordinator.plan()
    assert [offset for _, offset in next_plan.committed] == [{"position": PER_BATCH}]


def test_keyed_records_land_where_a_java_producer_puts_them(
    plan_factory: Callable[..., tuple[SourceCoordinator, str]],
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    read_committed: Callable[..., list[Any]],
) -> None:
    topic = topic_factory("keyed", partitions=3)
    coordinator, _ = plan_factory(topic=topic)
    [plan] = coordinator.plan()

    run_task_once({"bootstrap.servers": bootstrap_servers}, plan)

    records = read_committed(topic)
    assert len(records) == PER_BATCH and all(r.key for r in records)
    assert [r.partition for r in records] == [default_partition(r.key, 3) for r in records]


def test_micro_batches_end_between_two_polls_and_lose_nothing(
    plan_factory: Callable[..., tuple[SourceCoordinator, str]],
    bootstrap_servers: str,
    read_committed: Callable[..., list[Any]],
) -> None:
    """A poll is never split between two transactions: the budget of 400 ends inside the
    third poll of 150, which comes whole."""
    coordinator, topic = plan_factory(**{"records.per.poll": "150"})
    [plan] = coordinator.plan()
    live = LiveSourceTask({"bootstrap.servers": bootstrap_servers}, plan)
    try:
        sizes = []
        for batch in range(3):
            [plan] = coordinator.plan()
            sizes.append(run(live, plan, batch).records)
    finally:
        live.close()

    assert sizes == [450] * 3
    assert generated(read_committed, topic) == Counter(range(3 * 450))


def test_interval_boundaries_cut_transactions_inside_a_micro_batch(
    plan_factory: Callable[..., tuple[SourceCoordinator, str]],
    bootstrap_servers: str,
    read_committed: Callable[..., list[Any]],
) -> None:
    coordinator, topic = plan_factory(
        **{
            "transaction.boundary": "interval",
            "transaction.boundary.interval.ms": "200",
            "rate": "500",  # records/s: a 2 s micro-batch spans about ten intervals
            "records.per.poll": "20",
            "maxRecordsPerTrigger": "100000",
            "maxPollDurationMs": "2000",
        }
    )
    [plan] = coordinator.plan()

    result = run_task_once({"bootstrap.servers": bootstrap_servers}, plan)

    assert result.transactions >= 5
    offsets = committed_offsets(read_committed, plan.connector)
    assert len(offsets) == result.transactions
    positions = [offset["position"] for _, offset in offsets]
    assert positions == sorted(positions) and positions[-1] == result.records
    assert generated(read_committed, topic) == Counter(range(result.records))


def test_a_record_the_producer_refuses_at_once_is_named_like_a_refused_delivery(
    plan_factory: Callable[..., tuple[SourceCoordinator, str]], bootstrap_servers: str
) -> None:
    """With the cluster's metadata at hand a producer may refuse a record in `produce()` (a
    topic it may not write) rather than in its delivery report; the task's error names the
    topic, the reason and the missing ACL either way."""
    coordinator, topic = plan_factory()
    [plan] = coordinator.plan()
    failures = TaskFailures(plan, {"bootstrap.servers": bootstrap_servers})
    refused = KafkaException(
        KafkaError(
            KafkaError.TOPIC_AUTHORIZATION_FAILED,
            "Unable to produce message: Broker: Topic authorization failed",
        )
    )

    error = failures.refused(refused, topic, [])

    assert isinstance(error, DeliveryFailedError)
    assert f"({topic}: Broker: Topic authorization failed)" in str(error)
    assert f"it needs Write on Topic {topic!r}" in str(error)
    assert str(error).endswith("nothing of the transaction was committed")
    coordinator.stop()
