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


class _Error:
    """A librdkafka `KafkaError` as `refusal` reads it."""

    def __init__(self, name: str, text: str = "") -> None:
        self._name, self._text = name, text

    def name(self) -> str:
        return self._name

    def str(self) -> str:
        return self._text


REFUSED = _Error("_TRANSPORT", "a:1/bootstrap: Connect to ipv4#a:1 failed: Connection refused")


def test_refusal_needs_every_broker_down_and_only_refusals_since() -> None:
    down = _Error("_ALL_BROKERS_DOWN", "1/1 brokers are down")
    timed_out = _Error("_TRANSPORT", "a:1/bootstrap: Connection setup timed out")

    assert clients.refusal([REFUSED, down, REFUSED]) == REFUSED.str()
    assert clients.refusal([REFUSED]) is None  # another broker may still answer
    assert clients.refusal([REFUSED, down, timed_out]) is None  # not a refusal: wait
    assert clients.refusal([_Error("_RESOLVE", "no such host"), down]) == "no such host"


@pytest.mark.parametrize(
    ("address", "said"),
    [
        ("127.0.0.1:{port}", "Connection refused"),
        ("no-such-host.invalid:9092", "Failed to resolve 'no-such-host.invalid:9092'"),
    ],
    ids=["refused", "unresolvable"],
)
def test_fail_fast_names_a_refused_or_unresolvable_address_in_seconds(
    address: str, said: str
) -> None:
    address = address.format(port=free_port())
    started = time.monotonic()

    with pytest.raises(KafkaUnreachableError) as caught:
        ensure_reachable({"bootstrap.servers": address}, timeout_s=30, fail_fast=True)

    assert time.monotonic() - started < 10
    message = str(caught.value)
    assert message.startswith(f"kafka.bootstrap.servers={address}: ")
    assert said in message
    assert message.endswith("check the address and that the brokers are up")
