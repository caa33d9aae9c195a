"""`eosconnect kafka --security sasl` prints the super user's client settings, then
`bootstrap.servers=`; those settings log in, and the broker refuses PLAINTEXT clients."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from spark_eos_connect.kafka.clients import KafkaTimeoutError
from spark_eos_connect.kafka.security import verify_credentials

from .conftest import SECURITY_MARKS

pytestmark = SECURITY_MARKS


def read_settings(process: subprocess.Popen[str]) -> dict[str, str]:
    """The `key=value` lines the command prints, up to and including `bootstrap.servers=`."""
    assert process.stdout is not None
    settings: dict[str, str] = {}
    for line in process.stdout:
        key, _, value = line.strip().partition("=")
        settings[key] = value
        if key == "bootstrap.servers":
            return settings
    raise AssertionError(f"the command exited with {process.wait()} before announcing itself")


def test_secured_cli_broker_announces_settings_that_log_in(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "spark_eos_connect.apps.cli", "kafka", "--security", "sasl"]
    process = subprocess.Popen(
        [*command, "--data-dir", str(tmp_path / "data")], stdout=subprocess.PIPE, text=True
    )
    try:
        settings = read_settings(process)

        assert settings["security.protocol"] == "SASL_PLAINTEXT"
        assert settings["sasl.mechanism"] == "SCRAM-SHA-512"
        assert settings["sasl.username"] == "admin"
        verify_credentials(settings, timeout_s=30)
        plaintext = {"bootstrap.servers": settings["bootstrap.servers"], "log_level": 0}
        with pytest.raises(KafkaTimeoutError):
            verify_credentials(plaintext, timeout_s=3)
    finally:
        process.send_signal(signal.SIGTERM)
        exit_code = process.wait(timeout=60)
    assert exit_code == 0
