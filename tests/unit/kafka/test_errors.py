"""`kafka.errors`, the one Kafka error mapper: the error behind an exception, the predicates on
codes (retriable, stale metadata, unused group, ...), missing ACLs named in messages."""

from __future__ import annotations

import pytest
from confluent_kafka import KafkaError, KafkaException

from spark_eos_connect.kafka.errors import (
    KafkaAuthorizationError,
    KafkaClientError,
    describe_client,
    error_code,
    error_name,
    is_no_group,
    is_partition_eof,
    is_retriable,
    is_topic_denied,
    is_topic_exists,
    is_unused_group_error,
    kafka_error_of,
    missing_acl,
    needs_new_metadata,
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


def test_fatal_and_abortable_transaction_errors_are_not_retriable() -> None:
    fatal = KafkaError(KafkaError._FENCED, "fenced", fatal=True)
    abortable = KafkaError(KafkaError._TIMED_OUT, "abort", txn_requires_abort=True)

    assert not is_retriable(KafkaException(fatal))
    assert not is_retriable(KafkaException(abortable))
    assert is_retriable(KafkaException(KafkaError(KafkaError._TIMED_OUT)))
    assert not is_retriable(ValueError("not Kafka"))


@pytest.mark.parametrize(
    ("code", "renew"),
    [
        (KafkaError.FENCED_LEADER_EPOCH, True),
        (KafkaError.NOT_LEADER_FOR_PARTITION, True),
        (KafkaError.UNKNOWN_TOPIC_OR_PART, True),
        (KafkaError._TIMED_OUT, False),
        (KafkaError.NOT_COORDINATOR, False),
    ],
)
def test_leadership_errors_ask_for_new_metadata(code: int, renew: bool) -> None:
    assert needs_new_metadata(KafkaError(code)) is renew
    assert needs_new_metadata(None) is False


def test_the_error_behind_an_exception_or_an_error_object() -> None:
    error = KafkaError(KafkaError.GROUP_ID_NOT_FOUND)

    assert kafka_error_of(KafkaException(error)) is error and kafka_error_of(error) is error
    assert kafka_error_of(KafkaException()) is None
    assert error_code(KafkaException(error)) == KafkaError.GROUP_ID_NOT_FOUND
    assert error_name(error) == "GROUP_ID_NOT_FOUND"
    assert error_code(ValueError("no")) is None and error_name(ValueError("no")) is None
    assert KafkaClientError is KafkaException


def test_predicates_on_codes() -> None:
    assert is_no_group(KafkaException(KafkaError(KafkaError.GROUP_ID_NOT_FOUND)))
    assert is_no_group(KafkaError(KafkaError._UNKNOWN_GROUP))
    assert not is_no_group(KafkaError(KafkaError.NOT_COORDINATOR))
    assert is_partition_eof(KafkaError(KafkaError._PARTITION_EOF))
    assert not is_partition_eof(KafkaError(KafkaError._TIMED_OUT))
    assert is_topic_exists(KafkaException(KafkaError(KafkaError.TOPIC_ALREADY_EXISTS)))
    assert not is_topic_exists(KafkaException(KafkaError(KafkaError.TOPIC_AUTHORIZATION_FAILED)))
    assert is_topic_denied(KafkaException(KafkaError(KafkaError.TOPIC_AUTHORIZATION_FAILED)))
    assert not is_topic_denied(RuntimeError("no"))
