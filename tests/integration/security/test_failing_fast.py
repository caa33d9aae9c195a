"""Authentication and protocol mistakes fail at once with one clear message: a PLAINTEXT
client against the SASL_SSL listener is told to check `kafka.security.protocol`, and a job with
a wrong password ends with the refusal as its one error before it starts Spark, without a flood
of client log lines or a minute spent fencing with the refused credentials."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from spark_eos_connect.jvm.broker import LocalKafkaBroker
from spark_eos_connect.kafka.clients import KafkaUnreachableError, ensure_reachable

from .conftest import SECURITY_MARKS

pytestmark = SECURITY_MARKS


def test_a_plaintext_client_against_a_secured_listener_is_told_to_check_the_protocol(
    secured_broker: LocalKafkaBroker,
) -> None:
    with pytest.raises(KafkaUnreachableError) as refused:
        ensure_reachable({"bootstrap.servers": secured_broker.bootstrap_servers}, timeout_s=60)

    message = str(refused.value)
    assert "closed the connection during the handshake" in message
    assert "check kafka.security.protocol (the client uses PLAINTEXT)" in message
    assert "no broker answered" not in message


def test_a_job_with_a_wrong_password_ends_with_the_refusal_alone(
    secured_broker: LocalKafkaBroker,
    run_job: Callable[..., Any],
    unique_name: Callable[[str], str],
    tmp_path: Path,
) -> None:
    config = secured_broker.client_config()
    secret = config["sasl.password"]
    config["sasl.password"] = "not-" + secret
    settings = [
        arg
        for key, value in config.items()
        if key != "bootstrap.servers"
        for arg in ("--kafka", f"{key}={value}")
    ]

    started = time.monotonic()
    result = run_job(
        "source_to_kafka.py",
        *["--name", unique_name("refused"), "--connector-class", "Generator"],
        *["--option", f"topic={unique_name('refused')}", "--option", "max.records=10"],
        *["--bootstrap-servers", config["bootstrap.servers"], *settings],
        *["--checkpoint", str(tmp_path / "ck"), "--until-idle", "--timeout", "120"],
    )

    print(f"the job with a wrong password exited after {time.monotonic() - started:.1f} s")

    output = result.stdout + result.stderr
    assert result.returncode != 0
    last = output.strip().splitlines()[-1]  # the job's final line names the refusal
    assert "source_to_kafka: Kafka refused user 'admin' (SCRAM-SHA-512 over SASL_SSL)" in last
    assert "the streaming query" not in output  # refused before Spark and the query started
    assert "SparkSession" not in output and "open transactions" not in output
    client_lines = [line for line in output.splitlines() if line.startswith("%")]
    assert len(client_lines) < 10, client_lines[:10]
    assert secret not in output
