"""Spark's Kafka source options from `delta_sink`'s: librdkafka settings translated to the Java
client's, anything untranslatable refused by name."""

from __future__ import annotations

import pytest

from spark_eos_connect.delta.kafka_input import (
    java_client_settings,
    sasl_jaas_config,
    spark_kafka_options,
)
from spark_eos_connect.errors import ConfigError

SASL_SSL = {
    "bootstrap.servers": "b:9093",
    "security.protocol": "SASL_SSL",
    "sasl.mechanism": "SCRAM-SHA-512",
    "sasl.username": "alice",
    "sasl.password": "s3cret",
    "ssl.ca.location": "/etc/kafka/ca.pem",
}


def test_sasl_ssl_settings_become_the_java_clients() -> None:
    assert java_client_settings(SASL_SSL) == {
        "isolation.level": "read_committed",
        "bootstrap.servers": "b:9093",
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "SCRAM-SHA-512",
        "ssl.truststore.location": "/etc/kafka/ca.pem",
        "ssl.truststore.type": "PEM",
        "sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule required "
        'username="alice" password="s3cret";',
    }


def test_renamed_settings_and_hostname_verification_off() -> None:
    settings = java_client_settings(
        {
            "bootstrap.servers": "b:9092",
            "fetch.wait.max.ms": "50",
            "socket.receive.buffer.bytes": "65536",
            "ssl.endpoint.identification.algorithm": "none",
        }
    )

    assert settings["fetch.max.wait.ms"] == "50"
    assert settings["receive.buffer.bytes"] == "65536"
    assert settings["ssl.endpoint.identification.algorithm"] == ""


def test_jaas_values_are_quoted_and_escaped() -> None:
    config = sasl_jaas_config("plain", 'bob"', "a\\b")

    assert config == (
        "org.apache.kafka.common.security.plain.PlainLoginModule required "
        'username="bob\\"" password="a\\\\b";'
    )


def test_a_setting_without_translation_is_refused_by_name() -> None:
    with pytest.raises(ConfigError, match=r"kafka.enable.ssl.certificate.verification.*eosconnect"):
        java_client_settings({"bootstrap.servers": "b", "enable.ssl.certificate.verification": "f"})


def test_a_username_needs_a_password_and_a_mechanism_taking_one() -> None:
    with pytest.raises(ConfigError, match="go together"):
        java_client_settings({"bootstrap.servers": "b", "sasl.username": "alice"})
    with pytest.raises(ConfigError, match=r"sasl\.mechanism=OAUTHBEARER"):
        java_client_settings({**SASL_SSL, "sasl.mechanism": "OAUTHBEARER"})


def test_source_options_follow_the_sink_options() -> None:
    options = {
        "name": "orders-delta",
        "topics": "orders,refunds",
        "path": "/t",
        "maxRecordsPerTrigger": "500",
        "startingOffsets": "latest",
        "kafkaConsumer.pollTimeoutMs": "5000",
        "kafka.bootstrap.servers": "b:9092",
    }

    source = spark_kafka_options(options, {"bootstrap.servers": "b:9092"}, None)

    assert source == {
        "kafka.isolation.level": "read_committed",
        "kafka.bootstrap.servers": "b:9092",
        "subscribe": "orders,refunds",
        "includeHeaders": "true",
        "startingOffsets": "latest",
        "maxOffsetsPerTrigger": "500",
        "kafkaConsumer.pollTimeoutMs": "5000",
    }


def test_the_tables_offsets_win_over_starting_offsets_and_a_regex_subscribes_by_pattern() -> None:
    options = {"name": "n", "topics.regex": "orders-.*", "kafka.bootstrap.servers": "b:9092"}
    resume = '{"orders-1": {"0": 8}}'

    source = spark_kafka_options(options, {"bootstrap.servers": "b:9092"}, resume)

    assert source["subscribePattern"] == "orders-.*" and "subscribe" not in source
    assert source["startingOffsets"] == resume
    assert spark_kafka_options(options, {"bootstrap.servers": "b"}, None)["startingOffsets"] == (
        "earliest"
    )
