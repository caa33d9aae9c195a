"""Every client's librdkafka defaults (`kafka.client_settings`)."""

from __future__ import annotations

from spark_eos_connect.kafka.client_settings import CLIENT_DEFAULTS, with_client_defaults


def test_defaults_apply_unless_the_config_sets_them() -> None:
    config = {"bootstrap.servers": "b:9092"}

    assert with_client_defaults(config) == {
        "reconnect.backoff.ms": 20,
        "bootstrap.servers": "b:9092",
    }
    assert with_client_defaults({"reconnect.backoff.ms": 500})["reconnect.backoff.ms"] == 500
    assert config == {"bootstrap.servers": "b:9092"}  # not changed in place
    assert CLIENT_DEFAULTS == {"reconnect.backoff.ms": 20}
