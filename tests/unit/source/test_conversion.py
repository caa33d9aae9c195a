"""Source records through the transform chain and the converters, as Connect's worker task does
it: exact bytes per converter, filtering and routing, `errors.tolerance`, retries of
`RetriableError` on a fake clock, logging without the record, and what a kept task does with a
dropped record (its offset moves, `commit_record` gets no metadata)."""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

import pytest

from spark_eos_connect.api.config import InvalidConfigError
from spark_eos_connect.api.data import Schema, SchemaBuilder, Struct
from spark_eos_connect.api.source import RecordMetadata, SourceRecord, SourceTask
from spark_eos_connect.errors import RetriableError
from spark_eos_connect.runtime.errors_dlq import ErrorPolicy, ToleranceExceededError
from spark_eos_connect.source.conversion import (
    DEFAULT_CONVERTER,
    PreparedRecords,
    RecordPreparer,
    last_offsets,
    parse_record_conversion,
    record_conversion_problems,
)
from spark_eos_connect.source.plan import RecordConversion
from spark_eos_connect.source.task_loop import BatchResult, run_task_once, same_generation
from spark_eos_connect.storage.memory_log import MemoryLog, MemoryOffsetsLog, MemoryTaskClients
from spark_eos_connect.testing import example_plan

FILE = {"filename": "/data/in.txt"}
JSON = "org.apache.kafka.connect.json.JsonConverter"
ROUTE_AND_FILTER = {
    "transforms": "dropOthers,route",
    "transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter",
    "transforms.route.regex": "orders",
    "transforms.route.replacement": "orders-v2",
    "transforms.route.predicate": "isOrders",
    "transforms.dropOthers.type": "org.apache.kafka.connect.transforms.Filter",
    "transforms.dropOthers.predicate": "isOrders",
    "transforms.dropOthers.negate": "true",
    "predicates": "isOrders",
    "predicates.isOrders.type": "org.apache.kafka.connect.transforms.predicates.TopicNameMatches",
    "predicates.isOrders.pattern": "orders",
}
CAST_TO_INT = {
    "transforms": "toNumber",
    "transforms.toNumber.type": "org.apache.kafka.connect.transforms.Cast$Value",
    "transforms.toNumber.spec": "int64",
}


def line(text: str, position: int, topic: str = "orders") -> SourceRecord:
    """A record as FileStreamSource emits it."""
    return SourceRecord(FILE, {"position": position}, topic, text, value_schema=Schema.STRING)


def preparer(
    options: dict[str, Any], errors: ErrorPolicy | None = None, **names: str
) -> RecordPreparer:
    conversion = RecordConversion(
        key_converter=names.get("key"),
        value_converter=names.get("value"),
        header_converter=names.get("header"),
        options=options,
        errors=errors or ErrorPolicy("c"),
    )
    return RecordPreparer(conversion, options, "c-0")


def values(prepared: PreparedRecords) -> list[bytes | None]:
    return [record.value for record in prepared.ready]


# --- options --------------------------------------------------------------------------------


def test_nothing_configured_keeps_the_fast_path() -> None:
    assert parse_record_conversion("c", {"topic": "t"}, {"topic": "t"}) is None
    assert parse_record_conversion("c", {}, {"errors.tolerance": "none"}) is None


def test_a_converter_a_chain_or_tolerance_all_asks_for_a_conversion() -> None:
    props = {"value.converter": JSON, "value.converter.schemas.enable": "${env:X}"}
    resolved = {**props, "value.converter.schemas.enable": "false"}

    conversion = parse_record_conversion("c", props, resolved)

    assert conversion is not None
    assert conversion.value_converter == JSON and conversion.key_converter is None
    assert conversion.options == {"value.converter.schemas.enable": "${env:X}"}  # unresolved
    assert parse_record_conversion("c", CAST_TO_INT, CAST_TO_INT) is not None
    tolerant = parse_record_conversion("c", {}, {"errors.tolerance": "all"})
    assert tolerant is not None and tolerant.errors.tolerate_all


