"""The REST API with Connect's `plugin.path`: Connect's own FileStream connectors (the plugin
folder `make setup` fetches) and Debezium's PostgresConnector, listed with the versions their
plugins report and validated with their own ConfigDef in the driver's JVM task host, and their
offsets altered and reset through their own alterOffsets (KIP-875), on a herder over the real
broker; a connector whose validate throws answered with a 500 naming it, with its Java trace.
tests/integration/connect/test_java_plugins_rest_parity.py holds the listing and validation
answers up to a Kafka Connect 4.3.1 worker's."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from spark_eos_connect.herder import WorkerSettings
from spark_eos_connect.jvm import jars

from ..java_test_plugins import FAILING, SCRIPTED, plugin_folder

pytestmark = pytest.mark.integration

FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
FILE_SINK = "org.apache.kafka.connect.file.FileStreamSinkConnector"
POSTGRES = "io.debezium.connector.postgresql.PostgresConnector"
MISSING_TOPIC = 'Missing required configuration "topic" which has no default value.'
HANDLED = "The offsets for this connector have been {} successfully"
FRAMEWORK_ONLY = (
    "The Connect framework-managed offsets for this connector have been {0} successfully. "
    "However, if this connector manages offsets externally, they will need to be manually {0} "
    "in the system that the connector uses."
)


@pytest.fixture
def settings(settings: WorkerSettings) -> WorkerSettings:
    """The rest suite's settings with Connect's file plugin, Debezium and this project's test
    plugins on `plugin.path`."""
    folders = [jars.plugin_path("connect-file"), jars.plugin_path("debezium"), plugin_folder()]
    return dataclasses.replace(settings, plugin_path=",".join(str(f) for f in folders))


def validate(client: TestClient, plugin: str, config: dict[str, str]) -> dict[str, Any]:
    answer = client.put(f"/connector-plugins/{plugin}/config/validate", json=config)
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    return body


def errors(infos: dict[str, Any]) -> dict[str, list[str]]:
    """Option name -> its errors, for the options with some."""
    return {
        entry["value"]["name"]: entry["value"]["errors"]
        for entry in infos["configs"]
        if entry["value"] and entry["value"]["errors"]
    }


def test_the_listing_holds_the_java_connectors_with_their_versions(client: TestClient) -> None:
    listed = client.get("/connector-plugins").json()
    assert {"class": FILE_SOURCE, "type": "source", "version": "4.3.1"} in listed
    assert {"class": POSTGRES, "type": "source", "version": "3.6.1.Final"} in listed
    classes = [info["class"] for info in listed]
    assert len(classes) == len(set(classes))
    assert FILE_SINK not in classes  # Connect's name of the Python FileStreamSink, which runs
    assert "spark_eos_connect.connectors.file_stream.FileStreamSourceConnector" in classes
    assert client.get("/connector-plugins?connectorsOnly=false").json() == listed


def test_a_file_source_without_topic_fails_the_plugins_own_validation(
    client: TestClient, tmp_path: Any
) -> None:
    config = {"connector.class": FILE_SOURCE, "name": "n", "file": str(tmp_path / "in.txt")}
    infos = validate(client, FILE_SOURCE, config)
    assert infos["name"] == FILE_SOURCE
    assert infos["error_count"] == 1
    assert errors(infos) == {"topic": [MISSING_TOPIC]}
    own = {e["definition"]["name"]: e for e in infos["configs"] if e["definition"]}
    assert own["batch.size"]["definition"]["default_value"] == "2000"  # the Java ConfigDef's
    assert own["file"]["value"]["value"] == config["file"]


def test_without_file_the_java_file_source_is_valid_and_can_be_created(
    client: TestClient, unique_name: Callable[[str], str]
) -> None:
    """The Java plugin reads standard input without `file` (the Python one needs a file)."""
    config = {"connector.class": FILE_SOURCE, "topic": "t"}
    assert validate(client, FILE_SOURCE, {**config, "name": "n"})["error_count"] == 0
    name = unique_name("java-file")
    created = client.post("/connectors", json={"name": name, "config": config})
    assert created.status_code == 201, created.text
    assert created.json()["type"] == "source"
    refused = client.post(
        "/connectors",
        json={"name": unique_name("no-topic"), "config": {"connector.class": FILE_SOURCE}},
    )
    assert refused.status_code == 400
    assert MISSING_TOPIC in refused.json()["message"]


def test_a_java_connector_throwing_in_validate_is_a_500_with_its_trace_and_creates_nothing(
    client: TestClient, unique_name: Callable[[str], str]
) -> None:
    """Connect answers 500 with the exception's message when a connector's validate throws."""
    config = {"connector.class": FAILING, "topic": "t", "fail.in": "validate"}
    name = unique_name("java-throws")

    validated = client.put(f"/connector-plugins/{FAILING}/config/validate", json=config)
    created = client.post("/connectors", json={"name": name, "config": config})

    for answer in (validated, created):
        assert answer.status_code == 500, answer.text
        message = answer.json()["message"]
        assert f"Java connector {FAILING}" in message and str(plugin_folder()) in message
        assert "java.lang.RuntimeException: failing in validate as fail.in asks" in message
        assert f"{FAILING}.validate(" in message  # a frame of the Java trace
    assert client.get(f"/connectors/{name}").status_code == 404
    assert name not in client.get("/connectors").json()
    starting = {**config, "name": "n", "fail.in": "start"}  # a query's driver starts it
    assert validate(client, FAILING, starting)["error_count"] == 0


def test_debezium_validates_with_its_config_def_and_never_echoes_a_password(
    client: TestClient,
) -> None:
    secret = "s3cret-not-to-be-shown"
    config = {"connector.class": POSTGRES, "name": "n", "database.password": secret}
    answer = client.put(f"/connector-plugins/{POSTGRES}/config/validate", json=config)
    assert answer.status_code == 200, answer.text
    assert secret not in answer.text
    infos = answer.json()
    assert {"Postgres", "Connector"} <= set(infos["groups"])
    assert "topic.prefix" in errors(infos) and "database.hostname" in errors(infos)
    passwords = [
        e for e in infos["configs"] if e["definition"] and e["definition"]["type"] == "PASSWORD"
    ]
    assert passwords and all(e["value"]["value"] in (None, "[hidden]") for e in passwords)


def stopped(client: TestClient, name: str, config: dict[str, str]) -> str:
    """`name` created with `config`, then STOPPED (its offsets may change)."""
    created = client.put(f"/connectors/{name}/config", json=config)
    assert created.status_code == 201, created.text
    assert client.put(f"/connectors/{name}/stop").status_code == 204
    return f"/connectors/{name}/offsets"


def test_offsets_of_a_java_source_go_through_its_own_alter_offsets(
    client: TestClient, unique_name: Callable[[str], str], tmp_path: Path
) -> None:
    """Connect's FileStreamSourceConnector accepts a position (a Long once in Java), refuses
    a negative one (400 with its reason, nothing written) and handles a reset; a connector
    keeping Connect's default alterOffsets (false) gets Connect's other message."""
    name = unique_name("java-offsets")
    file = str(tmp_path / "in.txt")
    offsets = stopped(client, name, {"connector.class": FILE_SOURCE, "topic": "t", "file": file})
    at_42 = {"offsets": [{"partition": {"filename": file}, "offset": {"position": 42}}]}
    altered = client.patch(offsets, json=at_42)
    assert altered.status_code == 200, altered.text
    assert altered.json() == {"message": HANDLED.format("altered")}
    assert client.get(offsets).json() == at_42

    negative = {"offsets": [{"partition": {"filename": file}, "offset": {"position": -1}}]}
    refused = client.patch(offsets, json=negative)
    assert refused.status_code == 400, refused.text
    assert refused.json()["message"] == (
        f"Connector {name} rejected the offsets: The value for the 'position' key in the "
        "offset should be a non-negative value"
    )
    assert client.get(offsets).json() == at_42

    reset = client.delete(offsets)
    assert reset.status_code == 200, reset.text
    assert reset.json() == {"message": HANDLED.format("reset")}
    assert client.get(offsets).json() == {"offsets": []}

    scripted = stopped(
        client, unique_name("java-default"), {"connector.class": SCRIPTED, "topic": "t"}
    )
    framework_only = client.delete(scripted)
    assert framework_only.json() == {"message": FRAMEWORK_ONLY.format("reset")}
