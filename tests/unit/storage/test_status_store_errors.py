"""What a failed status write says: a producer already fatal when `produce` is called raises
only librdkafka's `_FATAL`; the store names the fatal error behind it (here a refused producer
id, which means Write on the status topic is missing)."""

from __future__ import annotations

from confluent_kafka import KafkaError, KafkaException

from spark_eos_connect.kafka.errors import KafkaAuthorizationError
from spark_eos_connect.storage.status_store import KafkaStatusStore, StatusStoreError

KEY = "status-connector-c"


class FatalProducer:
    """A producer whose pending error callback carries `error` (served by `poll`)."""

    def __init__(self, store: KafkaStatusStore, error: KafkaError) -> None:
        self.store, self.error, self.polls = store, error, 0

    def poll(self, timeout: float) -> int:
        self.polls += 1
        self.store._client_error(self.error)
        return 1


class RaisingProducer:
    """A producer whose `poll` raises the fatal error instead of passing it to `error_cb`."""

    def __init__(self, error: KafkaError) -> None:
        self.error = error

    def poll(self, timeout: float) -> int:
        raise KafkaException(self.error)


def store() -> KafkaStatusStore:
    return KafkaStatusStore({"bootstrap.servers": "127.0.0.1:1"}, "status-t")


def test_a_fatal_placeholder_is_named_by_the_fatal_error_behind_it() -> None:
    status = store()
    refused = KafkaError(KafkaError.CLUSTER_AUTHORIZATION_FAILED, fatal=True)
    producer = FatalProducer(status, refused)

    error = status._failed(KEY, KafkaException(KafkaError(KafkaError._FATAL)), producer)

    assert producer.polls == 1
    assert isinstance(error, KafkaAuthorizationError)
    assert "needs Write on Topic 'status-t'" in str(error)


def test_without_a_fatal_error_reported_the_placeholder_is_what_is_said() -> None:
    status = store()

    error = status._failed(KEY, KafkaException(KafkaError(KafkaError._FATAL)))

    assert isinstance(error, StatusStoreError)
    assert f"Writing {KEY} to status topic 'status-t' failed" in str(error)


def test_transient_client_errors_are_not_taken_for_the_fatal_one() -> None:
    status = store()
    status._client_error(KafkaError(KafkaError._TRANSPORT))

    error = status._failed(KEY, KafkaException(KafkaError(KafkaError._FATAL)), None)

    assert isinstance(error, StatusStoreError)


def test_a_fatal_error_raised_by_the_poll_that_serves_it_is_named_too() -> None:
    status = store()
    refused = KafkaError(KafkaError.CLUSTER_AUTHORIZATION_FAILED, fatal=True)

    error = status._failed(
        KEY, KafkaException(KafkaError(KafkaError._FATAL)), RaisingProducer(refused)
    )

    assert isinstance(error, KafkaAuthorizationError)
    assert "needs Write on Topic 'status-t'" in str(error)


def test_a_refused_producer_id_in_a_delivery_report_names_the_status_topic() -> None:
    status = store()
    refused = KafkaError(KafkaError.CLUSTER_AUTHORIZATION_FAILED, fatal=True)

    error = status._failed(KEY, refused)

    assert isinstance(error, KafkaAuthorizationError)
    assert "needs Write on Topic 'status-t'" in str(error)
