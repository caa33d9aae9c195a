"""A source connector's whole config checked at once: every problem named by its option, the
Connect framework options the project refuses, warnings for options nothing reads, a
connector's `validate` that throws quoted with its error, and transform aliases spelt as
declared although Spark lower-cases option names."""

from __future__ import annotations

from typing import Any

import pytest

from spark_eos_connect.api.config import ConfigValueReport, InvalidConfigError
from spark_eos_connect.connectors.file_stream import FileStreamSourceConnector
from spark_eos_connect.jvm_tasks.errors import JavaPluginError
from spark_eos_connect.runtime.config.connect_options import (
    alias_case_problems,
    refused_option_problems,
    restore_alias_case,
)
from spark_eos_connect.runtime.errors_dlq import ErrorPolicy, retry_delay_ms
from spark_eos_connect.source.validation import (
    source_config_report,
    validate_source_options,
)

CONNECT_FILE_SOURCE = {
    "name": "orders-file",
    "connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
    "tasks.max": "1",
    "file": "/tmp/orders.txt",
    "topic": "orders",
    "value.converter": "org.apache.kafka.connect.json.JsonConverter",
    "value.converter.schemas.enable": "false",
    "transforms": "route",
    "transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter",
    "transforms.route.regex": "orders",
    "transforms.route.replacement": "orders-v2",
    "transforms.route.predicate": "isOrders",
    "predicates": "isOrders",
    "predicates.isOrders.type": "org.apache.kafka.connect.transforms.predicates.TopicNameMatches",
    "predicates.isOrders.pattern": "orders",
    "errors.tolerance": "all",
    "errors.log.enable": "true",
    "kafka.bootstrap.servers": "localhost:9092",
}


def lowered(options: dict[str, Any]) -> dict[str, Any]:
    """What Spark hands the data source."""
    return {k.lower(): v for k, v in options.items()}


def test_a_connect_config_is_valid_as_it_is() -> None:
    problems, warnings = source_config_report(lowered(CONNECT_FILE_SOURCE))

    assert problems == {}
    assert warnings == []
    assert validate_source_options(CONNECT_FILE_SOURCE) == []


def test_every_problem_is_listed_at_once_each_naming_its_option() -> None:
    options = {
        **CONNECT_FILE_SOURCE,
        "tasks.max": "0",
        "transaction.boundary": "sometimes",
        "value.converter": "io.confluent.connect.avro.AvroConverter",
        "transforms": "route,mask",
        "transforms.route.type": "org.apache.kafka.connect.transforms.NoSuchRouter",
        "transforms.mask.type": "org.apache.kafka.connect.transforms.MaskField$Value",
        "transforms.mask.predicate": "notDeclared",
        "errors.deadletterqueue.topic.name": "dlq",
        "topic": "",
    }
    del options["kafka.bootstrap.servers"]

    with pytest.raises(InvalidConfigError) as refused:
        validate_source_options(lowered(options))

    problems = refused.value.problems
    assert set(problems) >= {
        "kafka.bootstrap.servers",
        "tasks.max",
        "transaction.boundary",
        "value.converter",
        "transforms.route.type",
        "transforms.mask.fields",
        "transforms.mask.predicate",
        "errors.deadletterqueue.topic.name",
        "topic",
    }
    message = str(refused.value)
    assert "transaction.boundary" in message and "sometimes" in message
    assert "only sink connectors have a dead letter queue" in message
    assert "no predicate 'notDeclared' is declared" in message


@pytest.mark.parametrize(
    ("option", "value", "says"),
    [
        ("producer.override.acks", "all", "kafka.acks"),
        ("consumer.override.max.poll.records", "10", "kafka.max.poll.records"),
        ("admin.override.client.id", "x", "kafka.client.id"),
        ("topic.creation.default.replication.factor", "3", "do not create their topics"),
        ("topic.creation.groups", "g", "do not create their topics"),
        ("config.action.reload", "restart", "only 'none' is supported"),
        ("tasks.max.enforce", "false", "only 'true' is supported"),
        ("connector.plugin.version", "4.3.1", "KIP-891"),
        ("value.converter.plugin.version", "4.3.1", "KIP-891"),
        ("transforms.route.plugin.version", "4.3.1", "KIP-891"),
        ("errors.deadletterqueue.context.headers.enable", "true", "dead letter queue"),
    ],
)
def test_connect_options_the_project_does_not_implement_are_refused_by_name(
    option: str, value: str, says: str
) -> None:
    problems, _ = source_config_report(lowered({**CONNECT_FILE_SOURCE, option: value}))

    assert list(problems) == [option]
    assert says in problems[option][0]


def test_supported_values_of_those_options_are_accepted() -> None:
    options = {**CONNECT_FILE_SOURCE, "config.action.reload": "none", "tasks.max.enforce": "true"}

    assert source_config_report(lowered(options)) == ({}, [])


