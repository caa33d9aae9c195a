"""A wrong `kafka.bootstrap.servers` is reported with the option's value and the time waited,
where the driver first talks to Kafka: the Kafka reader of a sink (`initialOffset`) and the
source coordinator (`ensure_reachable` before its first admin call). Against a closed port."""

from __future__ import annotations

import time

import pytest

from spark_eos_connect.kafka import clients
from spark_eos_connect.kafka.broker import free_port
from spark_eos_connect.kafka.clients import KafkaUnreachableError, ensure_reachable


def test_a_closed_port_is_named_with_the_time_waited() -> None:
    address = f"127.0.0.1:{free_port()}"
    started = time.monotonic()

    with pytest.raises(KafkaUnreachableError) as caught:
        ensure_reachable({"bootstrap.servers": address}, timeout_s=2)

    assert time.monotonic() - started < 15
    message = str(caught.value)
    assert f"kafka.bootstrap.servers={address}: no broker answered within " in message
    assert " s (" in message


def test_the_kafka_reader_reports_it_at_its_first_call(monkeypatch: pytest.MonkeyPatch) -> None:
    from spark_eos_connect.spark.kafka_stream import EosConnectKafkaStreamReader

    monkeypatch.setattr(clients, "REACHABLE_TIMEOUT_S", 2.0)
    address = f"127.0.0.1:{free_port()}"
    reader = EosConnectKafkaStreamReader(
        {"name": "unreachable", "topics": "t", "kafka.bootstrap.servers": address}
    )

    with pytest.raises(KafkaUnreachableError, match=f"kafka.bootstrap.servers={address}"):
        reader.initialOffset()
