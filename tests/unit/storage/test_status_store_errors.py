"""What a failed status write says: a producer already fatal when `produce` is called raises
only librdkafka's `_FATAL`; the store names the fatal error behind it (here a refused producer
id, which means Write on the status topic is missing)."""

from __future__ import annotations

import pytest
from confluent_kafka import KafkaError, KafkaException

from spark_eos_connect.kafka.errors import KafkaAuthorizationError
from spark_eos_connect.storage.status_store import KafkaStatusStore, StatusStoreError

KEY = "status-connector-c"


class FatalProducer:
    """A producer that passes its fatal `error` to `error_cb` from `poll` (what librdkafka's
    C API does; confluent-kafka raises it instead, `RaisingProducer`)."""

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


class PurgingProducer:
    """A producer already refused an id: the record's delivery report says only that it was
    purged, and the fatal error comes from `poll` (as confluent-kafka raises it)."""

    def __init__(self, error: KafkaError) -> None:
        self.error, self.purged = error, False

    def produce(self, topic: str, value: object, key: object, **extra: object) -> None:
        self.on_delivery = extra["on_delivery"]

    def flush(self, timeout: float) -> int:
        self.on_delivery(KafkaError(KafkaError._PURGE_QUEUE), None)
        return 0

    def poll(self, timeout: float) -> int:
        raise KafkaException(self.error)

    def purge(self) -> None:
        self.purged = True


def test_a_purged_record_of_a_producer_refused_an_id_names_the_status_topic() -> None:
    status = store()
    status._partitions = 1
    producer = PurgingProducer(KafkaError(KafkaError.CLUSTER_AUTHORIZATION_FAILED, fatal=True))
    status._producer = producer

    with pytest.raises(KafkaAuthorizationError, match="needs Write on Topic 'status-t'"):
        status._send(KEY, b"{}")

    assert producer.purged
    assert status._producer is None  # the next write starts a new producer


def test_a_non_fatal_refusal_keeps_the_producer() -> None:
    status = store()
    status._partitions = 1
    producer = PurgingProducer(KafkaError(KafkaError.CLUSTER_AUTHORIZATION_FAILED, fatal=True))
    producer.flush = lambda timeout: (  # type: ignore[method-assign]
        producer.on_delivery(KafkaError(KafkaError.TOPIC_AUTHORIZATION_FAILED), None) or 0
    )
    producer.poll = lambda timeout: 0  # type: ignore[method-assign]
    status._producer = producer

    with pytest.raises(KafkaAuthorizationError, match="needs Write on Topic 'status-t'"):
        status._send(KEY, b"{}")

    assert status._producer is producer and not producer.purged
