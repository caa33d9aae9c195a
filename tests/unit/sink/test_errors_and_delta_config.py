"""errors.* options and Connect's DLQ context headers; DeltaSink's options and task contract."""

from __future__ import annotations

import pytest

from spark_eos_connect.api.sink import SinkTaskContext, TopicPartition
from spark_eos_connect.delta.connector import (
    FOREACH_BATCH_MESSAGE,
    DeltaSinkConnector,
    DeltaSinkTask,
    parse_delta_config,
)
from spark_eos_connect.errors import ConfigError, EosConnectError
from spark_eos_connect.plugins.connectors import resolve_connector_class
from spark_eos_connect.runtime.errors_dlq import (
    ErrorPolicy,
    ErrorReporter,
    FailedRecord,
    Stage,
    ToleranceExceededError,
    context_headers,
)


def failed_record(error: Exception) -> FailedRecord:
    return FailedRecord("orders", 2, 41, b"k", b"v", (("h", b"1"),), 5, Stage.VALUE_CONVERTER,
                        "pkg.JsonConverter", error)  # fmt: skip


def test_error_policy_defaults_follow_connect() -> None:
    policy = ErrorPolicy.from_options("c", {})

    assert policy == ErrorPolicy("c", False, None, 3, False, False, False)


def test_error_policy_parses_dlq_options() -> None:
    policy = ErrorPolicy.from_options(
        "c",
        {
            "errors.tolerance": "ALL",
            "errors.deadletterqueue.topic.name": "dlq",
            "errors.deadletterqueue.topic.replication.factor": "1",
            "errors.deadletterqueue.context.headers.enable": "true",
        },
    )

    assert policy.tolerate_all
    assert (policy.dlq_topic, policy.dlq_replication_factor, policy.context_headers) == (
        "dlq",
        1,
        True,
    )


def test_context_headers_have_connects_names_and_string_values() -> None:
    try:
        raise ValueError("bad json")
    except ValueError as error:
        headers = dict(context_headers(failed_record(error), "sink", 3))

    assert list(headers)[:9] == [
        "__connect.errors.topic",
        "__connect.errors.partition",
        "__connect.errors.offset",
        "__connect.errors.connector.name",
        "__connect.errors.task.id",
        "__connect.errors.stage",
        "__connect.errors.class.name",
        "__connect.errors.exception.class.name",
        "__connect.errors.exception.message",
    ]
    assert headers["__connect.errors.topic"] == b"orders"
    assert headers["__connect.errors.partition"] == b"2"
    assert headers["__connect.errors.offset"] == b"41"
    assert headers["__connect.errors.task.id"] == b"3"
    assert headers["__connect.errors.stage"] == b"VALUE_CONVERTER"
    assert headers["__connect.errors.exception.class.name"] == b"builtins.ValueError"
    assert headers["__connect.errors.exception.message"] == b"bad json"
    assert b"ValueError: bad json" in headers["__connect.errors.exception.stacktrace"]


def test_tolerance_none_raises_naming_the_record() -> None:
    reporter = ErrorReporter(ErrorPolicy("sink"), {})

    with pytest.raises(ToleranceExceededError, match="topic=orders partition=2 offset=41"):
        reporter.report(failed_record(ValueError("bad json")))


def test_tolerance_all_without_dlq_only_counts() -> None:
    reporter = ErrorReporter(ErrorPolicy("sink", tolerate_all=True), {})

    reporter.report(failed_record(ValueError("bad json")))
    reporter.close()

    assert reporter.failed == 1


def test_delta_config_needs_exactly_one_of_path_and_table() -> None:
    assert parse_delta_config({"name": "d", "path": "/t"}).location == "/t"
    assert parse_delta_config({"name": "d", "table": "db.t"}).location == "table db.t"
    for props in ({"name": "d"}, {"name": "d", "path": "/t", "table": "t"}):
        with pytest.raises(ConfigError, match="exactly one of the options path and table"):
            parse_delta_config(props)


def test_delta_config_checks_mode_and_name() -> None:
    with pytest.raises(ConfigError, match=r"delta\.mode"):
        parse_delta_config({"name": "d", "path": "/t", "delta.mode": "overwrite"})
    with pytest.raises(ConfigError, match="name"):
        parse_delta_config({"path": "/t"})
    config = parse_delta_config(
        {"name": "d", "path": "/t", "delta.mode": "Upsert", "topics": "a,b"}
    )
    assert (config.mode, config.topics) == ("upsert", ("a", "b"))


def test_delta_sink_short_name_resolves_to_the_connector() -> None:
    assert resolve_connector_class("DeltaSink") is DeltaSinkConnector
    assert DeltaSinkConnector.foreach_batch_hint == FOREACH_BATCH_MESSAGE
    assert "foreachBatch" in FOREACH_BATCH_MESSAGE and "delta_sink" in FOREACH_BATCH_MESSAGE


def test_delta_task_keeps_offsets_itself_and_refuses_record_puts() -> None:
    connector = DeltaSinkConnector()
    connector.start({"name": "d", "path": "/t"})
    [config] = connector.task_configs(4)
    task = DeltaSinkTask()
    task.initialize(SinkTaskContext(config))
    task.start(config)

    assert task.pre_commit({TopicPartition("t", 0): 5}) == {}
    with pytest.raises(EosConnectError, match="foreachBatch"):
        task.put([])
    assert connector.alter_offsets(config, {TopicPartition("t", 0): 3}) is False
