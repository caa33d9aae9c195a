"""What producing through confluent-kafka raises, for the stores that must not import it."""

from __future__ import annotations

from typing import Any

from confluent_kafka import KafkaException

from spark_eos_connect.kafka.clients import kafka_error_of

PRODUCE_ERRORS: tuple[type[BaseException], ...] = (KafkaException, SystemError)
"""What `produce` or `flush` raise when the client fails: librdkafka's errors, and the
SystemError confluent-kafka raises when a fatal error arrives while a delivery callback runs."""


def kafka_error_in(exc: BaseException) -> Any:
    """The `KafkaError` of `exc` or of the first exception in its cause/context chain, else
    None."""
    seen: BaseException | None = exc
    while seen is not None:
        error = kafka_error_of(seen)
        if error is not None:
            return error
        seen = seen.__cause__ or seen.__context__
    return None
