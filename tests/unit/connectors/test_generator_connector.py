"""Generator source: determinism, resume from offsets, limits, rate, transaction boundaries."""

from __future__ import annotations

from typing import Any

import pytest

from spark_eos_connect.api import (
    ConnectorTransactionBoundaries,
    ExactlyOnceSupport,
    InMemoryOffsetStorageReader,
    SourceRecord,
    SourceTaskContext,
    TransactionContext,
)
from spark_eos_connect.connectors.generator import (
    GeneratorSourceConnector,
    GeneratorSourceTask,
    expected_records,
    generated_key,
    generated_value,
    parse_generated_value,
)
from spark_eos_connect.errors import ConfigError, EosConnectError


def make_task(
    props: dict[str, str] | None = None,
    reader: InMemoryOffsetStorageReader | None = None,
    transactions: TransactionContext | None = None,
    task_id: int = 0,
) -> GeneratorSourceTask:
    full = {"topic": "gen", "records.per.poll": "100", **(props or {})}
    task = GeneratorSourceTask()
    task.initialize(
        SourceTaskContext(
            full,
            reader or InMemoryOffsetStorageReader(),
            transactions,
            task_id=task_id,
            connector_name="demo",
        )
    )
    task.start(full)
    return task


def pairs(records: list[SourceRecord]) -> list[tuple[Any, Any]]:
    return [(r.key, r.value) for r in records]


def test_records_match_expected_records_and_parse_back() -> None:
    records = make_task().poll()
    assert records is not None and len(records) == 100
    assert pairs(records) == expected_records(42, 0, 0, 100)
    for n, record in enumerate(records):
        assert isinstance(record.value, bytes)
        assert parse_generated_value(record.value) == (0, n)
        assert len(record.value) == len(b"g:0:%d:" % n) + 100
        assert record.source_partition == {"generator": "demo", "task": 0}
        assert record.source_offset == {"position": n + 1}
        assert record.topic == "gen"
        assert record.partition is None and record.timestamp is None


def test_same_seed_same_records_and_different_seed_or_task_differs() -> None:
    first = pairs(make_task().poll() or [])
    assert pairs(make_task().poll() or []) == first
    other_seed = pairs(make_task({"seed": "7"}).poll() or [])
    assert [k for k, _ in other_seed] != [k for k, _ in first]
    other_task = make_task({"generator.task": "1"}).poll() or []
    assert [k for k, _ in pairs(other_task)] != [k for k, _ in first]
    assert parse_generated_value(other_task[5].value or b"") == (1, 5)


def test_resume_from_any_position_reproduces_the_same_records() -> None:
    reference = make_task().poll() or []
    for position in (1, 37, 99):
        reader = InMemoryOffsetStorageReader(
            [({"generator": "demo", "task": 0}, {"position": position})]
        )
        resumed = make_task(reader=reader).poll() or []
        assert pairs(resumed[: 100 - position]) == pairs(reference[position:])
        assert resumed[0].source_offset == {"position": position + 1}


def test_consecutive_polls_continue_the_stream() -> None:
    task = make_task()
    records = (task.poll() or []) + (task.poll() or [])
    assert pairs(records) == expected_records(42, 0, 0, 200)
    assert task.position == 200


def test_keys_stay_in_key_space_and_cover_it() -> None:
    records = make_task({"key.space": "10", "records.per.poll": "1000"}).poll() or []
    keys = {r.key for r in records}
    assert keys == {f"k{i}" for i in range(10)}


def test_large_key_space_uses_same_keys_as_generated_key() -> None:
    records = make_task({"key.space": str(10**9)}).poll() or []
    assert [r.key for r in records] == [generated_key(42, 0, n, 10**9) for n in range(100)]


