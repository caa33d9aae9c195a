"""`eosconnect kafka --brokers 3` starts a 3-node cluster, announces its three listeners, gives
topics created with the brokers' default three replicas, and stops cleanly on SIGTERM."""

from __future__ import annotations

import queue
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from spark_eos_connect.kafka.clients import admin_client, ensure_topic

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("failover")]

ANNOUNCED = "bootstrap.servers="


def test_the_cli_runs_a_three_broker_cluster(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "spark_eos_connect.apps.cli", "kafka", "--brokers", "3"]
    process = subprocess.Popen(
        [*command, "--data-dir", str(tmp_path / "cluster")],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(
        target=lambda: [lines.put(line) for line in process.stdout or []], daemon=True
    ).start()
    try:
        line = ""
        while not line.startswith(ANNOUNCED):
            line = lines.get(timeout=180)
        servers = line[len(ANNOUNCED) :].strip()
        config = {"bootstrap.servers": servers}
        admin = admin_client(config)
        ensure_topic(admin, "replicated", partitions=2)
        metadata = admin.list_topics(topic="replicated", timeout=30)

        assert len(servers.split(",")) == 3
        assert len(metadata.brokers) == 3
        for partition in metadata.topics["replicated"].partitions.values():
            assert len(partition.replicas) == 3
    finally:
        process.send_signal(signal.SIGTERM)
        exit_code = process.wait(timeout=120)
    assert exit_code == 0


def test_several_brokers_refuse_a_security_mode_by_name() -> None:
    command = [sys.executable, "-m", "spark_eos_connect.apps.cli", "kafka", "--brokers", "3"]
    result = subprocess.run(
        [*command, "--security", "sasl_ssl"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert result.returncode == 2
    assert "--brokers N > 1 runs a PLAINTEXT cluster" in result.stderr
