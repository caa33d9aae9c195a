"""The topic-only head of a chain over an Arrow batch gives what the chain gives per record."""

from __future__ import annotations

import random

import pyarrow as pa
import pytest

from spark_eos_connect.transforms import ConnectRecord, parse_transform_chain
from spark_eos_connect.transforms.arrow import split_topic_stages

PROPS = {
    "transforms": "dropTmp,route,keepOrders,stamp,late",
    "transforms.dropTmp.type": "Filter",
    "transforms.dropTmp.predicate": "isTmp",
    "transforms.route.type": "RegexRouter",
    "transforms.route.regex": "(.*)-raw",
    "transforms.route.replacement": "$1",
    "transforms.keepOrders.type": "Filter",
    "transforms.keepOrders.predicate": "isOrders",
    "transforms.keepOrders.negate": "true",
    "transforms.stamp.type": "InsertHeader",
    "transforms.stamp.header": "h",
    "transforms.stamp.value.literal": "1",
    "transforms.late.type": "RegexRouter",
    "transforms.late.regex": "orders.*",
    "transforms.late.replacement": "late",
    "predicates": "isTmp,isOrders",
    "predicates.isTmp.type": "TopicNameMatches",
    "predicates.isTmp.pattern": "tmp.*",
    "predicates.isOrders.type": "TopicNameMatches",
    "predicates.isOrders.pattern": "orders.*",
}


def test_head_stops_at_the_first_stage_that_needs_the_record() -> None:
    head, rest = split_topic_stages(parse_transform_chain(PROPS))
    assert [s.alias for s in head.stages] == ["dropTmp", "route", "keepOrders"]
    assert rest.aliases == ["stamp", "late"]
    tombstones = parse_transform_chain(
        {
            "transforms": "f",
            "transforms.f.type": "Filter",
            "transforms.f.predicate": "t",
            "predicates": "t",
            "predicates.t.type": "RecordIsTombstone",
        }
    )
    head, rest = split_topic_stages(tombstones)
    assert not head and rest.aliases == ["f"]


def test_batch_head_then_records_equals_the_chain_per_record() -> None:
    rng = random.Random(7)
    names = ["orders-raw", "orders", "orders-eu-raw", "tmp-1", "payments-raw", "other", None]
    topics = [rng.choice(names) for _ in range(2000)]
    batch = pa.record_batch(
        {"topic": pa.array(topics, pa.string()), "offset": pa.array(range(len(topics)), pa.int64())}
    )
    chain = parse_transform_chain(PROPS)
    expected = chain.apply_all(
        ConnectRecord(t if t is not None else "", value=i) for i, t in enumerate(topics) if t
    )
    head, rest = split_topic_stages(chain)
    reduced = head.apply(batch)
    assert reduced.num_rows < batch.num_rows
    records = [
        ConnectRecord(t, value=o)
        for t, o in zip(
            reduced.column("topic").to_pylist(), reduced.column("offset").to_pylist(), strict=True
        )
        if t is not None
    ]
    assert rest.apply_all(records) == expected
    assert None in reduced.column("topic").to_pylist()  # null topics pass through untouched


def test_empty_head_and_missing_column() -> None:
    batch = pa.record_batch({"topic": pa.array(["a"])})
    head, _ = split_topic_stages(parse_transform_chain({}))
    assert head.apply(batch) is batch
    head, _ = split_topic_stages(
        parse_transform_chain({"transforms": "f", "transforms.f.type": "Filter"})
    )
    assert head.apply(batch).num_rows == 0
    with pytest.raises(KeyError, match="no 'name' column"):
        head.apply(batch, column="name")
