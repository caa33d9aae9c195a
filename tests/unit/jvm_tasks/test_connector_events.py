"""A Java connector's context events (a task reconfiguration request, an error it raised)
reach the driver's connector context, where `ManagedConnector` acts on them."""

from __future__ import annotations

from typing import Any

from spark_eos_connect.jvm_tasks.connector import JavaSourceConnector, java_source_connector_class
from spark_eos_connect.jvm_tasks.errors import JavaPluginError
from spark_eos_connect.jvm_tasks.wire import CONNECTOR_EVENTS, OK, FrameReader, FrameWriter
from spark_eos_connect.runtime.lifecycle.connector_lifecycle import DriverConnectorContext


class Host:
    """A task host answering CONNECTOR_EVENTS with scripted replies."""

    def __init__(self, *replies: tuple[int, str | None]) -> None:
        self.replies = list(replies)
        self.asked: list[int] = []

    def call(self, request: FrameWriter, answer: Any = None) -> FrameReader:
        sent = FrameReader(request.frame()[4:])
        assert sent.kind == CONNECTOR_EVENTS
        self.asked.append(sent.i32())
        flags, trace = self.replies.pop(0)
        return FrameReader(FrameWriter(OK).i32(flags).text(trace).frame()[4:])


def connector(host: Host) -> JavaSourceConnector:
    cls = java_source_connector_class("com.example.Signalling", ["/plugins"])
    instance = cls()
    instance._host = lambda: host  # type: ignore[method-assign,assignment,return-value]
    return instance


def test_a_reconfiguration_request_and_a_raised_error_reach_the_context() -> None:
    host = Host((1, "java.lang.IllegalStateException: gone\n\tat com.example.X"), (0, None))
    java = connector(host)
    context = DriverConnectorContext()
    java.initialize(context)

    java.poll_events(7)

    assert host.asked == [7]
    assert context.take_reconfiguration_request()
    error = context.take_error()
    assert isinstance(error, JavaPluginError)
    assert "com.example.Signalling" in str(error) and "at com.example.X" in error.trace

    java.poll_events(7)  # nothing new
    assert not context.take_reconfiguration_request() and context.take_error() is None
