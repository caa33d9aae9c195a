"""`eosconnect rest` as a real HTTP server, driven by a third-party Kafka Connect client
(kafka-connect-api from PyPI) the way Connect tooling drives a Connect worker."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from kafka_connect_api.errors import GenericNotFound
from kafka_connect_api.kafka_connect_api import Api, Cluster

from spark_eos_connect.herder import WorkerSettings
from spark_eos_connect.jvm.broker import free_port

pytestmark = pytest.mark.integration


@pytest.fixture
def rest_url(bootstrap_servers: str, settings: WorkerSettings) -> Iterator[str]:
    """`eosconnect rest` on a free loopback port, on the `settings` fixture's topics."""
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "spark_eos_connect.apps.cli",
        "rest",
        "--bootstrap-servers",
        bootstrap_servers,
        "--group-id",
        settings.group_id,
        "--config-topic",
        settings.config_topic,
        "--offsets-topic",
        settings.offsets_topic,
        "--status-topic",
        settings.status_topic,
        "--port",
        str(port),
    ]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, process.stdout.read().decode() if process.stdout else ""
            try:
                if httpx.get(url + "/", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "eosconnect rest did not answer within 60s"
            time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_third_party_client_lists_connectors_reads_status_and_offsets(
    rest_url: str, unique_name: Callable[[str], str]
) -> None:
    name = unique_name("src")
    api = Api(url=rest_url)
    api.post(
        "/connectors",
        json={
            "name": name,
            "config": {"connector.class": "FileStreamSource", "file": "/tmp/in.txt", "topic": "t"},
        },
    )
    api.put_raw(f"/connectors/{name}/stop")
    body = {"offsets": [{"partition": {"filename": "/tmp/in.txt"}, "offset": {"position": 7}}]}
    assert httpx.patch(f"{rest_url}/connectors/{name}/offsets", json=body).status_code == 200

    cluster = Cluster(api)
    assert cluster.version
    connectors = cluster.connectors
    assert list(connectors) == [name]
    connector = connectors[name]
    assert connector.exists()
    assert connector.connector_class == "FileStreamSource"
    assert connector.status["connector"]["state"] == "STOPPED"
    assert connector.status["tasks"] == []
    assert connector.tasks == []
    offsets: dict[str, Any] = api.get(f"/connectors/{name}/offsets")
    assert offsets == body

    with pytest.raises(GenericNotFound):
        api.get("/connectors/ghost/status")
