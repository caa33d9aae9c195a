"""`eosconnect` answers a wrong broker address in seconds, naming it, without librdkafka's
log lines unless --verbose; `-X bootstrap.servers` stands for --bootstrap-servers (issue 40)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from spark_eos_connect.jvm.broker import free_port


def eosconnect(*args: str) -> tuple[subprocess.CompletedProcess[str], float]:
    """`eosconnect ARGS` in a child process (librdkafka writes to its standard error itself),
    and the seconds it took."""
    env = {k: v for k, v in os.environ.items() if k != "EOSCONNECT_BOOTSTRAP_SERVERS"}
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "spark_eos_connect.apps.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
    )
    return done, time.monotonic() - started


@pytest.mark.parametrize("command", [["stop", "x"], ["connectors"], ["offsets", "get", "x"]])
def test_a_refused_address_is_named_in_seconds_without_librdkafka_lines(
    command: list[str],
) -> None:
    address = f"127.0.0.1:{free_port()}"

    done, took = eosconnect(*command, "--bootstrap-servers", address)

    assert done.returncode == 1
    assert took < 10, f"took {took:.1f} s"
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"eosconnect {command[0]}: kafka.bootstrap.servers={address}: ")
    assert "Connection refused" in lines[0]


def test_x_bootstrap_servers_stands_for_the_option() -> None:
    address = f"127.0.0.1:{free_port()}"

    done, _ = eosconnect("status", "x", "-X", f"bootstrap.servers={address}")

    assert done.returncode == 1
    assert done.stderr.startswith(f"eosconnect status: kafka.bootstrap.servers={address}: ")


def test_two_different_addresses_are_a_usage_error() -> None:
    done, _ = eosconnect(
        "status", "x", "--bootstrap-servers", "a:9092", "-X", "bootstrap.servers=b:9092"
    )

    assert done.returncode == 2
    assert "--bootstrap-servers a:9092 and -X bootstrap.servers=b:9092 differ" in done.stderr


@pytest.mark.parametrize(
    ("extra", "level"), [([], "2"), (["--verbose"], None), (["-X", "log_level=7"], "7")]
)
def test_librdkafka_logs_critical_lines_only_unless_verbose(
    extra: list[str], level: str | None
) -> None:
    from spark_eos_connect.apps.cli import _kafka_settings, build_parser

    args = build_parser().parse_args(["status", "x", "--bootstrap-servers", "b:9092", *extra])

    assert _kafka_settings(args).get("log_level") == level


def test_rest_on_a_busy_port_says_so_before_anything_starts() -> None:
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]

        done, took = eosconnect(
            "rest", "--port", str(port), "--bootstrap-servers", f"127.0.0.1:{free_port()}"
        )

    assert done.returncode == 1
    assert took < 10
    assert "Application startup complete" not in done.stderr + done.stdout
    assert done.stderr.strip().splitlines() == [
        f"eosconnect rest: cannot listen on 127.0.0.1:{port}: Address already in use; choose "
        "another --port or stop what listens there"
    ]


@pytest.mark.parametrize("command", [["rest", "--port", "0"], ["connectors"]])
def test_a_missing_plugin_path_folder_is_named_before_kafka_is_asked(
    command: list[str], tmp_path: Path
) -> None:
    missing = tmp_path / "plugins"
    address = f"127.0.0.1:{free_port()}"  # nothing answers there: not asked

    done, _ = eosconnect(
        *command, "--bootstrap-servers", address, "--plugin-path", f"{tmp_path},{missing}"
    )

    assert done.returncode == 2, done.stderr
    assert f"plugin.path entry '{missing}' does not exist" in done.stderr
