"""Creating, listing, reading and configuring connectors through the REST API (real broker)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from fastapi.testclient import TestClient

from spark_eos_connect.herder import Herder

pytestmark = pytest.mark.integration

SOURCE = {"connector.class": "FileStreamSource", "file": "/tmp/in.txt", "topic": "t"}


def test_root_answers_version_and_cluster_id(client: TestClient) -> None:
    body = client.get("/").json()
    assert body["version"]
    assert body["kafka_cluster_id"]


def test_create_list_get_and_config(
    client: TestClient, herder: Herder, unique_name: Callable[[str], str]
) -> None:
    name = unique_name("c")
    created = client.post("/connectors", json={"name": name, "config": {**SOURCE, "tasks.max": 1}})
    assert created.status_code == 201
    assert created.headers["location"] == f"/connectors/{name}"
    expected_config = {**SOURCE, "tasks.max": "1", "name": name}
    body = created.json()
    assert body == {
        "name": name,
        "config": expected_config,
        "tasks": [],
        "type": "source",
        "status": body["status"],  # no query runs it yet, and the 201 body says so
    }
    assert body["status"]["state"] == "UNASSIGNED"
    assert body["status"]["trace"].startswith(f"No Spark query runs connector {name}")

    assert client.get("/connectors").json() == [name]
    assert client.get(f"/connectors/{name}").json()["config"] == expected_config
    assert client.get(f"/connectors/{name}/config").json() == expected_config
    expanded = client.get("/connectors", params=[("expand", "status"), ("expand", "info")]).json()
    assert expanded[name]["info"]["type"] == "source"
    assert expanded[name]["status"]["connector"]["state"] == "UNASSIGNED"
    # Stored in the config topic, nowhere else: a second herder on the same topics sees it.
    assert herder.configs.read_to_end().connector_config(name) == expected_config


def test_put_config_creates_then_updates(
    client: TestClient, unique_name: Callable[[str], str]
) -> None:
    name = unique_name("c")
    first = client.put(f"/connectors/{name}/config", json=SOURCE)
    assert first.status_code == 201
    second = client.put(f"/connectors/{name}/config", json={**SOURCE, "batch.size": "10"})
    assert second.status_code == 200
    assert second.json()["config"]["batch.size"] == "10"


def test_secrets_are_never_returned_nor_logged(
    client: TestClient, unique_name: Callable[[str], str], caplog: pytest.LogCaptureFixture
) -> None:
    name = unique_name("c")
    config = {**SOURCE, "kafka.sasl.password": "hunter2", "db.secret.key": "Vx9QkZ"}
    with caplog.at_level("DEBUG"):
        response = client.put(f"/connectors/{name}/config", json=config)
    assert response.json()["config"]["kafka.sasl.password"] == "[hidden]"
    assert client.get(f"/connectors/{name}/config").json()["db.secret.key"] == "[hidden]"
    assert "hunter2" not in client.get(f"/connectors/{name}").text
    assert "Vx9QkZ" not in client.get(f"/connectors/{name}/tasks").text
    assert name in caplog.text
    assert "hunter2" not in caplog.text
    assert "Vx9QkZ" not in caplog.text


@pytest.mark.parametrize(
    ("config", "status", "fragments"),
    [
        ({"connector.class": "NoSuchThing"}, 400, ["NoSuchThing", "FileStreamSource", "Generator"]),
        ({"file": "/tmp/x"}, 400, ["connector.class", "FileStreamSource"]),
        ({"connector.class": "FileStreamSource"}, 400, ["2 error", "file", "topic"]),
        ({**SOURCE, "tasks.max": "many"}, 400, ["tasks.max"]),
        ({**SOURCE, "name": "other"}, 400, ["other", "doesn't match"]),
        ({**SOURCE, "nested": {"a": 1}}, 400, ["nested"]),
    ],
)
def test_invalid_configs_are_refused_naming_the_problem(
    client: TestClient,
    unique_name: Callable[[str], str],
    config: dict[str, Any],
    status: int,
    fragments: list[str],
) -> None:
    name = unique_name("bad")
    response = client.put(f"/connectors/{name}/config", json=config)
    assert response.status_code == status
    body = response.json()
    assert body["error_code"] == status
    for fragment in fragments:
        assert fragment in body["message"]
    assert client.get(f"/connectors/{name}").status_code == 404  # nothing left behind


def test_creating_an_existing_connector_conflicts(
    client: TestClient, file_source: Callable[..., str]
) -> None:
    name = file_source()
    response = client.post("/connectors", json={"name": name, "config": SOURCE})
    assert response.status_code == 409
    assert response.json() == {"error_code": 409, "message": f"Connector {name} already exists"}


def test_initial_state_stopped(client: TestClient, unique_name: Callable[[str], str]) -> None:
    name = unique_name("c")
    body = {"name": name, "config": SOURCE, "initial_state": "STOPPED"}
    assert client.post("/connectors", json=body).status_code == 201
    status = client.get(f"/connectors/{name}/status").json()
    assert status["connector"]["state"] == "STOPPED"
    assert status["tasks"] == []
    bad = client.post("/connectors", json={**body, "name": name + "x", "initial_state": "ASLEEP"})
    assert bad.status_code == 400
    assert "initial_state" in bad.json()["message"]


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/connectors/{c}"),
        ("GET", "/connectors/{c}/config"),
        ("GET", "/connectors/{c}/status"),
        ("GET", "/connectors/{c}/tasks"),
        ("GET", "/connectors/{c}/tasks/0/status"),
        ("DELETE", "/connectors/{c}"),
        ("PUT", "/connectors/{c}/pause"),
        ("PUT", "/connectors/{c}/resume"),
        ("PUT", "/connectors/{c}/stop"),
        ("POST", "/connectors/{c}/restart"),
        ("POST", "/connectors/{c}/tasks/0/restart"),
        ("GET", "/connectors/{c}/offsets"),
        ("DELETE", "/connectors/{c}/offsets"),
    ],
)
def test_unknown_connectors_are_404_everywhere(client: TestClient, method: str, path: str) -> None:
    response = client.request(method, path.format(c="ghost"))
    assert response.status_code == 404
    assert response.json() == {"error_code": 404, "message": "Connector ghost not found"}


def test_unknown_connector_patch_offsets_is_404(client: TestClient) -> None:
    body = {"offsets": [{"partition": {"f": "a"}, "offset": {"p": 1}}]}
    response = client.patch("/connectors/ghost/offsets", json=body)
    assert response.status_code == 404


def test_protocol_errors_use_connects_error_body(client: TestClient) -> None:
    unknown = client.get("/no/such/path")
    assert unknown.status_code == 404
    assert unknown.json()["error_code"] == 404
    assert "/no/such/path" in unknown.json()["message"]
    malformed = client.post(
        "/connectors",
        content=b'{"name": "x", "config": {',
        headers={"content-type": "application/json"},
    )
    assert malformed.status_code == 400
    assert "malformed JSON" in malformed.json()["message"]
    missing = client.post("/connectors", json={"config": SOURCE})
    assert missing.status_code == 400
    assert "name" in missing.json()["message"]
    wrong_method = client.delete("/connectors")
    assert wrong_method.json()["error_code"] == 405


def test_openapi_describes_the_paths(client: TestClient) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    for path in ("/connectors", "/connectors/{connector}/offsets", "/connectors/{connector}/stop"):
        assert path in paths


def test_connector_plugins_and_validate(client: TestClient) -> None:
    plugins = client.get("/connector-plugins").json()
    classes = {p["class"]: p["type"] for p in plugins}
    assert classes["spark_eos_connect.connectors.file_stream.FileStreamSourceConnector"] == "source"
    assert classes["spark_eos_connect.connectors.file_stream.FileStreamSinkConnector"] == "sink"

    report = client.put(
        "/connector-plugins/FileStreamSource/config/validate",
        json={"connector.class": "FileStreamSource", "name": "v", "file": "/tmp/x"},
    ).json()
    assert report["error_count"] == 1
    errors = {c["value"]["name"]: c["value"]["errors"] for c in report["configs"]}
    assert errors["topic"] and not errors["file"]
    mismatch = client.put(
        "/connector-plugins/FileStreamSource/config/validate",
        json={"connector.class": "FileStreamSink"},
    )
    assert mismatch.status_code == 400
    unknown = client.put("/connector-plugins/Nope/config/validate", json={})
    assert unknown.status_code == 400
    assert "FileStreamSource" in unknown.json()["message"]
