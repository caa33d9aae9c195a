"""Differential tests against Connect: routers, Filter, header SMTs, predicates and chains."""

from __future__ import annotations

from typing import Any

import pytest

T = "org.apache.kafka.connect.transforms."
P = "org.apache.kafka.connect.transforms.predicates."


def _one(alias: str, type_: str, **options: str) -> dict[str, str]:
    config = {"transforms": alias, f"transforms.{alias}.type": type_}
    config.update({f"transforms.{alias}.{k.replace('_', '.')}": v for k, v in options.items()})
    return config


@pytest.mark.parametrize(
    ("regex", "replacement", "topic"),
    [
        ("(.*)-raw", "$1-clean", "orders-raw"),
        ("(.*)-raw", "$1-clean", "orders"),
        ("orders", "all-orders", "orders"),
        ("(?<base>[a-z]+)\\.(\\d+)", "${base}_$2", "events.12"),
        ("(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)(k)", "$11-$10-$1", "abcdefghijk"),
        ("(a)(b)", "$12", "ab"),
        ("a|ab", "X", "ab"),
        ("(x)?y", "[$1]", "y"),
        ("(.*)", "\\$1 \\\\ $1", "t"),
        ("\\p{Lower}+", "lower", "abc"),
        ("\\QA.B\\E", "dot", "A.B"),
        ("\\QA.B\\E", "dot", "AxB"),
    ],
)
def test_regex_router(
    differential: Any, samples: Any, regex: str, replacement: str, topic: str
) -> None:
    config = _one("route", "RegexRouter", regex=regex, replacement=replacement)
    for value in (samples.order(), samples.schemaless(), None):
        differential.check(config, samples.record(value, topic=topic))


@pytest.mark.parametrize(
    ("topic_format", "timestamp_format"),
    [
        (None, None),
        ("${topic}_${timestamp}", "yyyy-MM-dd'T'HH"),
        ("${timestamp}/${topic}/${topic}", "EEE d MMM yy, h:mm:ss.SSS a z Z X"),
        ("${topic}-${timestamp}", "D w W F u E G k K S SSSS"),
        ("${topic}-${timestamp}", "'quoted ''text'' 'yyyy"),
    ],
)
def test_timestamp_router(
    differential: Any, samples: Any, topic_format: str | None, timestamp_format: str | None
) -> None:
    options = {}
    if topic_format is not None:
        options["topic.format"] = topic_format
    if timestamp_format is not None:
        options["timestamp.format"] = timestamp_format
    config = {"transforms": "r", "transforms.r.type": T + "TimestampRouter"}
    config.update({f"transforms.r.{k}": v for k, v in options.items()})
    for stamp in (0, 1700000000123, 1704067199999, 1735603200000, -86400001, 253402300799999):
        differential.check(config, samples.record(samples.order(), timestamp=stamp))
    differential.check(config, samples.record(samples.order(), timestamp=None))


def test_filter_alone_drops_everything(differential: Any, samples: Any) -> None:
    config = _one("drop", T + "Filter")
    differential.check(config, samples.record(samples.order()))
    differential.check(config, samples.record(None))


_HEADERS = [
    {"key": "trace", "value": {"schema": {"type": "string", "optional": False}, "payload": "t-1"}},
    {"key": "n", "value": {"schema": {"type": "int32", "optional": False}, "payload": 7}},
    {"key": "trace", "value": None},
    {"key": "map", "value": {"schema": None, "payload": {"b": 1, "a": [True, None]}}},
]


@pytest.mark.parametrize("operation", ["copy", "move"])
@pytest.mark.parametrize("side", ["Key", "Value"])
def test_header_from(differential: Any, samples: Any, operation: str, side: str) -> None:
    config = {
        "transforms": "hf",
        "transforms.hf.type": f"{T}HeaderFrom${side}",
        "transforms.hf.fields": "id,address,tags,none,qty",
        "transforms.hf.headers": "h_id,h_address,h_tags,h_none,h_qty",
        "transforms.hf.operation": operation,
    }
    schemaless_config = {
        **config,
        "transforms.hf.fields": "id,nested,tags,none,missing",
        "transforms.hf.headers": "h_id,h_nested,h_tags,h_none,h_missing",
    }
    schema_config = {
        **config,
        "transforms.hf.fields": "id,address,tags,qty,name",
        "transforms.hf.headers": "h_id,h_address,h_tags,h_qty,h_id",
    }
    for value, cfg in ((samples.order(), schema_config), (samples.schemaless(), schemaless_config)):
        if side == "Key":
            record = samples.record(samples.string_key(), key=value, headers=_HEADERS)
        else:
            record = samples.record(value, key=samples.string_key(), headers=_HEADERS)
        differential.check(cfg, record)
    # A null value: Connect fails (there is no map or struct to read from).
    differential.check(schemaless_config, samples.record(None, headers=_HEADERS))
    # A field the schema lacks fails in both.
    differential.check(
        {**schema_config, "transforms.hf.fields": "id,nope,tags,qty,name"},
        samples.record(samples.order(), key=samples.order()),
    )


