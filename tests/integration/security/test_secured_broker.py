"""The SASL_SSL local broker: a principal with ACLs writes and reads transactionally, the super
user logs in with SCRAM-SHA-512 or PLAIN, bad credentials and an untrusted certificate fail fast."""

from __future__ import annotations

import uuid
from collections.abc import Callable

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AclOperation, ResourceType

from spark_eos_connect.jvm.broker import LocalKafkaBroker
from spark_eos_connect.kafka.clients import admin_client, ensure_topic, read_to_end
from spark_eos_connect.kafka.security import KafkaAuthenticationError, verify_credentials

from .conftest import SECURITY_MARKS, Principal, allow

pytestmark = SECURITY_MARKS


def test_a_principal_with_acls_writes_and_reads_transactionally_over_sasl_ssl(
    secured_broker: LocalKafkaBroker, principal_factory: Callable[[str], Principal]
) -> None:
    alice = principal_factory("alice")
    topic, txn = f"secured-{uuid.uuid4().hex[:8]}", f"txn-{uuid.uuid4().hex[:8]}"
    ensure_topic(admin_client(secured_broker.client_config()), topic)
    secured_broker.create_acls(
        [
            *(allow(alice.user, op, ResourceType.TOPIC, topic) for op in _WRITE_READ),
            allow(alice.user, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, txn),
            allow(alice.user, AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, txn),
            allow(alice.user, AclOperation.READ, ResourceType.GROUP, READER_GROUP),
        ]
    )
    assert alice.config["security.protocol"] == "SASL_SSL"

    producer = Producer({**alice.config, "transactional.id": txn})
    producer.init_transactions(30)
    producer.begin_transaction()
    producer.produce(topic, b"committed")
    producer.commit_transaction(30)
    producer.begin_transaction()
    producer.produce(topic, b"aborted")
    producer.abort_transaction(30)

    assert [r.value for r in read_to_end(alice.config, [topic], timeout_s=30)] == [b"committed"]


_WRITE_READ = (AclOperation.WRITE, AclOperation.READ, AclOperation.DESCRIBE)
READER_GROUP = "eosconnect-reader-unused"  # read_to_end's consumers look their group up


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-512", "PLAIN"])
def test_the_super_user_logs_in_with_either_mechanism(
    secured_broker: LocalKafkaBroker, mechanism: str
) -> None:
    config = secured_broker.client_config(mechanism=mechanism)

    verify_credentials(config, timeout_s=30)

    assert admin_client(config).list_topics(timeout=10).brokers


def test_a_wrong_password_fails_fast_with_an_authentication_error(
    secured_broker: LocalKafkaBroker, principal_factory: Callable[[str], Principal]
) -> None:
    alice = principal_factory("alice")

    with pytest.raises(KafkaAuthenticationError) as refused:
        verify_credentials({**alice.config, "sasl.password": "wrong"}, timeout_s=60)

    message = str(refused.value)
    assert f"user '{alice.name}' (SCRAM-SHA-512 over SASL_SSL)" in message
    assert "invalid credentials" in message
    assert "wrong" not in message and alice.password not in message


def test_a_client_that_does_not_trust_the_certificate_fails_fast(
    secured_broker: LocalKafkaBroker,
) -> None:
    config = secured_broker.client_config()
    del config["ssl.ca.location"]  # OpenSSL's default trust store: not the broker's certificate

    with pytest.raises(KafkaAuthenticationError, match="certificate verify failed"):
        verify_credentials(config, timeout_s=60)
