"""The local broker's security settings: listeners, SASL, the authorizer, TLS and client configs."""

from __future__ import annotations

from pathlib import Path

import pytest

from spark_eos_connect.errors import SetupError
from spark_eos_connect.jvm.broker import broker_properties
from spark_eos_connect.kafka import security as sec

SASL = sec.BrokerSecurity("sasl", "pw")
SSL = sec.BrokerSecurity("sasl_ssl", "pw", Path("/s/broker.p12"), "store-pw", Path("/s/ca.pem"))


def test_none_keeps_the_plaintext_layout() -> None:
    props = broker_properties(9092, 9093, Path("/logs"))

    assert props == broker_properties(9092, 9093, Path("/logs"), sec.BrokerSecurity())
    assert props["listeners"] == "PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093"
    assert props["advertised.listeners"] == "PLAINTEXT://127.0.0.1:9092"
    assert props["listener.security.protocol.map"] == "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT"
    assert props["inter.broker.listener.name"] == "PLAINTEXT"
    assert props["controller.listener.names"] == "CONTROLLER"
    assert not [k for k in props if "sasl" in k or "ssl" in k or "authorizer" in k]


@pytest.mark.parametrize(
    ("security", "protocol"), [(SASL, "SASL_PLAINTEXT"), (SSL, "SASL_SSL")], ids=["sasl", "ssl"]
)
def test_secured_modes_serve_clients_and_the_broker_itself_on_one_sasl_listener(
    security: sec.BrokerSecurity, protocol: str
) -> None:
    props = broker_properties(9092, 9093, Path("/logs"), security)

    assert props["listeners"] == f"{protocol}://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093"
    assert props["advertised.listeners"] == f"{protocol}://127.0.0.1:9092"
    assert props["listener.security.protocol.map"] == (
        f"{protocol}:{protocol},CONTROLLER:SASL_PLAINTEXT"
    )
    assert props["inter.broker.listener.name"] == protocol
    assert props["sasl.enabled.mechanisms"] == "SCRAM-SHA-512,PLAIN"
    listener = protocol.lower()
    assert props[f"listener.name.{listener}.plain.sasl.jaas.config"] == sec.plain_jaas(
        "admin", "pw"
    )
    assert props[f"listener.name.{listener}.scram-sha-512.sasl.jaas.config"].endswith("required;")


def test_the_controller_listener_authenticates_the_broker_as_the_super_user() -> None:
    props = sec.sasl_properties(SASL)

    assert props["sasl.mechanism.controller.protocol"] == "PLAIN"
    assert props["sasl.mechanism.inter.broker.protocol"] == "PLAIN"
    assert props["listener.name.controller.sasl.enabled.mechanisms"] == "PLAIN"
    assert props["listener.name.controller.plain.sasl.jaas.config"] == sec.plain_jaas("admin", "pw")


def test_acls_are_enforced_with_admin_as_the_only_super_user() -> None:
    props = sec.sasl_properties(SASL)

    assert props["authorizer.class.name"] == (
        "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
    )
    assert props["super.users"] == "User:admin"
    assert props["allow.everyone.if.no.acl.found"] == "false"


def test_plain_jaas_accepts_exactly_its_user() -> None:
    assert sec.plain_jaas("admin", "s3") == (
        "org.apache.kafka.common.security.plain.PlainLoginModule required "
        'username="admin" password="s3" user_admin="s3";'
    )


def test_sasl_ssl_serves_the_keystore_and_trusts_the_pem_for_its_own_connections() -> None:
    assert sec.ssl_properties(SASL) == {}
    assert sec.ssl_properties(SSL) == {
        "ssl.keystore.type": "PKCS12",
        "ssl.keystore.location": "/s/broker.p12",
        "ssl.keystore.password": "store-pw",
        "ssl.key.password": "store-pw",
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": "/s/ca.pem",
    }
    with pytest.raises(SetupError, match="keystore"):
        sec.ssl_properties(sec.BrokerSecurity("sasl_ssl", "pw"))


def test_storage_format_creates_the_super_users_scram_credentials() -> None:
    assert sec.scram_format_arguments(sec.BrokerSecurity()) == []
    assert sec.scram_format_arguments(SASL) == [
        "--add-scram",
        "SCRAM-SHA-512=[name=admin,password=pw]",
    ]


def test_client_settings_per_mode() -> None:
    assert sec.client_security_config(sec.BrokerSecurity()) == {}
    assert sec.client_security_config(SASL) == {
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.username": "admin",
        "sasl.password": "pw",
    }
    assert sec.client_security_config(SSL, "alice", "a-pw", "PLAIN") == {
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "PLAIN",
        "sasl.username": "alice",
        "sasl.password": "a-pw",
        "ssl.ca.location": "/s/ca.pem",
    }


def test_an_unknown_mode_is_refused() -> None:
    with pytest.raises(SetupError, match="none, sasl, sasl_ssl"):
        sec.BrokerSecurity("ssl")


def test_client_descriptions_never_show_the_password() -> None:
    config = sec.client_security_config(SSL, "alice", "a-secret")

    assert sec.describe_client(config) == "user 'alice' (SCRAM-SHA-512 over SASL_SSL)"
    assert sec.describe_client({}) == "the client (PLAINTEXT)"


def test_passwords_are_random_and_safe_in_jaas_and_format_arguments() -> None:
    first, second = sec.new_password(), sec.new_password()

    assert first != second
    assert first.isalnum() and len(first) >= 32