@pytest.mark.parametrize(
    "literal",
    [
        "hello",
        "42",
        "300",
        "70000",
        "9000000000",
        "12345678901234567890123",
        "-1.5",
        "0.1",
        "1e3",
        "1.5e300",
        "true",
        "false",
        "null",
        "2023-11-14",
        "22:13:20.123Z",
        "2023-11-14T22:13:20.123Z",
        "[1, 2, 3]",
        "[1, 2.5]",
        '["a", "b"]',
        "[1, a]",
        '{"a": 1, "b": 2}',
        "{1: true, 2: false}",
        "true}",
        "  spaced  ",
        "a,b",
        "with: colon",
    ],
)
def test_insert_header(differential: Any, samples: Any, literal: str) -> None:
    config = _one("ih", T + "InsertHeader", header="added", value_literal=literal)
    differential.check(config, samples.record(samples.order(), headers=_HEADERS))


def test_drop_headers(differential: Any, samples: Any) -> None:
    config = _one("dh", T + "DropHeaders", headers="trace,map,absent")
    differential.check(config, samples.record(samples.order(), headers=_HEADERS))
    differential.check(config, samples.record(samples.schemaless(), headers=[]))


@pytest.mark.parametrize("negate", [None, "false", "true"])
@pytest.mark.parametrize(
    ("predicate_type", "predicate_options"),
    [
        ("TopicNameMatches", {"pattern": "ord.*"}),
        (P + "TopicNameMatches", {"pattern": "nomatch|x+"}),
        ("HasHeaderKey", {"name": "trace"}),
        (P + "HasHeaderKey", {"name": "missing"}),
        ("RecordIsTombstone", {}),
    ],
)
def test_predicates_gate_a_filter(
    differential: Any,
    samples: Any,
    predicate_type: str,
    predicate_options: dict[str, str],
    negate: str | None,
) -> None:
    config = {
        "transforms": "drop",
        "transforms.drop.type": "Filter",
        "transforms.drop.predicate": "p",
        "predicates": "p",
        "predicates.p.type": predicate_type,
    }
    config.update({f"predicates.p.{k}": v for k, v in predicate_options.items()})
    if negate is not None:
        config["transforms.drop.negate"] = negate
    for value in (samples.order(), None):
        differential.check(config, samples.record(value, headers=_HEADERS))
        differential.check(config, samples.record(value, topic="other"))


def test_chain_with_predicates(differential: Any, samples: Any) -> None:
    config = {
        "transforms": "tomb,route,stamp,hoist,mark,drop",
        "transforms.tomb.type": "Filter",
        "transforms.tomb.predicate": "isTombstone",
        "transforms.route.type": "RegexRouter",
        "transforms.route.regex": "(.*)-raw",
        "transforms.route.replacement": "$1",
        "transforms.stamp.type": T + "InsertField$Value",
        "transforms.stamp.topic.field": "from_topic",
        "transforms.stamp.timestamp.field": "at!",
        "transforms.stamp.predicate": "isOrders",
        "transforms.hoist.type": T + "HoistField$Key",
        "transforms.hoist.field": "k",
        "transforms.mark.type": "InsertHeader",
        "transforms.mark.header": "seen",
        "transforms.mark.value.literal": "1",
        "transforms.mark.predicate": "hasTrace",
        "transforms.mark.negate": "true",
        "transforms.drop.type": "Filter",
        "transforms.drop.predicate": "isOrders",
        "transforms.drop.negate": "true",
        "predicates": "isTombstone,isOrders,hasTrace",
        "predicates.isTombstone.type": "RecordIsTombstone",
        "predicates.isOrders.type": "TopicNameMatches",
        "predicates.isOrders.pattern": "orders",
        "predicates.hasTrace.type": "HasHeaderKey",
        "predicates.hasTrace.name": "trace",
    }
    for topic in ("orders-raw", "orders", "payments-raw"):
        for headers in ([], _HEADERS):
            for value in (samples.order(), samples.schemaless(), None):
                record = samples.record(
                    value, key=samples.string_key(), topic=topic, headers=headers
                )
                differential.check(config, record)
