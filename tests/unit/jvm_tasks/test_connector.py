"""The driver's Java connector asks its JVM whether the connector can define transaction
boundaries (TRANSACTION_BOUNDARIES): only SUPPORTED allows `transaction.boundary=connector`;
and has it call `alterOffsets` (ALTER_OFFSETS): the request's encoding, the answer, a refusal."""

from __future__ import annotations

from typing import Any

import pytest

from spark_eos_connect.api.source import ConnectorTransactionBoundaries
from spark_eos_connect.errors import ConfigError
from spark_eos_connect.jvm_tasks.connector import java_source_connector_class
from spark_eos_connect.jvm_tasks.errors import JavaPluginError
from spark_eos_connect.jvm_tasks.wire import (
    ALTER_OFFSETS,
    ERROR,
    OK,
    TEXT,
    TRANSACTION_BOUNDARIES,
    FrameReader,
    FrameWriter,
)


class Host:
    """A task host answering TRANSACTION_BOUNDARIES with `answer`, keeping what it was asked."""

    def __init__(self, answer: str | None) -> None:
        self.answer = answer
        self.asked: list[tuple[str | None, dict[str, str]]] = []

    def call(self, request: FrameWriter, answer: Any = None) -> FrameReader:
        sent = FrameReader(request.frame()[4:])
        assert sent.kind == TRANSACTION_BOUNDARIES
        self.asked.append((sent.text(), sent.map()))
        return FrameReader(FrameWriter(TEXT).text(self.answer).frame()[4:])


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("SUPPORTED", ConnectorTransactionBoundaries.SUPPORTED),
        ("UNSUPPORTED", ConnectorTransactionBoundaries.UNSUPPORTED),
        (None, ConnectorTransactionBoundaries.UNSUPPORTED),  # null: not SUPPORTED, as Connect
    ],
)
def test_the_java_connector_answers_whether_it_defines_transaction_boundaries(
    answer: str | None, expected: ConnectorTransactionBoundaries
) -> None:
    host = Host(answer)
    connector = java_source_connector_class("com.example.Txn", ["/plugins"])()
    connector._host = lambda: host  # type: ignore[method-assign,assignment,return-value]

    assert connector.can_define_transaction_boundaries({"topic": "t"}) is expected
    assert host.asked == [("com.example.Txn", {"topic": "t"})]


class AlteringHost:
    """A task host answering ALTER_OFFSETS with `reply` (a frame), keeping what it was asked."""

    def __init__(self, reply: FrameWriter) -> None:
        self.reply = reply
        self.asked: list[tuple[str | None, dict[str, str], list[tuple[Any, Any]]]] = []

    def call(self, request: FrameWriter, answer: Any = None) -> FrameReader:
        sent = FrameReader(request.frame()[4:])
        assert sent.kind == ALTER_OFFSETS
        java_class, config = sent.text(), sent.map()
        pairs = [(sent.text(), sent.text()) for _ in range(sent.i32())]
        assert sent.at == len(sent.body)
        self.asked.append((java_class, config, pairs))
        reply = FrameReader(self.reply.frame()[4:])
        if reply.kind == ERROR:
            java_error, message, trace = reply.text(), reply.text(), reply.text()
            raise JavaPluginError(f"{java_error}: {message}", java_error or "", trace or "")
        return reply


def _altering(host: object) -> Any:
    """A Java connector whose task host is `host`."""
    connector = java_source_connector_class("com.example.Offsets", ["/plugins"])()
    connector._host = lambda: host  # type: ignore[method-assign,assignment,return-value]
    return connector


@pytest.mark.parametrize(("flag", "handled"), [(1, True), (0, False)])
def test_alter_offsets_sends_json_pairs_and_returns_the_java_answer(
    flag: int, handled: bool
) -> None:
    host = AlteringHost(FrameWriter(OK).i32(flag))
    offsets = [({"filename": "a"}, {"position": 5}), ({"filename": "b"}, None)]
    assert _altering(host).alter_offsets({"topic": "t"}, offsets) is handled
    sent_pairs = [('{"filename":"a"}', '{"position":5}'), ('{"filename":"b"}', None)]
    assert host.asked == [("com.example.Offsets", {"topic": "t"}, sent_pairs)]


def test_a_refusal_is_a_config_error_with_the_connectors_message() -> None:
    reason = "The value for the 'position' key in the offset should be a non-negative value"
    connect_error = "org.apache.kafka.connect.errors.ConnectException"
    host = AlteringHost(FrameWriter(ERROR).text(connect_error).text(reason).text("\tat X"))
    with pytest.raises(ConfigError) as refused:
        _altering(host).alter_offsets({}, [({"filename": "a"}, {"position": -1})])
    assert str(refused.value) == reason


def test_unsupported_is_not_implemented_and_a_dead_host_is_no_refusal() -> None:
    unsupported = FrameWriter(ERROR).text("java.lang.UnsupportedOperationException")
    with pytest.raises(NotImplementedError, match="no external offsets"):
        _altering(AlteringHost(unsupported.text("no external offsets").text(""))).alter_offsets(
            {}, []
        )

    class DeadHost:
        def call(self, request: FrameWriter, answer: Any = None) -> FrameReader:
            raise JavaPluginError("the JVM task host (pid 1) exited with code 137")

    with pytest.raises(RuntimeError, match="exited with code 137") as failed:
        _altering(DeadHost()).alter_offsets({}, [])
    assert not isinstance(failed.value, ConfigError)