def test_every_problem_is_named_by_its_option() -> None:
    problems = record_conversion_problems(
        {
            "value.converter": "io.confluent.connect.protobuf.ProtobufConverter",
            "key.converter": JSON,
            "key.converter.schemas.enable": "maybe",
            "transforms": "a,b",
            "transforms.a.type": "org.apache.kafka.connect.transforms.NoSuchThing",
            "transforms.b.type": "org.apache.kafka.connect.transforms.InsertField$Value",
            "transforms.b.predicate": "undeclared",
            "errors.tolerance": "some",
            "errors.retry.timeout": "-2",
        }
    )

    assert "ProtobufConverter" in problems["value.converter"][0]
    assert "key.converter.schemas.enable" in problems["key.converter"][0]
    assert "transforms.a.type" in problems
    assert "no predicate 'undeclared' is declared" in problems["transforms.b.predicate"][0]
    assert "errors.tolerance" in problems and "errors.retry.timeout" in problems
    with pytest.raises(InvalidConfigError) as refused:
        parse_record_conversion("c", {}, {"errors.tolerance": "some"})
    assert "errors.tolerance" in str(refused.value)


def test_a_missing_required_smt_option_is_a_problem() -> None:
    problems = record_conversion_problems(
        {
            "transforms": "wrap",
            "transforms.wrap.type": "org.apache.kafka.connect.transforms.HoistField$Value",
        }
    )

    assert list(problems) == ["transforms.wrap.field"]


# --- converters -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "options", "expected"),
    [
        (JSON, {}, b'{"schema":{"type":"string","optional":false},"payload":"alpha"}'),
        (JSON, {"value.converter.schemas.enable": "false"}, b'"alpha"'),
        ("org.apache.kafka.connect.storage.StringConverter", {}, b"alpha"),
        (
            "StringConverter",
            {"value.converter.converter.encoding": "UTF-16"},
            b"\xfe\xff\0a\0l\0p\0h\0a",
        ),
    ],
)
def test_converters_write_connects_bytes(
    value: str, options: dict[str, str], expected: bytes
) -> None:
    prepared = preparer(options, value=value).prepare([line("alpha", 6)])

    assert values(prepared) == [expected]
    assert prepared.ready[0].key is None and prepared.dropped == []


def test_byte_array_converter_passes_bytes_and_refuses_a_string_schema_as_connect_does() -> None:
    raw = SourceRecord(FILE, {"position": 1}, "t", b"\x00\xff", key=b"k")
    converter = "org.apache.kafka.connect.converters.ByteArrayConverter"

    prepared = preparer({}, key=converter, value=converter).prepare([raw])

    assert [(r.key, r.value) for r in prepared.ready] == [(b"k", b"\x00\xff")]
    with pytest.raises(ToleranceExceededError) as failed:
        preparer({}, value=converter).prepare([line("alpha", 6)])
    message = str(failed.value)
    assert "stage VALUE_CONVERTER with class " + converter in message
    assert "Invalid schema type for ByteArrayConverter: STRING" in message


def test_without_converters_the_chain_output_is_written_as_the_default_writes_it() -> None:
    records = [
        SourceRecord(FILE, {"position": 1}, "orders", {"n": 1}, key="k", headers=[("h", b"v")])
    ]

    prepared = preparer(ROUTE_AND_FILTER).prepare(records)

    assert prepared.ready[0][1:] == ("orders-v2", None, b"k", b'{"n":1}', [("h", b"v")], None)


def test_a_struct_without_a_value_converter_fails_naming_the_option() -> None:
    schema = SchemaBuilder.struct().field("n", Schema.INT32).build()
    record = SourceRecord(FILE, {"position": 1}, "t", Struct(schema, {"n": 1}), value_schema=schema)

    with pytest.raises(ToleranceExceededError) as failed:
        preparer({}).prepare([record])

    assert f"with class {DEFAULT_CONVERTER}" in str(failed.value)
    assert "no value.converter is set" in str(failed.value)


def test_a_struct_that_does_not_match_its_schema_fails_in_the_value_converter() -> None:
    schema = SchemaBuilder.struct().field("n", Schema.INT32).field("s", Schema.STRING).build()
    incomplete = Struct(schema, {"n": 1})  # required field s unset
    record = SourceRecord(FILE, {"position": 1}, "t", incomplete, value_schema=schema)

    with pytest.raises(ToleranceExceededError) as failed:
        preparer({}, value=JSON).prepare([record])

    assert f"stage VALUE_CONVERTER with class {JSON}" in str(failed.value)
    assert 'field "s"' in str(failed.value)


def test_headers_go_through_the_header_converter() -> None:
    options = {
        "transforms": "stamp",
        "transforms.stamp.type": "org.apache.kafka.connect.transforms.InsertHeader",
        "transforms.stamp.header": "source",
        "transforms.stamp.value.literal": "file",
    }
    record = SourceRecord(FILE, {"position": 1}, "t", "x", headers=[("raw", b"\x01")])

    default = preparer(options).prepare([record])
    simple = preparer(options, header="SimpleHeaderConverter").prepare([record])

    assert default.ready[0].headers == [("raw", b"\x01"), ("source", b"file")]
    assert simple.ready[0].headers is not None and simple.ready[0].headers[1] == ("source", b"file")


