"""Fixtures for running the README's snippets: `eosconnect rest` started from the README's own
command line, a running generator query to manage, and transactional test records."""

from __future__ import annotations

import shlex
import subprocess
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from confluent_kafka import Producer

from spark_eos_connect.kafka.broker import free_port
from spark_eos_connect.testing import wait_for

from .readme import DOCS, VENV_BIN, snippet


def eosconnect_rest_argv(bootstrap_servers: str, port: int) -> list[str]:
    """The `eosconnect rest ...` line of the REST API page, optional parts included, made
    concrete."""
    page = (DOCS / "rest-and-cli.md").read_text()
    line = snippet("eosconnect rest", page).text.replace("[", "").replace("]", "")
    argv = shlex.split(line)
    assert argv[:2] == ["eosconnect", "rest"], line
    values = {"HOST:PORT": bootstrap_servers, "G": "eosconnect", "8083": str(port)}
    for placeholder in values:
        assert argv.count(placeholder) == 1, f"{placeholder} should occur once in {line}"
    return [str(VENV_BIN / "eosconnect"), *(values.get(arg, arg) for arg in argv[1:])]


@pytest.fixture
def rest_address(bootstrap_servers: str, tmp_path: Path) -> Iterator[str]:
    """`HOST:PORT` of `eosconnect rest` run as the README says, on a free port."""
    port = free_port()
    log = (tmp_path / "rest.log").open("w")
    process = subprocess.Popen(
        eosconnect_rest_argv(bootstrap_servers, port), stdout=log, stderr=subprocess.STDOUT
    )
    address = f"127.0.0.1:{port}"

    def answering() -> bool:
        assert process.poll() is None, (tmp_path / "rest.log").read_text()[-3000:]
        try:
            return httpx.get(f"http://{address}/", timeout=2).status_code == 200
        except httpx.TransportError:
            return False

    try:
        wait_for(answering, 60, "eosconnect rest to answer")
        yield address
    finally:
        process.terminate()
        process.wait(timeout=30)
        log.close()


@pytest.fixture
def produce_transaction(kafka_config: dict[str, Any]) -> Iterator[Callable[..., None]]:
    """`produce_transaction(topic, values, commit=True)`: one transaction, round-robin over
    `partitions` partitions."""
    producer = Producer({**kafka_config, "transactional.id": f"readme-{uuid.uuid4().hex}"})
    producer.init_transactions(30)

    def send(topic: str, values: list[bytes], commit: bool = True, partitions: int = 1) -> None:
        producer.begin_transaction()
        for index, value in enumerate(values):
            producer.produce(topic, value, partition=index % partitions)
        if commit:
            producer.commit_transaction(30)
        else:
            producer.flush(30)
            producer.abort_transaction(30)

    yield send
    producer.flush(5)
