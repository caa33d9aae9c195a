"""Transforms on the sink side: after the converters, before `put` (Connect's WorkerSinkTask);
a filtered record is not put but its offset is consumed; a failing stage is a TRANSFORMATION
failure under errors.tolerance; the writer's options are checked with every problem listed."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import pytest

from spark_eos_connect.api.config import InvalidConfigError
from spark_eos_connect.api.sink import SinkRecord
from spark_eos_connect.runtime.errors_dlq import (
    ErrorPolicy,
    ErrorReporter,
    FailedRecord,
    Stage,
    ToleranceExceededError,
    context_headers,
)
from spark_eos_connect.sink.options import parse_sink_options, sink_config_problems
from spark_eos_connect.sink.plan import SinkTaskPlan
from tests.unit.sink.test_live_task import (
    MemoryInput,
    Msg,
    RecordingTask,
    plan,
    puts,
    reset_recording,
    run_once,
)

__all__ = ["reset_recording"]

ROUTE_AND_FILTER = {
    "transforms": "route,dropSmall",
    "transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter",
    "transforms.route.regex": "t",
    "transforms.route.replacement": "routed-t",
    "transforms.dropSmall.type": "org.apache.kafka.connect.transforms.Filter",
    "transforms.dropSmall.predicate": "isSmall",
    "predicates": "isSmall",
    "predicates.isSmall.type": "org.apache.kafka.connect.transforms.predicates.HasHeaderKey",
    "predicates.isSmall.name": "small",
}

FAILING = {
    "transforms": "pick",
    "transforms.pick.type": "org.apache.kafka.connect.transforms.ExtractField$Value",
    "transforms.pick.field": "n",
}


def chain_plan(
    options: dict[str, str], tolerate_all: bool = False, value_converter: str = "ByteArrayConverter"
) -> SinkTaskPlan:
    sink_plan = plan(tolerate_all=tolerate_all, value_converter=value_converter)
    return dataclasses.replace(sink_plan, transform_options=options)


def test_router_and_filter_with_predicate_run_before_put_and_filtered_offsets_count() -> None:
    # the second record carries the header the predicate looks for
    source = MemoryInput().add(0, {3: b"a", 4: Msg(b"b", headers=(("small", b"1"),))})
    captured: list[SinkRecord] = []
    original = RecordingTask.put

    def put(self: RecordingTask, records: Sequence[SinkRecord]) -> None:
        captured.extend(records)
        original(self, records)

    RecordingTask.put = put  # type: ignore[method-assign]
    try:
        result = run_once(chain_plan(ROUTE_AND_FILTER), source, (0, 3, 5))
    finally:
        RecordingTask.put = original  # type: ignore[method-assign]

    assert puts() == [[(0, 3, b"a")]]
    assert [r.topic for r in captured] == ["routed-t"]
    assert result.records_filtered == 1
    # offsets by the consumed topic, past the filtered record, as Connect commits them
    assert result.committable == [("t", 0, 5)]


def test_failing_transform_with_tolerance_none_names_stage_alias_and_class() -> None:
    with pytest.raises(ToleranceExceededError) as caught:
        run_once(chain_plan(FAILING), MemoryInput().add(0, {3: b"not a struct"}), (0, 3, 4))

    message = str(caught.value)
    assert "stage TRANSFORMATION" in message
    assert "'pick'" in message
    assert "org.apache.kafka.connect.transforms.ExtractField$Value" in message
    assert "topic=t partition=0 offset=3" in message
    assert puts() == []


def test_failing_transform_with_tolerance_all_is_skipped_and_reported_as_its_stage() -> None:
    reported: list[FailedRecord] = []
    original = ErrorReporter.report

    def report(self: ErrorReporter, failed: FailedRecord) -> None:
        reported.append(failed)
        original(self, failed)

    ErrorReporter.report = report  # type: ignore[method-assign]
    try:
        result = run_once(
            chain_plan(FAILING, tolerate_all=True, value_converter="JsonConverter"),
            MemoryInput().add(0, {3: b'{"n":1}', 4: b'"scalar"'}),
            (0, 3, 5),
        )
    finally:
        ErrorReporter.report = original  # type: ignore[method-assign]

    assert puts() == [[(0, 3, 1)]]
    assert result.records_failed == 1
    assert result.committable == [("t", 0, 5)]
    [failed] = reported
    headers = dict(context_headers(failed, "rec", 0))
    assert headers["__connect.errors.stage"] == b"TRANSFORMATION"
    assert (
        headers["__connect.errors.class.name"]
        == b"org.apache.kafka.connect.transforms.ExtractField$Value"
    )
    # the transformation's own error, as Connect's header shows it (not the chain's wrapper)
    assert b"TransformationError" not in headers["__connect.errors.exception.class.name"]


BASE = {"name": "n", "connector.class": "c", "kafka.bootstrap.servers": "b:9092"}


def test_transform_options_reach_the_plan_with_alias_case_restored() -> None:
    options = {k.lower(): v for k, v in ROUTE_AND_FILTER.items()}  # as Spark passes them

    parsed = parse_sink_options({**BASE, **options})

    assert parsed.transform_options["transforms.dropSmall.predicate"] == "isSmall"
    assert parsed.transform_options["predicates.isSmall.name"] == "small"


def test_every_problem_of_the_writer_config_is_listed_naming_its_option() -> None:
    options = {
        "name": "n",
        "connector.class": "c",
        "tasks.max": "0",
        "value.converter": "AvroConverter",
        "errors.tolerance": "some",
        "transforms": "route,bogus",
        "transforms.route.type": "RegexRouter",
        "transforms.bogus.type": "com.example.NoSuchTransform",
    }

    problems = sink_config_problems(options)

    assert set(problems) >= {
        "kafka.bootstrap.servers",
        "tasks.max",
        "value.converter",
        "errors.tolerance",
        "transforms.route.regex",
        "transforms.bogus.type",
    }
    with pytest.raises(InvalidConfigError) as caught:
        parse_sink_options(options)
    text = str(caught.value)
    for option in ("tasks.max", "value.converter", "errors.tolerance", "transforms.route.regex"):
        assert option in text


def test_an_unknown_predicate_alias_is_a_problem() -> None:
    problems = sink_config_problems({**BASE, **FAILING, "transforms.pick.predicate": "nowhere"})

    assert any("nowhere" in m for messages in problems.values() for m in messages)


def test_policy_is_unchanged_by_the_chain() -> None:
    parsed = parse_sink_options({**BASE, **FAILING, "errors.tolerance": "all"})

    assert parsed.errors == ErrorPolicy("n", tolerate_all=True)
    assert Stage.TRANSFORMATION.value == "TRANSFORMATION"
