"""Driver-side planning of the Kafka reader: offsets JSON, admission control, ranges, options."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from spark_eos_connect.errors import ConfigError
from spark_eos_connect.sink.kafka_input import (
    KafkaMetadata,
    OffsetRange,
    assign_ranges,
    offsets_from_json,
    offsets_to_json,
    parse_reader_options,
    parse_starting_offsets,
    plan_end_offsets,
    plan_ranges,
    prorate,
)

BOOTSTRAP = {"kafka.bootstrap.servers": "localhost:9092"}


def test_offsets_json_is_sparks_shape_in_a_stable_order() -> None:
    offsets = {("b", 10): 5, ("a", 2): 7, ("b", 2): 1}

    as_json = offsets_to_json(offsets)

    assert json.dumps(as_json) == '{"a": {"2": 7}, "b": {"2": 1, "10": 5}}'
    assert offsets_from_json(json.loads(json.dumps(as_json))) == offsets


@pytest.mark.parametrize("bad", [[], {"t": [1]}, {"t": {"0": "x"}}, {"t": {"0": -3}}])
def test_malformed_offsets_json_is_rejected(bad: object) -> None:
    with pytest.raises(ValueError):
        offsets_from_json(bad)


def test_prorate_shares_the_limit_by_lag_and_never_exceeds_a_lag() -> None:
    lags = {("t", 0): 900, ("t", 1): 90, ("t", 2): 10, ("t", 3): 0}

    shares = prorate(lags, 100)

    assert shares == {("t", 0): 90, ("t", 1): 9, ("t", 2): 1, ("t", 3): 0}
    assert sum(shares.values()) == 100


def test_prorate_gives_leftovers_to_the_largest_remainders_deterministically() -> None:
    lags = {("t", 0): 1, ("t", 1): 1, ("t", 2): 1}

    assert prorate(lags, 2) == {("t", 0): 1, ("t", 1): 1, ("t", 2): 0}
    assert prorate(lags, 2) == prorate(dict(reversed(list(lags.items()))), 2)


def test_prorate_always_makes_progress_with_a_limit_of_one() -> None:
    shares = prorate({("t", 0): 3, ("t", 1): 1000}, 1)

    assert shares == {("t", 0): 0, ("t", 1): 1}


def test_end_offsets_without_limit_are_the_last_stable_offsets() -> None:
    start = {("t", 0): 5, ("t", 1): 0}
    latest = {("t", 0): 50, ("t", 1): 7}

    assert plan_end_offsets(start, latest, None) == latest


def test_end_offsets_with_limit_follow_the_lag() -> None:
    start = {("t", 0): 0, ("t", 1): 100}
    latest = {("t", 0): 300, ("t", 1): 200}

    end = plan_end_offsets(start, latest, 40)

    assert end == {("t", 0): 30, ("t", 1): 110}


def test_new_partitions_start_at_zero_and_vanished_ones_keep_their_offset() -> None:
    start = {("t", 0): 10, ("gone", 0): 4}
    latest = {("t", 0): 12, ("t", 1): 3}

    end = plan_end_offsets(start, latest, None)

    assert end == {("t", 0): 12, ("t", 1): 3, ("gone", 0): 4}
    assert plan_ranges(start, end) == [OffsetRange("t", 0, 10, 12), OffsetRange("t", 1, 0, 3)]


def test_offsets_never_go_back_when_a_partition_shrank() -> None:
    assert plan_end_offsets({("t", 0): 10}, {("t", 0): 4}, 100) == {("t", 0): 10}


def test_ranges_skip_empty_partitions() -> None:
    assert plan_ranges({("t", 0): 5}, {("t", 0): 5}) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("earliest", "earliest"),
        (" LATEST ", "latest"),
        ('{"t":{"0":42,"1":-2}}', {("t", 0): 42, ("t", 1): -2}),
    ],
)
def test_starting_offsets(text: str, expected: object) -> None:
    assert parse_starting_offsets(text) == expected


def test_bad_starting_offsets_name_the_option() -> None:
    with pytest.raises(ConfigError, match="startingOffsets"):
        parse_starting_offsets("beginning")


def test_reader_options_are_case_insensitive_and_ignore_sink_options() -> None:
    config = parse_reader_options(
        {
            "topics": "a, b",
            "name": "orders",
            "maxRecordsPerTrigger": "10",
            "connector.class": "FileStreamSink",
            "file": "/tmp/x",
            **BOOTSTRAP,
        }
    )

    assert config.topics == ("a", "b")
    assert config.group_id == "connect-orders"
    assert config.max_records_per_trigger == 10
    assert config.starting_offsets == "earliest"
    assert config.kafka == {"bootstrap.servers": "localhost:9092"}


def test_topics_regex_matches_whole_names_and_skips_internal_topics() -> None:
    config = parse_reader_options({"topics.regex": "orders-.*", **BOOTSTRAP})

    assert config.subscribed("orders-eu")
    assert not config.subscribed("my-orders-eu")
    assert not parse_reader_options({"topics.regex": ".*", **BOOTSTRAP}).subscribed("__x")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"topics": "a", "topics.regex": "b", **BOOTSTRAP}, "exactly one of"),
        ({**BOOTSTRAP}, "exactly one of"),
        ({"topics": "a"}, "kafka.bootstrap.servers"),
        ({"topics": "a", "kafka.group.id": "g", **BOOTSTRAP}, "kafka.group.id"),
        ({"topics": "a", "kafka.isolation.level": "read_uncommitted", **BOOTSTRAP}, "read_co"),
        ({"topics.regex": "(", **BOOTSTRAP}, "topics.regex"),
        ({"topics": "a", "maxRecordsPerTrigger": "0", **BOOTSTRAP}, "maxRecordsPerTrigger"),
    ],
)
def test_bad_reader_options_say_what_is_wrong(options: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_reader_options(options)


def test_sink_tasks_get_the_partitions_in_turn_with_their_ranges() -> None:
    partitions = [("b", 0), ("a", 1), ("a", 0), ("b", 1)]
    ranges = [OffsetRange("a", 0, 0, 5), OffsetRange("a", 1, 2, 3), OffsetRange("b", 1, 0, 1)]

    tasks = assign_ranges(partitions, ranges, 2)

    # sorted a-0, a-1, b-0, b-1 dealt to tasks 0, 1, 0, 1; b-0 has no records this batch
    assert tasks == [
        (OffsetRange("a", 0, 0, 5),),
        (OffsetRange("a", 1, 2, 3), OffsetRange("b", 1, 0, 1)),
    ]


def test_sink_tasks_are_at_most_one_per_partition_and_may_have_nothing_to_read() -> None:
    ranges = [OffsetRange("a", 1, 0, 2)]

    assert assign_ranges([("a", 0), ("a", 1)], ranges, 8) == [(), (OffsetRange("a", 1, 0, 2),)]
    assert assign_ranges([("a", 0), ("a", 1)], ranges, 1) == [(OffsetRange("a", 1, 0, 2),)]
    assert assign_ranges([], [], 3) == []


class ListingAdmin:
    """An AdminClient whose cluster holds `topics` (name to partition count)."""

    def __init__(self, topics: dict[str, int]) -> None:
        self.topics = topics
        self.described: list[list[str]] = []

    def list_topics(self, timeout: float) -> object:
        listed = {
            name: SimpleNamespace(error=None, partitions=dict.fromkeys(range(count)))
            for name, count in self.topics.items()
        }
        return SimpleNamespace(topics=listed)

    def describe_topics(self, topics: object, request_timeout: float) -> dict[str, object]:
        self.described.append(list(getattr(topics, "topic_names", [])))
        return {}


def metadata_listing(topics: dict[str, int]) -> tuple[KafkaMetadata, ListingAdmin]:
    admin = ListingAdmin(topics)
    metadata = KafkaMetadata({"bootstrap.servers": "127.0.0.1:1"}, timeout_s=5, admin=admin)
    return metadata, admin


def test_partitions_of_named_topics_ask_about_the_missing_ones_by_name() -> None:
    metadata, admin = metadata_listing({"a": 2, "b": 1, "other": 3})
    config = parse_reader_options({**BOOTSTRAP, "topics": "a,b,gone"})

    assert metadata.partitions(config) == [("a", 0), ("a", 1), ("b", 0)]
    assert admin.described == [["gone"]]


def test_partitions_of_a_pattern_skip_internal_topics_and_ask_about_none() -> None:
    metadata, admin = metadata_listing({"t1": 1, "t2": 2, "__consumer_offsets": 1, "u": 1})
    config = parse_reader_options({**BOOTSTRAP, "topics.regex": "t.*|__.*"})

    assert metadata.partitions(config) == [("t1", 0), ("t2", 0), ("t2", 1)]
    assert admin.described == []
