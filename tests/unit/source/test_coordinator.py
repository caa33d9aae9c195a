"""`load_source_connector`'s preflight checks (no I/O): a connector that cannot keep the promise
an option asks for is refused with an error naming the option, also when asking it raises."""

from __future__ import annotations

import pytest

from spark_eos_connect.api.source import ConnectorTransactionBoundaries, ExactlyOnceSupport
from spark_eos_connect.errors import ConfigError
from spark_eos_connect.source import coordinator as source_coordinator
from spark_eos_connect.source.config import parse_source_pipeline
from spark_eos_connect.source.coordinator import load_source_connector
from spark_eos_connect.testing import CounterSourceConnector

BASE = {
    "name": "preflight",
    "connector.class": "Answering",
    "topic": "out",
    "kafka.bootstrap.servers": "localhost:9092",
}
REQUIRED = {"exactly.once.support": "required"}
CONNECTOR_BOUNDARIES = {"transaction.boundary": "connector"}


class AnsweringConnector(CounterSourceConnector):
    """Answers the preflight questions as the class attributes say; raises an exception one."""

    support: ExactlyOnceSupport | Exception | None = ExactlyOnceSupport.SUPPORTED
    boundaries: ConnectorTransactionBoundaries | Exception = (
        ConnectorTransactionBoundaries.SUPPORTED
    )

    def exactly_once_support(self, config: dict[str, str]) -> ExactlyOnceSupport | None:
        if isinstance(self.support, Exception):
            raise self.support
        return self.support

    def can_define_transaction_boundaries(
        self, config: dict[str, str]
    ) -> ConnectorTransactionBoundaries:
        if isinstance(self.boundaries, Exception):
            raise self.boundaries
        return self.boundaries


@pytest.fixture(autouse=True)
def answering(monkeypatch: pytest.MonkeyPatch) -> None:
    """`connector.class` resolves to `AnsweringConnector`, answering SUPPORTED by default."""
    monkeypatch.setattr(source_coordinator, "resolve_connector_class", lambda _: AnsweringConnector)
    monkeypatch.setattr(AnsweringConnector, "support", ExactlyOnceSupport.SUPPORTED)
    monkeypatch.setattr(AnsweringConnector, "boundaries", ConnectorTransactionBoundaries.SUPPORTED)


def load(**options: str) -> object:
    return load_source_connector(parse_source_pipeline({**BASE, **options}))


def test_a_connector_that_keeps_both_promises_is_loaded() -> None:
    assert isinstance(load(**REQUIRED, **CONNECTOR_BOUNDARIES), AnsweringConnector)


@pytest.mark.parametrize("answer", [ExactlyOnceSupport.UNSUPPORTED, None])
def test_required_exactly_once_refuses_a_connector_without_support(
    monkeypatch: pytest.MonkeyPatch, answer: ExactlyOnceSupport | None
) -> None:
    monkeypatch.setattr(AnsweringConnector, "support", answer)
    with pytest.raises(ConfigError, match=r"^exactly\.once\.support=required, but connector"):
        load(**REQUIRED)
    assert isinstance(load(), AnsweringConnector)  # only asked when required


def test_connector_boundaries_refuse_a_connector_that_cannot_define_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(
        AnsweringConnector, "boundaries", ConnectorTransactionBoundaries.UNSUPPORTED
    )
    with pytest.raises(ConfigError, match=r"^transaction\.boundary=connector, but connector"):
        load(**CONNECTOR_BOUNDARIES)
    assert isinstance(load(), AnsweringConnector)  # only asked with connector boundaries


def test_exactly_once_support_raising_is_refused_naming_the_option_then_the_exception(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    boom = KeyError("credentials")
    monkeypatch.setattr(AnsweringConnector, "support", boom)
    with pytest.raises(ConfigError) as refused:
        load(**REQUIRED)
    message = str(refused.value)
    assert message.startswith("exactly.once.support=required, but connector preflight (Answering)")
    assert message.endswith("KeyError: 'credentials'")
    assert refused.value.__cause__ is boom


def test_transaction_boundaries_raising_is_refused_naming_the_option_then_the_exception(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    boom = RuntimeError("no boundaries today")
    monkeypatch.setattr(AnsweringConnector, "boundaries", boom)
    with pytest.raises(ConfigError) as refused:
        load(**REQUIRED, **CONNECTOR_BOUNDARIES)
    message = str(refused.value)
    assert message.startswith("transaction.boundary=connector, but connector preflight (Answering)")
    assert message.endswith("RuntimeError: no boundaries today")
    assert refused.value.__cause__ is boom
