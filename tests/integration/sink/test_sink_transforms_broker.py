"""Sink connectors with Connect's transforms against a real broker: a RegexRouter and a Filter
gated by a predicate before `put`; a failing transformation under errors.tolerance=all (DLQ with
Connect's context headers) and =none (the query fails naming the alias and class, nothing is
committed); a bad writer option fails the query before its first batch (Spark creates a Python
data source's writer in the query's thread, after `start()` has returned)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.integration

EXTRACT = "org.apache.kafka.connect.transforms.ExtractField$Value"


def sink_stream(spark: Any, options: dict[str, str]) -> Any:
    stream = spark.readStream.format("eosconnect").options(**options).load()
    return stream.writeStream.format("eosconnect").options(**options)


def test_router_and_filter_with_predicate_route_drop_and_commit_past_dropped_records(
    spark: Any,
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    produce: Callable[..., None],
    group_offsets: Callable[[str], dict[tuple[str, int], int]],
    run_available_now: Callable[..., Any],
    unique_name: Callable[[str], str],
    test_connectors: str,
    tmp_path: Path,
) -> None:
    topic = topic_factory("smt")
    produce(topic, [(0, None, b"a"), (0, None, b"b")])
    produce(topic, [(0, None, b"dropped")], headers=[("drop", b"1")])
    produce(topic, [(0, None, b"c")])
    name = unique_name("smt")
    out = tmp_path / "out.tsv"
    options = {
        "name": name,
        "connector.class": f"{test_connectors}.TopicFileSinkConnector",
        "topics": topic,
        "file": str(out),
        "transforms": "route,dropMarked",
        "transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter",
        "transforms.route.regex": "(.*)",
        "transforms.route.replacement": "routed-$1",
        "transforms.dropMarked.type": "org.apache.kafka.connect.transforms.Filter",
        "transforms.dropMarked.predicate": "isMarked",
        "predicates": "isMarked",
        "predicates.isMarked.type": "org.apache.kafka.connect.transforms.predicates.HasHeaderKey",
        "predicates.isMarked.name": "drop",
        "kafka.bootstrap.servers": bootstrap_servers,
    }

    query = run_available_now(sink_stream(spark, options), tmp_path / "ck")

    assert query.exception() is None
    assert out.read_text().splitlines() == [f"routed-{topic}\t{v}" for v in ("a", "b", "c")]
    # offsets of the consumed topic; the dropped record (offset 3 after a commit marker) counts
    [(committed_topic, offset)] = [((t, p), o) for (t, p), o in group_offsets(name).items()]
    assert committed_topic == (topic, 0)
    assert offset >= 6  # 4 records and 2 transaction markers before the last one


def failing_options(name: str, topic: str, out: Path, servers: str) -> dict[str, str]:
    return {
        "name": name,
        "connector.class": "FileStreamSink",
        "topics": topic,
        "file": str(out),
        "value.converter": "JsonConverter",
        "value.converter.schemas.enable": "false",
        "transforms": "pickN",
        "transforms.pickN.type": EXTRACT,
        "transforms.pickN.field": "n",
        "kafka.bootstrap.servers": servers,
    }


def test_failing_transform_with_tolerance_all_goes_to_the_dlq_with_context_headers(
    spark: Any,
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    produce: Callable[..., None],
    read_committed: Callable[..., list[Any]],
    group_offsets: Callable[[str], dict[tuple[str, int], int]],
    run_available_now: Callable[..., Any],
    unique_name: Callable[[str], str],
    tmp_path: Path,
) -> None:
    topic = topic_factory("smtdlq")
    dlq = unique_name("smtdlq-dlq")
    produce(topic, [(0, b"k1", b'{"n":1}'), (0, b"k2", b'"scalar"'), (0, b"k3", b'{"n":3}')])
    name = unique_name("smtdlq")
    out = tmp_path / "out.txt"
    options = failing_options(name, topic, out, bootstrap_servers) | {
        "errors.tolerance": "all",
        "errors.deadletterqueue.topic.name": dlq,
        "errors.deadletterqueue.context.headers.enable": "true",
    }

    query = run_available_now(sink_stream(spark, options), tmp_path / "ck")

    assert query.exception() is None
    assert out.read_text().splitlines() == ["1", "3"]
    [dead] = read_committed(dlq)
    assert (dead.key, dead.value) == (b"k2", b'"scalar"')
    headers = dict(dead.headers)
    assert headers["__connect.errors.stage"] == b"TRANSFORMATION"
    assert headers["__connect.errors.class.name"] == EXTRACT.encode()
    assert headers["__connect.errors.offset"] == b"1"
    assert headers["__connect.errors.connector.name"] == name.encode()
    assert group_offsets(name) == {(topic, 0): 3}


def test_failing_transform_with_tolerance_none_fails_naming_alias_and_class(
    spark: Any,
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    produce: Callable[..., None],
    group_offsets: Callable[[str], dict[tuple[str, int], int]],
    run_available_now: Callable[..., Any],
    unique_name: Callable[[str], str],
    tmp_path: Path,
) -> None:
    topic = topic_factory("smtnone")
    produce(topic, [(0, None, b'{"n":1}'), (0, None, b'"scalar"')])
    name = unique_name("smtnone")
    options = failing_options(name, topic, tmp_path / "out.txt", bootstrap_servers)

    query = run_available_now(sink_stream(spark, options), tmp_path / "ck")

    error = str(query.exception())
    assert "TRANSFORMATION" in error
    assert "'pickN'" in error
    assert EXTRACT in error
    assert f"topic={topic} partition=0 offset=1" in error
    assert group_offsets(name) == {}


def test_bad_sink_options_fail_the_query_before_its_first_batch_listing_every_problem(
    spark: Any,
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    produce: Callable[..., None],
    group_offsets: Callable[[str], dict[tuple[str, int], int]],
    run_available_now: Callable[..., Any],
    unique_name: Callable[[str], str],
    tmp_path: Path,
) -> None:
    topic = topic_factory("badsink")
    produce(topic, [(0, None, b"a")])
    name = unique_name("badsink")
    out = tmp_path / "out.txt"
    options = {
        "name": name,
        "connector.class": "FileStreamSink",
        "topics": topic,
        "file": str(out),
        "value.converter": "AvroConverter",
        "errors.tolerance": "some",
        "transforms": "route",
        "transforms.route.type": "RegexRouter",
        "kafka.bootstrap.servers": bootstrap_servers,
    }

    query = run_available_now(sink_stream(spark, options), tmp_path / "ck")

    error = str(query.exception())
    assert "Invalid configuration (4 problems)" in error
    for option in (
        "value.converter",
        "errors.tolerance",
        "transforms.route.regex",
        "transforms.route.replacement",
    ):
        assert option in error
    assert not out.exists()
    assert group_offsets(name) == {}