def test_options_nothing_reads_are_warned_about() -> None:
    options = {
        **CONNECT_FILE_SOURCE,
        "bootstrap.servers": "localhost:9092",
        "batch.sise": "10",
        "value.converter.schemas.enabled": "false",
        "key.converter.schemas.enable": "false",
        "transforms.route.regexp": "x",
    }

    problems, warnings = source_config_report(lowered(options))

    assert problems == {}
    text = "\n".join(warnings)
    assert '"bootstrap.servers": defined neither by the framework nor by' in text
    assert '("kafka.bootstrap.servers")' in text
    assert 'Unknown option "batch.sise"' in text
    assert '(did you mean "batch.size"?)' in text
    assert "value.converter.schemas.enabled is not an option of JsonConverter" in text
    assert "key.converter.schemas.enable is ignored: key.converter is not set" in text
    assert "transforms.route.regexp is not an option of RegexRouter" in text


def test_the_connectors_own_problems_are_included() -> None:
    problems, _ = source_config_report(lowered({**CONNECT_FILE_SOURCE, "batch.size": "-1"}))

    assert list(problems) == ["batch.size"]


def test_an_unknown_connector_class_is_a_problem_among_the_others() -> None:
    options = {**CONNECT_FILE_SOURCE, "connector.class": "com.example.Nope", "tasks.max": "x"}

    problems, _ = source_config_report(lowered(options))

    assert set(problems) == {"connector.class", "tasks.max"}


class ThrowingInValidate(FileStreamSourceConnector):
    """Its validate throws as a Java plugin's does (`JavaPluginError`: the Java trace on the
    lines after the message)."""

    def validate(self, props: Any) -> list[ConfigValueReport]:
        raise JavaPluginError(
            "java.lang.RuntimeException: boom",
            "java.lang.RuntimeException",
            "java.lang.RuntimeException: boom\n\tat com.example.Throwing.validate(Throwing.java:7)",
        )


def test_a_validate_that_throws_is_a_problem_quoting_the_error_and_its_trace_line_by_line() -> None:
    name = f"{__name__}.ThrowingInValidate"
    options = {**CONNECT_FILE_SOURCE, "connector.class": name}

    problems, _ = source_config_report(lowered(options))

    assert problems == {
        "connector.class": [
            f"{name}: validating its options failed: JavaPluginError: "
            "java.lang.RuntimeException: boom\njava.lang.RuntimeException: boom\n"
            "\tat com.example.Throwing.validate(Throwing.java:7)"
        ]
    }


def test_aliases_get_back_their_declared_case() -> None:
    restored = restore_alias_case(lowered(CONNECT_FILE_SOURCE))

    assert {k for k in restored if k.startswith(("transforms.", "predicates."))} == {
        k for k in CONNECT_FILE_SOURCE if k.startswith(("transforms.", "predicates."))
    }
    lower_predicate = restore_alias_case(
        {**lowered(CONNECT_FILE_SOURCE), "transforms.route.predicate": "isorders"}
    )
    assert lower_predicate["transforms.route.predicate"] == "isOrders"


def test_aliases_that_differ_only_in_case_cannot_be_told_apart() -> None:
    problems = alias_case_problems({"transforms": "route,Route"})

    assert "'route' and 'Route' differ only in case" in problems["transforms"][0]


def test_nothing_is_refused_in_a_plain_config() -> None:
    assert refused_option_problems({"name": "x", "errors.tolerance": "all"}) == {}


def test_retry_waits_double_from_300_ms_and_stop_at_the_deadline() -> None:
    policy = ErrorPolicy("c", retry_max_delay_ms=1000)

    assert retry_delay_ms(policy, 1, 10_000) == 300
    assert retry_delay_ms(policy, 2, 10_000) == 600
    assert 0 <= retry_delay_ms(policy, 3, 10_000) < 1000  # 1200 > max: random below it
    assert retry_delay_ms(policy, 2, 250) == 250


def test_a_typo_of_a_required_option_is_named_first_with_a_did_you_mean() -> None:
    options = {
        "name": "typo",
        "connector.class": "FileStreamSource",
        "fiel": "/tmp/orders.txt",
        "topic": "orders",
        "batch.sise": "10",
        "kafka.bootstrap.servers": "localhost:9092",
    }

    with pytest.raises(InvalidConfigError) as caught:
        validate_source_options(options)

    lines = str(caught.value).splitlines()
    assert lines[0] == "Invalid configuration (3 problems):"
    assert lines[1].startswith('  - Unknown option "batch.sise"')
    assert '(did you mean "batch.size"?)' in lines[1]
    assert lines[2].startswith('  - Unknown option "fiel"')
    assert '(did you mean "file"?)' in lines[2]
    assert 'Missing required configuration "file"' in lines[3]
    assert list(caught.value.problems) == ["batch.sise", "fiel", "file"]
