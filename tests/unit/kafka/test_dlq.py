"""`kafka.dlq`: the dead letter queue's producer is made on first use and collects failed
deliveries; flushing one that never sent anything does nothing."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from spark_eos_connect.kafka.dlq import DlqProducer


class FlushingProducer:
    """A producer recording what is produced, whose `flush` leaves `left` records undelivered."""

    def __init__(self, left: int) -> None:
        self.left = left
        self.flushed: list[float] = []
        self.produced: list[dict[str, Any]] = []

    def produce(self, topic: str, value: Any = None, key: Any = None, **extra: Any) -> None:
        self.produced.append({"topic": topic, "value": value, "key": key, **extra})

    def poll(self, timeout: float) -> int:
        return 0

    def flush(self, timeout_s: float) -> int:
        self.flushed.append(timeout_s)
        return self.left


def test_a_dlq_producer_that_never_sent_has_nothing_to_flush() -> None:
    assert DlqProducer({"bootstrap.servers": "127.0.0.1:1"}, "dlq").flush(1.0) is None


def test_records_go_through_one_producer_and_flush_says_what_is_left() -> None:
    producer = FlushingProducer(2)
    made: list[dict[str, Any]] = []

    def make(kafka: Mapping[str, Any]) -> Any:
        made.append(dict(kafka))
        return producer

    dlq = DlqProducer({"bootstrap.servers": "h:1"}, "dlq", make)

    dlq.send(b"v", b"k", [("h", b"1")], 42)
    dlq.send(b"w", None, [], None)

    assert made == [{"bootstrap.servers": "h:1"}]
    first, second = producer.produced
    assert (first["topic"], first["value"], first["key"]) == ("dlq", b"v", b"k")
    assert first["headers"] == [("h", b"1")] and first["timestamp"] == 42
    assert "timestamp" not in second and second["key"] is None
    assert dlq.flush(3.0) == 2 and producer.flushed == [3.0]
    assert dlq.flush(3.0) is None


def test_failed_deliveries_are_kept_as_text() -> None:
    dlq = DlqProducer({}, "dlq")
    failure: Any = "Broker: Message size too large"

    dlq._delivered(failure, None)
    dlq._delivered(None, None)

    assert dlq.delivery_errors == ["Broker: Message size too large"]