# --- the chain ------------------------------------------------------------------------------


def test_a_predicate_routes_some_records_and_filters_the_others() -> None:
    records = [line("a", 2), line("b", 4, topic="audit"), line("c", 6)]

    prepared = preparer(ROUTE_AND_FILTER, value="StringConverter").prepare(records)

    assert [(r.position, r.topic, r.value) for r in prepared.ready] == [
        (0, "orders-v2", b"a"),
        (2, "orders-v2", b"c"),
    ]
    assert prepared.dropped == [1]


def test_aliases_keep_their_case_through_lower_cased_spark_options() -> None:
    from spark_eos_connect.source.config import parse_source_pipeline

    options = {
        "kafka.bootstrap.servers": "localhost:1",
        "name": "c",
        "connector.class": "FileStreamSource",
        "file": "/tmp/x",
        "topic": "orders",
        **ROUTE_AND_FILTER,
    }
    config = parse_source_pipeline({k.lower(): v for k, v in options.items()})

    assert config.conversion is not None
    assert config.conversion.options == ROUTE_AND_FILTER
    assert config.connector_props["transforms.dropOthers.negate"] == "true"  # config topic


def test_tolerance_none_fails_naming_the_alias_and_the_class() -> None:
    with pytest.raises(ToleranceExceededError) as failed:
        preparer(CAST_TO_INT).prepare([line("42", 3), line("forty-two", 13)])

    message = str(failed.value)
    assert (
        "stage TRANSFORMATION with class org.apache.kafka.connect.transforms.Cast$Value" in message
    )
    assert "transformation 'toNumber' (org.apache.kafka.connect.transforms.Cast$Value)" in message
    assert "forty-two" not in message.split(" failed: ", 1)[0]


def test_tolerance_all_skips_the_record_and_its_offset_still_counts() -> None:
    records = [line("42", 3), line("forty-two", 13), line("7", 15)]
    tolerant = preparer(CAST_TO_INT, errors=ErrorPolicy("c", tolerate_all=True), value=JSON)

    prepared = tolerant.prepare(records)

    assert [r.position for r in prepared.ready] == [0, 2] and prepared.dropped == [1]
    assert tolerant.failed == 1
    assert last_offsets(records[:2]) == [(FILE, {"position": 13})]


def test_logs_name_stage_and_class_and_show_the_record_only_when_asked(
    caplog: pytest.LogCaptureFixture,
) -> None:
    secret = "card-4111111111111111"
    for include in (False, True):
        policy = ErrorPolicy("c", tolerate_all=True, log_errors=True, log_messages=include)
        caplog.clear()
        with caplog.at_level(logging.ERROR, logger="spark_eos_connect.source.conversion"):
            preparer(CAST_TO_INT, errors=policy).prepare([line(secret, 9)])

        [logged] = caplog.records
        text = logged.getMessage()
        assert text.startswith("Error encountered in task c-0. Executing stage 'TRANSFORMATION'")
        assert "Cast$Value" in text
        assert (secret in text) is include


# --- retries --------------------------------------------------------------------------------