@pytest.mark.parametrize("key_space", [1, 7, 1000, 1 << 16, (1 << 16) + 1, 10**9, 2**63 - 1])
@pytest.mark.parametrize("position", [0, 2**32 - 3, 2**63 - 40, 2**64 - 40, 2**70])
def test_keys_and_values_match_the_reference_at_any_position(key_space: int, position: int) -> None:
    # Far positions make (base + n) * golden cross 2**64 and exercise the 64-bit wrap-around.
    reader = InMemoryOffsetStorageReader(
        [({"generator": "demo", "task": 2}, {"position": position})]
    )
    task = make_task(
        {"key.space": str(key_space), "records.per.poll": "50", "generator.task": "2", "seed": "5"},
        reader,
    )
    records = (task.poll() or []) + (task.poll() or [])
    assert pairs(records) == expected_records(5, 2, position, 100, key_space)
    assert [r.source_offset for r in records] == [
        {"position": position + i + 1} for i in range(100)
    ]


def test_poll_size_does_not_change_the_stream() -> None:
    props = {"key.space": "123", "value.size": "17", "max.records": "1000"}
    streams = []
    for per_poll in ("1", "7", "1000", "5000"):
        task = make_task({**props, "records.per.poll": per_poll})
        records: list[SourceRecord] = []
        while (batch := task.poll()) is not None:
            records.extend(batch)
        streams.append([(r.key, r.value, r.source_offset) for r in records])
    assert all(stream == streams[0] for stream in streams)
    assert [(k, v) for k, v, _ in streams[0]] == expected_records(42, 0, 0, 1000, 123, 17)


@pytest.mark.parametrize("value_size", [0, 1, 61, 62, 63, 1000])
def test_values_for_any_padding_size_and_seed(value_size: int) -> None:
    for seed in (0, 61, -3):
        task = make_task({"value.size": str(value_size), "seed": str(seed)})
        records = task.poll() or []
        assert [r.value for r in records] == [
            generated_value(seed, 0, n, value_size) for n in range(100)
        ]


def test_records_of_one_poll_share_one_partition() -> None:
    records = make_task().poll() or []
    assert len({id(r.source_partition) for r in records}) == 1
    assert records[0].source_partition == {"generator": "demo", "task": 0}


def test_value_size_and_padding() -> None:
    records = make_task({"value.size": "0"}).poll() or []
    assert records[3].value == b"g:0:3:"
    assert generated_value(1, 2, 3, 5) == b"g:2:3:" + generated_value(1, 0, 0, 5)[6:]


def test_max_records_then_none() -> None:
    task = make_task({"max.records": "250"})
    sizes = []
    while (batch := task.poll()) is not None:
        sizes.append(len(batch))
    assert sizes == [100, 100, 50]
    assert task.poll() is None


def test_max_records_counts_from_stored_position() -> None:
    reader = InMemoryOffsetStorageReader([({"generator": "demo", "task": 0}, {"position": 240})])
    task = make_task({"max.records": "250"}, reader)
    assert len(task.poll() or []) == 10
    assert task.poll() is None


def test_stop_ends_the_stream() -> None:
    task = make_task()
    task.stop()
    assert task.poll() is None


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def rate_task(rate: str, per_poll: str = "100") -> tuple[GeneratorSourceTask, FakeClock]:
    clock = FakeClock()
    task = GeneratorSourceTask()
    task.clock = clock
    task.sleep = clock.sleep
    props = {"topic": "gen", "rate": rate, "records.per.poll": per_poll}
    task.initialize(SourceTaskContext(props, InMemoryOffsetStorageReader()))
    task.start(props)
    return task, clock


def test_rate_limit_returns_what_is_due() -> None:
    task, clock = rate_task("50")
    # Nothing due at start: sleeps until the first record (20 ms), never more than 100 ms.
    assert len(task.poll() or []) == 1
    assert clock.sleeps == [pytest.approx(0.02)]
    clock.now += 1.0
    assert len(task.poll() or []) == 50
    clock.now += 0.5
    assert len(task.poll() or []) == 25


def test_slow_rate_sleeps_at_most_100ms_and_may_return_empty() -> None:
    task, clock = rate_task("1")
    assert task.poll() == []
    assert clock.sleeps == [0.1]
    clock.now += 0.9
    assert len(task.poll() or []) == 1


