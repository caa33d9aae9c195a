"""A source query whose Kafka credentials the brokers refuse fails at its start with an
authentication error naming the user, not after librdkafka's timeouts, and writes nothing."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from spark_eos_connect.jvm.broker import LocalKafkaBroker

from .acl_table import grants
from .conftest import SECURITY_MARKS, Principal
from .paths import (
    FAIL_WITHIN_S,
    committed,
    kafka_options,
    make_deployment,
    principal_with,
    start_source_query,
)

pytestmark = SECURITY_MARKS


def test_a_wrong_password_fails_the_query_at_start_naming_the_user(
    spark: Any,
    secured_broker: LocalKafkaBroker,
    principal_factory: Callable[[str], Principal],
    tmp_path: Path,
) -> None:
    deployment = make_deployment(secured_broker)
    principal = principal_with(secured_broker, principal_factory, grants(deployment.pipeline))
    kafka = kafka_options(principal)
    secret = kafka["kafka.sasl.password"]
    kafka["kafka.sasl.password"] = "not-" + secret

    query = start_source_query(spark, deployment, kafka, tmp_path)
    try:
        with pytest.raises(Exception) as refused:  # Spark wraps the driver's error
            query.awaitTermination(FAIL_WITHIN_S)
            pytest.fail(f"with a wrong password the query ran on for {FAIL_WITHIN_S}s")
    finally:
        query.stop()

    message = str(refused.value)
    user = kafka["kafka.sasl.username"]
    assert f"KafkaAuthenticationError: Kafka refused user '{user}' (SCRAM-SHA-512" in message
    assert secret not in message
    assert committed(secured_broker, deployment.topic) == []
