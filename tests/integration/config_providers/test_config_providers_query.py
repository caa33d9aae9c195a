"""Config providers through real source queries (issue 13): options reference `${file:...}` and
`${env:...}`; the driver and the executors resolve them (the query only runs if both do), the
config topic keeps the references, and a planted secret is found nowhere: not in the internal
topics, the data, the logs, the REST API's answers, exceptions or Spark's query progress.
A reference that cannot be resolved fails the query naming it, before anything is written."""

from __future__ import annotations

import hashlib
import json
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import CLIENT_ID_VARIABLE  # type: ignore[import-not-found]

from spark_eos_connect.kafka.clients import ConsumedRecord, admin_client
from spark_eos_connect.testing import wait_for

pytestmark = pytest.mark.integration

CONNECTOR = "provider_test_connectors.TokenCheckingSource"
INTERNAL_TOPICS = ("eosconnect-configs", "eosconnect-status", "eosconnect-offsets")


@pytest.fixture
def planted() -> str:
    """A secret no other test writes anywhere."""
    return f"Planted-{uuid.uuid4().hex}"


@pytest.fixture
def secrets_file(tmp_path: Path, planted: str, bootstrap_servers: str) -> Path:
    """A properties file with the secret and the broker's address."""
    file = tmp_path / "secrets" / "app.properties"
    file.parent.mkdir()
    file.write_text(f"# the app's secrets\napi.token = {planted}\nbootstrap={bootstrap_servers}\n")
    return file


@pytest.fixture
def query_runner(spark: Any, tmp_path: Path) -> Iterator[Callable[..., Any]]:
    """`start(name, reader_options, writer_options)`: a source query into Kafka."""
    started: list[Any] = []

    def start(name: str, reader: dict[str, str], writer: dict[str, str]) -> Any:
        stream = spark.readStream.format("eosconnect").options(name=name, **reader).load()
        query = (
            stream.writeStream.format("eosconnect")
            .options(name=name, **writer)
            .option("checkpointLocation", str(tmp_path / f"ck-{name}"))
            .trigger(processingTime="200 milliseconds")
            .start()
        )
        started.append(query)
        return query

    yield start
    for query in started:
        query.stop()


def host_logs(since: float) -> list[Path]:
    """Task host logs written since `since` (executor side, default spool folders)."""
    folders = [
        Path(tempfile.gettempdir()) / "eosconnect-spool" / "hosts",
        *Path(tempfile.gettempdir()).glob("eosconnect-hosts-*"),
    ]
    return [
        log
        for folder in folders
        if folder.is_dir()
        for log in folder.glob("*.log")
        if log.stat().st_mtime >= since
    ]


def record_text(records: list[ConsumedRecord]) -> bytes:
    """Every key, value and header of `records`."""
    parts = [r.key or b"" for r in records] + [r.value or b"" for r in records]
    parts += [value or b"" for r in records for _, value in r.headers]
    return b"\n".join(parts)