def test_rate_does_not_bank_bursts_beyond_one_poll() -> None:
    task, clock = rate_task("100", per_poll="10")
    clock.now += 60
    assert len(task.poll() or []) == 10
    # The idle minute is forgotten, not paid back: the next record is due 10 ms later.
    assert len(task.poll() or []) == 1
    assert clock.sleeps == [pytest.approx(0.01)]
    clock.now += 0.05
    assert len(task.poll() or []) == 5


def test_commit_every_requests_record_boundaries() -> None:
    transactions = TransactionContext()
    task = make_task({"transaction.commit.every": "30"}, transactions=transactions)
    records = task.poll() or []
    commits = [r.source_offset for r in records if transactions.should_commit_on(r)]
    assert commits == [{"position": 30}, {"position": 60}, {"position": 90}]
    records = task.poll() or []
    commits = [r.source_offset for r in records if transactions.should_commit_on(r)]
    assert commits == [{"position": 120}, {"position": 150}, {"position": 180}]
    assert not transactions.has_pending_requests()


def test_commit_every_without_transaction_context_is_ignored() -> None:
    assert len(make_task({"transaction.commit.every": "5"}).poll() or []) == 100


def test_parse_generated_value_rejects_other_values() -> None:
    assert parse_generated_value("g:3:9:pad") == (3, 9)
    with pytest.raises(ValueError):
        parse_generated_value(b"hello")


def test_bad_stored_offset_fails() -> None:
    reader = InMemoryOffsetStorageReader([({"generator": "demo", "task": 0}, {"position": -5})])
    with pytest.raises(EosConnectError, match="not"):
        make_task(reader=reader)


def test_connector_task_configs_give_each_task_its_stream() -> None:
    connector = GeneratorSourceConnector()
    props = {"name": "orders", "topic": "gen", "tasks.max": "3"}
    connector.start(props)
    configs = connector.task_configs(3)
    assert [c["generator.task"] for c in configs] == ["0", "1", "2"]
    assert {c["generator.id"] for c in configs} == {"orders"}
    assert connector.task_class() is GeneratorSourceTask
    streams = []
    for config in configs:
        task = GeneratorSourceTask()
        task.initialize(SourceTaskContext(config, InMemoryOffsetStorageReader()))
        task.start(config)
        streams.append(task.poll() or [])
        assert task.source_partition == {
            "generator": "orders",
            "task": int(config["generator.task"]),
        }
    assert [parse_generated_value(s[0].value or b"")[0] for s in streams] == [0, 1, 2]


def test_generator_id_falls_back_to_seed() -> None:
    connector = GeneratorSourceConnector()
    connector.start({"topic": "gen", "seed": "9"})
    assert connector.task_configs(1)[0]["generator.id"] == "seed-9"


def test_connector_declares_exactly_once_and_boundaries() -> None:
    connector = GeneratorSourceConnector()
    assert connector.exactly_once_support({}) is ExactlyOnceSupport.SUPPORTED
    assert (
        connector.can_define_transaction_boundaries({}) is ConnectorTransactionBoundaries.SUPPORTED
    )


@pytest.mark.parametrize(
    "props",
    [
        {},
        {"topic": "t", "key.space": "0"},
        {"topic": "t", "rate": "-1"},
        {"topic": "t", "seed": "x"},
    ],
)
def test_connector_rejects_bad_options(props: dict[str, str]) -> None:
    with pytest.raises(ConfigError):
        GeneratorSourceConnector().start(props)


def test_alter_offsets_checks_shapes() -> None:
    connector = GeneratorSourceConnector()
    good = {"generator": "g", "task": 0}
    assert connector.alter_offsets({}, [(good, {"position": 3}), ({"x": 1}, None)]) is True
    bad: list[tuple[dict[str, Any], dict[str, Any]]] = [
        ({"generator": "g"}, {"position": 3}),
        ({"generator": 1, "task": 0}, {"position": 3}),
        (good, {"position": -1}),
        (good, {"position": "3"}),
        (good, {"pos": 3}),
    ]
    for partition, offset in bad:
        with pytest.raises(ConfigError):
            connector.alter_offsets({}, [(partition, offset)])
