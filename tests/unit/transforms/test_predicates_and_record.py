"""Predicates (alone and with negate in a chain) and the record abstraction."""

from __future__ import annotations

import dataclasses

import pytest

from spark_eos_connect.api.data import Schema
from spark_eos_connect.transforms import ConnectRecord, Header, parse_transform_chain
from spark_eos_connect.transforms.predicates import (
    HasHeaderKey,
    RecordIsTombstone,
    TopicNameMatches,
)


def _predicate(cls: type, **options: str) -> object:
    predicate = cls()
    predicate.configure(options)
    return predicate


def test_topic_name_matches_the_whole_name() -> None:
    predicate = _predicate(TopicNameMatches, pattern="orders-\\d+")
    assert predicate.test(ConnectRecord("orders-12"))
    assert not predicate.test(ConnectRecord("orders-12x"))
    assert not predicate.test(ConnectRecord("xorders-1"))
    assert predicate.test(ConnectRecord("orders-12"))  # from the per-topic memo


def test_has_header_key_and_tombstone() -> None:
    has = _predicate(HasHeaderKey, name="trace")
    assert has.test(ConnectRecord("t", headers=(Header("a", 1), Header("trace", None))))
    assert not has.test(ConnectRecord("t", headers=(Header("traces", 1),)))
    tombstone = _predicate(RecordIsTombstone)
    assert tombstone.test(ConnectRecord("t", key="k", value=None))
    assert not tombstone.test(ConnectRecord("t", value=0))


@pytest.mark.parametrize(
    ("negate", "dropped"),
    [
        (None, {"orders"}),
        ("false", {"orders"}),
        ("true", {"payments", "other"}),
        ("TRUE", {"payments", "other"}),
    ],
)
def test_negate_inverts_the_predicate(negate: str | None, dropped: set[str]) -> None:
    props = {
        "transforms": "drop",
        "transforms.drop.type": "Filter",
        "transforms.drop.predicate": "isOrders",
        "predicates": "isOrders",
        "predicates.isOrders.type": "TopicNameMatches",
        "predicates.isOrders.pattern": "orders",
    }
    if negate is not None:
        props["transforms.drop.negate"] = negate
    chain = parse_transform_chain(props)
    topics = ["orders", "payments", "other"]
    kept = {r.topic for r in chain.apply_all(ConnectRecord(t, value=1) for t in topics)}
    assert set(topics) - kept == dropped


def test_one_predicate_serves_several_transforms() -> None:
    chain = parse_transform_chain(
        {
            "transforms": "a,b",
            "transforms.a.type": "InsertHeader",
            "transforms.a.header": "a",
            "transforms.a.value.literal": "x",
            "transforms.a.predicate": "p",
            "transforms.b.type": "InsertHeader",
            "transforms.b.header": "b",
            "transforms.b.value.literal": "y",
            "transforms.b.predicate": "p",
            "transforms.b.negate": "true",
            "predicates": "p",
            "predicates.p.type": "HasHeaderKey",
            "predicates.p.name": "start",
        }
    )
    with_start = chain.apply(ConnectRecord("t", headers=(Header("start", 1),)))
    without = chain.apply(ConnectRecord("t"))
    assert with_start is not None and [h.key for h in with_start.headers] == ["start", "a"]
    assert without is not None and [h.key for h in without.headers] == ["b"]


def test_record_is_immutable_and_new_record_copies() -> None:
    record = ConnectRecord(
        "t",
        kafka_partition=1,
        key_schema=Schema.STRING,
        key="k",
        value_schema=Schema.INT32,
        value=5,
        timestamp=10,
        headers=[Header("h", "v", Schema.STRING)],  # type: ignore[arg-type]
        kafka_offset=99,
        origin=("source", "offset"),
    )
    assert record.headers == (Header("h", "v", Schema.STRING),)
    assert record.is_sink_record
    with pytest.raises(dataclasses.FrozenInstanceError):
        record.topic = "x"  # type: ignore[misc]
    assert record.new_record() is record
    copy = record.new_record(topic="u", value=None, value_schema=None, headers=[])
    assert (copy.topic, copy.value, copy.value_schema, copy.headers) == ("u", None, None, ())
    assert copy.key == "k" and copy.kafka_offset == 99 and copy.origin == ("source", "offset")
    assert list(record.headers_named("h")) == [Header("h", "v", Schema.STRING)]
    assert record.headers[0].schema_and_value.value == "v"
    assert not ConnectRecord("t").is_sink_record
    # origin is not part of equality: two records with the same content are equal
    assert record == dataclasses.replace(record, origin=None)
