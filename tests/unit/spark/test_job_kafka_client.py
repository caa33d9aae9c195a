"""`job_kafka_client`: the jobs' own Kafka client settings, references resolved as the driver
resolves a stage's `kafka.*` options, errors naming the reference and never the value."""

from __future__ import annotations

from pathlib import Path

import pytest

from spark_eos_connect.errors import ConfigError
from spark_eos_connect.spark.job_support import job_kafka_client

SECRET = "s3cr3t-planted-password"


@pytest.fixture
def secrets(tmp_path: Path) -> Path:
    path = tmp_path / "secrets.properties"
    path.write_text(f"kafka.password={SECRET}\nservers=broker:9093\n")
    return path


def test_resolves_references_in_the_kafka_options_only(
    secrets: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JOB_CLIENT_USER", "alice")
    options = {
        "name": "job",
        "topic": "${file:" + f"{secrets}:servers" + "}",  # not a client setting: left out
        "kafka.bootstrap.servers": "${file:" + f"{secrets}:servers" + "}",
        "kafka.sasl.username": "${env:JOB_CLIENT_USER}",
        "kafka.sasl.password": "${file:" + f"{secrets}:kafka.password" + "}",
        "kafka.security.protocol": "SASL_SSL",
    }

    assert job_kafka_client(options) == {
        "bootstrap.servers": "broker:9093",
        "sasl.username": "alice",
        "sasl.password": SECRET,
        "security.protocol": "SASL_SSL",
    }


def test_uses_the_providers_the_stage_options_enable(secrets: Path) -> None:
    reference = "${file:" + f"{secrets}:kafka.password" + "}"
    options = {
        "config.providers": "env",
        "kafka.bootstrap.servers": "b:1",
        "kafka.sasl.password": reference,
    }

    with pytest.raises(ConfigError) as refused:
        job_kafka_client(options)

    assert str(refused.value).startswith(
        f"Cannot resolve {reference} in option kafka.sasl.password: no config provider 'file'"
    )
    assert job_kafka_client({**options, "config.providers": ""})["sasl.password"] == reference


def test_a_missing_key_names_the_option_and_the_reference_not_a_value(secrets: Path) -> None:
    reference = "${file:" + f"{secrets}:absent" + "}"
    options = {
        "kafka.bootstrap.servers": "b:1",
        "kafka.sasl.password": "${file:" + f"{secrets}:kafka.password" + "}",
        "kafka.ssl.key.password": reference,
    }

    with pytest.raises(ConfigError) as refused:
        job_kafka_client(options)

    message = str(refused.value)
    assert message == (
        f"Cannot resolve {reference} in option kafka.ssl.key.password: {secrets} has no key absent"
    )
    assert SECRET not in message
