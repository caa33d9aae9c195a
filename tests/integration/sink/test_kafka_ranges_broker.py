"""The Kafka reader's building blocks against the real broker (no Spark): last stable offsets,
ranges over transactions, and where a new query starts."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from spark_eos_connect.kafka.group_offsets import KafkaGroupOffsets
from spark_eos_connect.kafka.range_reader import RangeReader
from spark_eos_connect.sink.kafka_input import (
    KafkaMetadata,
    OffsetRange,
    parse_reader_options,
    read_range,
    read_ranges,
)

pytestmark = pytest.mark.integration


def values(batches: Any) -> list[tuple[int, bytes]]:
    rows = [row for batch in batches for row in batch.to_pylist()]
    return [(row["offset"], row["value"]) for row in rows]


def test_ranges_hold_only_committed_records_and_replay_identically(
    kafka_config: dict[str, Any],
    topic_factory: Callable[..., str],
    produce: Callable[..., None],
) -> None:
    topic = topic_factory("ranges")
    produce(topic, [(0, None, b"c0"), (0, None, b"c1")])  # offsets 0-1, marker 2
    produce(topic, [(0, None, b"a0"), (0, None, b"a1")], abort=True)  # 3-4, marker 5
    produce(topic, [(0, None, b"c2")])  # 6, marker 7
    metadata = KafkaMetadata(kafka_config)

    end = metadata.last_stable_offsets([(topic, 0)])[(topic, 0)]

    assert end == 8
    whole = OffsetRange(topic, 0, 0, end)
    assert values(read_range(kafka_config, whole)) == [(0, b"c0"), (1, b"c1"), (6, b"c2")]
    assert values(read_range(kafka_config, whole)) == [(0, b"c0"), (1, b"c1"), (6, b"c2")]
    # admission control may end a range anywhere: inside an aborted transaction, on a marker
    assert values(read_range(kafka_config, OffsetRange(topic, 0, 0, 1))) == [(0, b"c0")]
    assert values(read_range(kafka_config, OffsetRange(topic, 0, 1, 4))) == [(1, b"c1")]
    assert values(read_range(kafka_config, OffsetRange(topic, 0, 4, 7))) == [(6, b"c2")]


def test_one_consumer_reads_several_ranges_each_with_its_own_records(
    kafka_config: dict[str, Any],
    topic_factory: Callable[..., str],
    produce: Callable[..., None],
) -> None:
    topic = topic_factory("several", partitions=2)
    produce(topic, [(p, None, f"p{p}-{i}".encode()) for p in (0, 1) for i in range(500)])
    # ranges ending before their partition's end: the consumer fetches past them
    ranges = [
        OffsetRange(topic, 1, 10, 20),
        OffsetRange(topic, 0, 5, 300),
        OffsetRange(topic, 1, 0, 3),
    ]

    batches = list(read_ranges(kafka_config, ranges, batch_rows=7))

    rows = [row for batch in batches for row in batch.to_pylist()]
    # the first two ranges (distinct partitions) are read together, interleaved; partition 1's
    # second range comes after them
    first_two = [(row["partition"], row["offset"]) for row in rows[: 10 + 295]]
    assert sorted(first_two) == [
        (r.partition, o) for r in ranges[1::-1] for o in range(r.start, r.end)
    ]
    for partition in (0, 1):
        offsets = [o for p, o in first_two if p == partition]
        assert offsets == sorted(offsets)
    assert [(row["partition"], row["offset"]) for row in rows[305:]] == [(1, 0), (1, 1), (1, 2)]
    assert all(row["value"] == f"p{row['partition']}-{row['offset']}".encode() for row in rows)
    assert all(len(set(batch.column("partition").to_pylist())) == 1 for batch in batches)


def test_a_kept_consumer_continues_contiguous_ranges_with_what_it_fetched_ahead(
    kafka_config: dict[str, Any],
    topic_factory: Callable[..., str],
    produce: Callable[..., None],
) -> None:
    topic = topic_factory("continued")
    produce(topic, [(0, None, f"c{i}".encode()) for i in range(300)])  # 0-299, marker 300
    produce(topic, [(0, None, b"aborted")] * 5, abort=True)  # 301-305, marker 306
    produce(topic, [(0, None, f"c{i}".encode()) for i in range(300, 400)])  # 307-406, 407
    reader = RangeReader(kafka_config, batch_rows=16)  # 16-record polls: each range overshoots
    # micro-batches continuing each other, ending anywhere (inside the aborted transaction,
    # on a marker), then a rewind and a continuation of the rewind
    ranges = [(0, 50), (50, 51), (51, 303), (303, 306), (306, 350), (350, 408), (40, 60), (60, 70)]

    read = [
        [
            (row["offset"], row["value"])
            for batch in reader.read([OffsetRange(topic, 0, *r)])
            for row in batch.to_pylist()
        ]
        for r in ranges
    ]
    produce(topic, [(0, None, b"later")])  # 408, marker 409: after the consumer read ahead
    read.append(
        [
            (row["offset"], row["value"])
            for batch in reader.read([OffsetRange(topic, 0, 70, 410)])
            for row in batch.to_pylist()
        ]
    )
    reader.close()

    def committed(start: int, end: int) -> list[tuple[int, bytes]]:
        numbered = [(o, f"c{o}".encode()) for o in range(300)]
        numbered += [(o, f"c{o - 7}".encode()) for o in range(307, 407)]
        return [(o, v) for o, v in numbered if start <= o < end]

    expected = [committed(*r) for r in ranges] + [[*committed(70, 410), (408, b"later")]]
    assert read == expected


def test_a_kept_consumer_reads_several_partitions_together_batch_after_batch(
    kafka_config: dict[str, Any],
    topic_factory: Callable[..., str],
    produce: Callable[..., None],
) -> None:
    """A live sink task's reads: its partitions read at once, micro-batch after micro-batch,
    ranges ending at the log's end or short of it (records fetched past them held, a
    partition paused while it holds `batch_rows` of them), a rewind of one partition, a read
    left unfinished, and a partition forgotten and read again."""
    topic = topic_factory("together", partitions=3)
    produce(topic, [(p, None, f"p{p}-{i}".encode()) for p in (0, 1, 2) for i in range(400)])
    reader = RangeReader(kafka_config, batch_rows=16)

    def read(*ranges: tuple[int, int, int]) -> dict[int, list[int]]:
        found: dict[int, list[int]] = {}
        for batch in reader.read([OffsetRange(topic, *r) for r in ranges]):
            for row in batch.to_pylist():
                assert row["value"] == f"p{row['partition']}-{row['offset']}".encode()
                found.setdefault(row["partition"], []).append(row["offset"])
        return found

    def numbered(*ranges: tuple[int, int, int]) -> dict[int, list[int]]:
        return {p: list(range(start, end)) for p, start, end in ranges if end > start}

    batches = [
        ((0, 0, 10), (1, 0, 300), (2, 0, 5)),  # 0 and 2 end early and hold what comes on
        ((0, 10, 400), (1, 300, 400), (2, 5, 6)),  # continued; 0 and 1 to the log's end
        ((0, 400, 400), (1, 400, 400), (2, 6, 200)),  # nothing new but on 2
        ((0, 100, 150), (2, 200, 210)),  # 0 rewound, 2 continued
        ((0, 150, 160), (1, 0, 3), (2, 210, 400)),  # 1 rewound to its start
    ]
    for ranges in batches:
        assert read(*ranges) == numbered(*ranges)

    unfinished = reader.read([OffsetRange(topic, 0, 160, 400), OffsetRange(topic, 1, 3, 400)])
    next(unfinished)
    unfinished.close()  # a put that moved a partition: the read is left
    assert read((0, 160, 170), (1, 3, 5)) == numbered((0, 160, 170), (1, 3, 5))
    reader.forget([(topic, 2)])
    assert read((2, 0, 4)) == numbered((2, 0, 4))
    with pytest.raises(ValueError, match="one range per partition"):
        list(reader.read([OffsetRange(topic, 0, 0, 1), OffsetRange(topic, 0, 1, 2)]))
    reader.close()


def test_open_transactions_stay_out_of_planned_ranges(
    kafka_config: dict[str, Any],
    topic_factory: Callable[..., str],
    produce: Callable[..., None],
) -> None:
    from confluent_kafka import Producer

    topic = topic_factory("open")
    produce(topic, [(0, None, b"done")])
    open_producer = Producer({**kafka_config, "transactional.id": f"open-{topic}"})
    open_producer.init_transactions(30)
    open_producer.begin_transaction()
    open_producer.produce(topic, b"pending", partition=0)
    open_producer.flush(30)
    try:
        end = KafkaMetadata(kafka_config).last_stable_offsets([(topic, 0)])[(topic, 0)]

        assert end == 2
        assert values(read_range(kafka_config, OffsetRange(topic, 0, 0, end))) == [(0, b"done")]
    finally:
        open_producer.abort_transaction(30)


def test_a_new_query_starts_from_the_group_else_from_starting_offsets(
    kafka_config: dict[str, Any],
    topic_factory: Callable[..., str],
    produce: Callable[..., None],
    unique_name: Callable[[str], str],
) -> None:
    topic = topic_factory("start", partitions=2)
    produce(topic, [(0, None, b"x"), (0, None, b"y"), (1, None, b"z")])
    name = unique_name("start")
    metadata = KafkaMetadata(kafka_config)
    options = {"topics": topic, "name": name, "kafka.bootstrap.servers": "unused"}
    config = parse_reader_options(options)
    kafka_less = {**options, "startingOffsets": "latest"}

    assert metadata.initial_offsets(config) == {(topic, 0): 0, (topic, 1): 0}
    assert metadata.initial_offsets(parse_reader_options(kafka_less)) == {
        (topic, 0): 3,
        (topic, 1): 2,
    }
    explicit = {**options, "startingOffsets": f'{{"{topic}":{{"0":1}}}}'}
    assert metadata.initial_offsets(parse_reader_options(explicit)) == {
        (topic, 0): 1,
        (topic, 1): 0,
    }

    groups = KafkaGroupOffsets(kafka_config)
    groups.commit(f"connect-{name}", {(topic, 1): 1})

    assert groups.committed(f"connect-{name}") == {(topic, 1): 1}
    assert metadata.initial_offsets(parse_reader_options(kafka_less)) == {
        (topic, 0): 3,
        (topic, 1): 1,
    }
