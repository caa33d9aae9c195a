"""Kafka client errors turned into messages: missing ACLs named, unused-group errors ignored."""

from __future__ import annotations

from confluent_kafka import KafkaError, KafkaException

from spark_eos_connect.kafka.clients import (
    KafkaAuthorizationError,
    describe_client,
    is_unused_group_error,
    kafka_error_of,
    missing_acl,
)

ALICE = {
    "security.protocol": "SASL_SSL",
    "sasl.mechanism": "PLAIN",
    "sasl.username": "alice",
    "sasl.password": "s3cret",
}


def test_a_denied_transactional_id_names_the_acl_and_the_principal_but_not_the_password() -> None:
    error = KafkaException(KafkaError(KafkaError.TRANSACTIONAL_ID_AUTHORIZATION_FAILED))

    denied = missing_acl(error, "Write and Describe", "g-c-0", ALICE)

    assert isinstance(denied, KafkaAuthorizationError)
    message = str(denied)
    assert message.startswith(
        "Kafka denied user 'alice' (PLAIN over SASL_SSL): it needs Write and Describe on "
        "TransactionalId 'g-c-0' ("
    )
    assert "s3cret" not in message


def test_each_authorization_error_names_its_resource_type() -> None:
    cases = {
        KafkaError.TOPIC_AUTHORIZATION_FAILED: "Topic",
        KafkaError.GROUP_AUTHORIZATION_FAILED: "Group",
        KafkaError.CLUSTER_AUTHORIZATION_FAILED: "Cluster",
    }
    for code, resource in cases.items():
        denied = missing_acl(KafkaError(code), "Read", "x", {})
        assert denied is not None and f"it needs Read on {resource} 'x'" in str(denied)
        assert "Kafka denied the client (PLAINTEXT)" in str(denied)


def test_other_errors_are_not_taken_for_missing_acls() -> None:
    assert missing_acl(KafkaException(KafkaError(KafkaError._TIMED_OUT)), "Read", "x", {}) is None
    assert missing_acl(RuntimeError("no"), "Read", "x", {}) is None
    assert kafka_error_of(RuntimeError("no")) is None


def test_only_group_authorization_errors_are_the_unused_groups() -> None:
    assert is_unused_group_error(KafkaError(KafkaError.GROUP_AUTHORIZATION_FAILED))
    assert not is_unused_group_error(KafkaError(KafkaError.TOPIC_AUTHORIZATION_FAILED))


def test_descriptions_of_clients() -> None:
    assert describe_client(ALICE) == "user 'alice' (PLAIN over SASL_SSL)"
    assert describe_client({"bootstrap.servers": "h:1"}) == "the client (PLAINTEXT)"