class FakeClock:
    """Time that only moves when something sleeps."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(round(seconds, 3))
        self.now += seconds


class FlakySmt:
    """Raises `RetriableError` for its first `failures` records, then upper-cases values."""

    def configure(self, configs: dict[str, Any]) -> None:
        self.left = int(configs.get("failures", 0))

    def apply(self, record: Any) -> Any:
        if self.left > 0:
            self.left -= 1
            raise RetriableError("the service is busy")
        return record.new_record(value=str(record.value).upper())

    def close(self) -> None:
        pass


def flaky(
    failures: int, timeout_ms: int, max_delay_ms: int = 60000
) -> tuple[RecordPreparer, FakeClock]:
    options: dict[str, Any] = {
        "transforms": "flaky",
        "transforms.flaky.type": FlakySmt,  # a class given as such, not by its path
        "transforms.flaky.failures": str(failures),
    }
    policy = ErrorPolicy("c", retry_timeout_ms=timeout_ms, retry_max_delay_ms=max_delay_ms)
    conversion = RecordConversion(options=options, errors=policy)
    clock = FakeClock()
    return RecordPreparer(conversion, options, "c-0", clock=clock, sleep=clock.sleep), clock


def test_a_retriable_failure_is_retried_with_doubling_waits_until_it_succeeds() -> None:
    retrying, clock = flaky(failures=3, timeout_ms=10_000)

    assert values(retrying.prepare([line("a", 1)])) == [b"A"]
    assert clock.sleeps == [0.3, 0.6, 1.2]


def test_retries_stop_at_the_timeout_and_the_record_fails() -> None:
    retrying, clock = flaky(failures=10, timeout_ms=1000)

    with pytest.raises(ToleranceExceededError, match="the service is busy"):
        retrying.prepare([line("a", 1)])
    assert clock.sleeps == [0.3, 0.6, 0.1] and clock.now == 1.0


def test_without_a_retry_timeout_nothing_is_retried() -> None:
    retrying, clock = flaky(failures=1, timeout_ms=0)

    with pytest.raises(ToleranceExceededError):
        retrying.prepare([line("a", 1)])
    assert clock.sleeps == []


def test_waits_beyond_the_maximum_delay_are_random_below_it() -> None:
    retrying, clock = flaky(failures=4, timeout_ms=-1, max_delay_ms=500)

    assert values(retrying.prepare([line("a", 1)])) == [b"A"]
    assert len(clock.sleeps) == 4 and clock.sleeps[0] == 0.3
    assert all(wait < 0.5 for wait in clock.sleeps[1:])


def test_a_non_retriable_failure_is_not_retried_even_with_a_timeout() -> None:
    tolerant = preparer(CAST_TO_INT, errors=ErrorPolicy("c", retry_timeout_ms=-1))

    with pytest.raises(ToleranceExceededError):
        tolerant.prepare([line("x", 1)])


# --- the task's side ------------------------------------------------------------------------


class RecordingTask(SourceTask):
    """Polls `line("a", 2)` and a dropped `line("b", 4, topic="audit")`, then nothing; notes
    its `commit_record` calls, and what they were when it was polled again (before the
    micro-batch's commit)."""

    def start(self, props: dict[str, str]) -> None:
        RECORDED.clear()
        self.polls = 0

    def poll(self) -> list[SourceRecord] | None:
        self.polls += 1
        if self.polls == 1:
            return [line("a", 2), line("b", 4, topic="audit")]
        RECORDED.setdefault("before_commit", list(RECORDED.get("committed", [])))
        return None

    def stop(self) -> None:
        pass

    def commit_record(self, record: SourceRecord, metadata: RecordMetadata | None) -> None:
        RECORDED.setdefault("committed", []).append((record.value, metadata))


RECORDED: dict[str, list[tuple[str, RecordMetadata | None]]] = {}


def run_filtering_task(exactly_once: bool) -> tuple[MemoryLog, BatchResult]:
    log = MemoryLog()
    log.create_topic("eosconnect-offsets", 5)
    plan = example_plan(
        [],
        task_class=f"{__name__}.RecordingTask",
        exactly_once=exactly_once,
        conversion=RecordConversion(options=ROUTE_AND_FILTER),
        offsets_positions={},
        offsets_topic_partitions=5,
        config_topic="",
    )
    return log, run_task_once({}, plan, clients=MemoryTaskClients(log))


def test_a_filtered_record_moves_the_offset_and_reaches_commit_record_after_the_commit() -> None:
    log, result = run_filtering_task(exactly_once=True)

    assert [record.value for record in log.read_committed("orders-v2")] == [b"a"]
    assert result.offsets_committed == 1
    view = MemoryOffsetsLog(log, "eosconnect-offsets")
    view.read_new()
    assert view.snapshot.offset("c", FILE) == {"position": 4}  # the dropped record's
    assert RECORDED["before_commit"] == []  # called once the transaction commits
    assert RECORDED["committed"] == [("b", None), ("a", RecordMetadata("orders-v2", 0, 0))]


def test_at_least_once_a_filtered_record_reaches_commit_record_at_once() -> None:
    log, _ = run_filtering_task(exactly_once=False)

    assert RECORDED["before_commit"] == [("b", None)]
    assert RECORDED["committed"] == [("b", None), ("a", RecordMetadata("orders-v2", 0, 0))]
    view = MemoryOffsetsLog(log, "eosconnect-offsets")
    view.read_new()
    assert view.snapshot.offset("c", FILE) == {"position": 4}


def test_a_changed_conversion_is_not_the_same_task() -> None:
    current = example_plan([], conversion=RecordConversion(value_converter=JSON))

    assert same_generation(current, dataclasses.replace(current))
    assert not same_generation(current, dataclasses.replace(current, conversion=None))
