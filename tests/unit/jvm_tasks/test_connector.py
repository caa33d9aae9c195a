"""The driver's Java connector asks its JVM whether the connector can define transaction
boundaries (TRANSACTION_BOUNDARIES): only SUPPORTED allows `transaction.boundary=connector`."""

from __future__ import annotations

from typing import Any

import pytest

from spark_eos_connect.api.source import ConnectorTransactionBoundaries
from spark_eos_connect.jvm_tasks.connector import java_source_connector_class
from spark_eos_connect.jvm_tasks.wire import TEXT, TRANSACTION_BOUNDARIES, FrameReader, FrameWriter


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
