"""A task host's offset queries answered while a request is open: a task's with the request's
own answer, a started connector's (CONNECTOR_QUERY) with that connector's, whichever request
is open; a connector no longer answered for gets "no offset". The host here is a Python
stand-in speaking the protocol, so that the routing is seen without a JVM."""

from __future__ import annotations

import json
import sys
import textwrap

import pytest

from spark_eos_connect.jvm_tasks import client
from spark_eos_connect.jvm_tasks.client import TaskHostProcess
from spark_eos_connect.jvm_tasks.wire import TEXT, VALIDATE, FrameWriter

SCRIPTED_HOST = textwrap.dedent(
    """
    import json, sys
    from spark_eos_connect.jvm_tasks.wire import (
        CONNECTOR_QUERY, QUERY, TEXT, FrameReader, FrameWriter, frame_length)

    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer

    def read():
        return FrameReader(stdin.read(frame_length(stdin.read(4))))

    def ask(frame):
        stdout.write(frame.frame())
        stdout.flush()
        return read().texts()

    read()  # the request
    answers = [
        ask(FrameWriter(CONNECTOR_QUERY).i32(5).texts(['{"p":1}'])),
        ask(FrameWriter(QUERY).texts(['{"p":2}'])),
        ask(FrameWriter(CONNECTOR_QUERY).i32(6).texts(['{"p":3}'])),
    ]
    stdout.write(FrameWriter(TEXT).text(json.dumps(answers)).frame())
    stdout.flush()
    """
)


def test_each_query_is_answered_by_whom_it_asks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        client, "task_host_command", lambda _: [sys.executable, "-c", SCRIPTED_HOST]
    )
    host = TaskHostProcess(["/plugins"])
    try:
        host.answer_connector(5, lambda partitions: ['{"o":"connector 5"}'] * len(partitions))
        host.answer_connector(6, lambda partitions: ['{"o":"connector 6"}'] * len(partitions))
        host.answer_connector(6, None)  # connector 6 stopped

        reply = host.call(FrameWriter(VALIDATE).text("x"), lambda p: ['{"o":"the call"}'])

        assert reply.kind == TEXT
        assert json.loads(reply.text() or "") == [
            ['{"o":"connector 5"}'],
            ['{"o":"the call"}'],
            [None],
        ]
    finally:
        host.close()