def test_references_resolve_on_driver_and_executors_and_the_secret_is_found_nowhere(
    query_runner: Callable[..., Any],
    secrets_file: Path,
    planted: str,
    topic_factory: Callable[..., str],
    read_committed: Callable[..., list[Any]],
    read_uncommitted: Callable[..., list[Any]],
    unique_name: Callable[[str], str],
    default_rest_api: Any,
    caplog: pytest.LogCaptureFixture,
    capfd: pytest.CaptureFixture[str],
) -> None:
    started = time.time() - 1
    topic, name = topic_factory("providers"), unique_name("providers")
    token = f"${{file:{secrets_file}:api.token}}"
    kafka = {
        "kafka.bootstrap.servers": f"${{file:{secrets_file}:bootstrap}}",
        "kafka.client.id": f"${{env:{CLIENT_ID_VARIABLE}}}",
    }
    reader = {
        "connector.class": CONNECTOR,
        "topic": topic,
        "tasks.max": "2",
        "records.per.poll": "20",
        "rate": "200",
        "api.token": token,
        "api.token.sha256": hashlib.sha256(planted.encode()).hexdigest(),
        "config.providers": "file,env",
        "config.providers.file.class": "org.apache.kafka.common.config.provider.FileConfigProvider",
        "config.providers.file.param.allowed.paths": str(secrets_file.parent),
        **kafka,
    }

    query = query_runner(name, reader, kafka)
    # Records from both tasks: each task started with the resolved token and bootstrap servers.
    wait_for(
        lambda: len(read_committed(topic, settled=False)) >= 40 and len(query.recentProgress) >= 2,
        120,
        "records and progress from the query",
    )
    progress = json.dumps([query.recentProgress, query.lastProgress, query.status], default=str)
    rest = [
        default_rest_api.get(path).text
        for path in (
            f"/connectors/{name}",
            f"/connectors/{name}/config",
            f"/connectors/{name}/status",
            f"/connectors/{name}/tasks",
            f"/connectors/{name}/tasks/0/status",
            f"/connectors/{name}/offsets",
            "/connectors?expand=info&expand=status",
        )
    ]
    query.stop()

    # Stored unresolved: the connector config and every task config hold the reference.
    configs = [r for r in read_uncommitted(INTERNAL_TOPICS[0]) if name.encode() in (r.key or b"")]
    stored = {r.key.decode(): json.loads(r.value) for r in configs if r.value}
    assert stored[f"connector-{name}"]["properties"]["api.token"] == token
    task_props = [v["properties"] for k, v in stored.items() if k.startswith(f"task-{name}-")]
    assert len(task_props) == 2 and all(p["api.token"] == token for p in task_props)
    assert not any(k.startswith("config.providers") for p in task_props for k in p)
    assert json.loads(rest[1])["api.token"] == token  # the REST API shows the reference

    secret = planted.encode()
    for internal in INTERNAL_TOPICS:
        assert secret not in record_text(read_uncommitted(internal)), internal
    assert secret not in record_text(read_uncommitted(topic))
    for text in rest:
        assert planted not in text
    assert planted not in progress
    assert planted not in caplog.text
    out, err = capfd.readouterr()
    assert planted not in out and planted not in err
    logs = host_logs(started)
    assert logs  # the tasks ran in task hosts on this machine
    for log in logs:
        assert planted not in log.read_text(errors="replace"), log


@pytest.mark.parametrize(
    ("option", "value", "reason"),
    [
        ("api.token", "${file:{dir}/missing.properties:api.token}", "No such file"),
        ("api.token", "${file:{file}:absent.key}", "has no key absent.key"),
        ("api.token", "${vault:secret/app:token}", "no config provider 'vault'"),
        ("kafka.sasl.password", "${env:EOSCONNECT_SURELY_UNSET}", "is not set"),
    ],
)
def test_a_bad_reference_fails_naming_it_before_anything_is_written(
    query_runner: Callable[..., Any],
    secrets_file: Path,
    planted: str,
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    read_uncommitted: Callable[..., list[Any]],
    kafka_config: dict[str, Any],
    unique_name: Callable[[str], str],
    option: str,
    value: str,
    reason: str,
) -> None:
    topic, name = topic_factory("badref"), unique_name("badref")
    reference = value.replace("{dir}", str(secrets_file.parent)).replace(
        "{file}", str(secrets_file)
    )
    reader = {
        "connector.class": CONNECTOR,
        "topic": topic,
        "api.token": f"${{file:{secrets_file}:api.token}}",
        "api.token.sha256": hashlib.sha256(planted.encode()).hexdigest(),
        "kafka.bootstrap.servers": bootstrap_servers,
        option: reference,
    }

    with pytest.raises(Exception) as failed:  # load() refuses it; Spark wraps the ConfigError
        query_runner(name, reader, {"kafka.bootstrap.servers": bootstrap_servers})

    message = str(failed.value)
    assert f"Cannot resolve {reference} in option {option}: " in message, message
    assert reason in message and planted not in message
    assert read_uncommitted(topic) == []
    existing = admin_client(kafka_config).list_topics(timeout=30).topics
    for internal in (t for t in INTERNAL_TOPICS if t in existing):  # a fresh broker has none
        assert not [r for r in read_uncommitted(internal) if name.encode() in (r.key or b"")]
