"""The REST layer's mapping of herder answers and errors to Connect's status codes and bodies,
over a stand-in herder (no Kafka involved)."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from spark_eos_connect.errors import EosConnectError
from spark_eos_connect.herder import (
    BadRequestError,
    ConflictError,
    Herder,
    HerderTimeoutError,
    NotFoundError,
)
from spark_eos_connect.rest import create_app


class StandInHerder:
    """Answers or raises what the test sets; records the calls."""

    def __init__(self) -> None:
        self.raises: Exception | None = None
        self.answer: Any = None
        self.calls: list[tuple[str, tuple[Any, ...]]] = []

    def __getattr__(self, name: str) -> Any:
        def call(*args: Any) -> Any:
            self.calls.append((name, args))
            if self.raises is not None:
                raise self.raises
            return self.answer

        return call


@pytest.fixture
def stand_in() -> StandInHerder:
    return StandInHerder()


@pytest.fixture
def client(stand_in: StandInHerder) -> TestClient:
    herder: Herder = stand_in  # type: ignore[assignment]
    return TestClient(create_app(herder))


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (NotFoundError("Connector x not found"), 404),
        (BadRequestError("bad"), 400),
        (ConflictError("busy"), 409),
        (HerderTimeoutError("slow"), 500),
        (EosConnectError("broken"), 500),
    ],
)
def test_errors_become_connect_error_bodies(
    client: TestClient, stand_in: StandInHerder, error: Exception, status: int
) -> None:
    stand_in.raises = error
    response = client.get("/connectors/x/status")
    assert response.status_code == status
    assert response.json() == {"error_code": status, "message": str(error)}


def test_restart_answers_204_without_a_plan_and_202_with_one(
    client: TestClient, stand_in: StandInHerder
) -> None:
    assert client.post("/connectors/x/restart").status_code == 204
    assert stand_in.calls[-1] == ("restart", ("x", False, False))
    stand_in.answer = {"name": "x", "connector": {"state": "RESTARTING"}, "tasks": []}
    response = client.post("/connectors/x/restart?includeTasks=true&onlyFailed=true")
    assert response.status_code == 202
    assert response.json()["connector"]["state"] == "RESTARTING"
    assert stand_in.calls[-1] == ("restart", ("x", True, True))


def test_status_codes_of_state_changes(client: TestClient, stand_in: StandInHerder) -> None:
    assert client.put("/connectors/x/stop").status_code == 204
    assert client.put("/connectors/x/pause").status_code == 202
    assert client.put("/connectors/x/resume").status_code == 202
    assert client.delete("/connectors/x").status_code == 204
    assert [name for name, _ in stand_in.calls] == ["stop", "pause", "resume", "delete"]


def test_put_config_answers_201_when_created(client: TestClient, stand_in: StandInHerder) -> None:
    stand_in.answer = (True, {"name": "x"})
    created = client.put("/connectors/x/config", json={"a": "b"})
    assert created.status_code == 201
    assert created.headers["location"] == "/connectors/x"
    stand_in.answer = (False, {"name": "x"})
    assert client.put("/connectors/x/config", json={"a": "b"}).status_code == 200


def test_patch_offsets_passes_the_body_on(client: TestClient, stand_in: StandInHerder) -> None:
    stand_in.answer = {"message": "ok"}
    body = {"offsets": [{"partition": {"f": "a"}, "offset": {"p": 1}}]}
    assert client.patch("/connectors/x/offsets", json=body).json() == {"message": "ok"}
    assert stand_in.calls[-1] == ("alter_offsets", ("x", body))


@pytest.mark.parametrize(
    ("request_args", "fragment"),
    [
        ({"content": b"{oops", "headers": {"content-type": "application/json"}}, "malformed JSON"),
        ({"json": ["not", "an", "object"]}, "must be a JSON object"),
        ({"content": b" ", "headers": {"content-type": "application/json"}}, "body is required"),
        ({"content": b"[" * 100_000}, "nested too deeply"),
        ({"content": b'{"offsets": NaN}'}, "NaN is not a JSON number"),
        ({"content": b'{"offsets": 1e999}'}, "out of range"),
        ({"content": b'{"offsets": ' + b"9" * 5000 + b"}"}, "digits"),
        ({"content": b'{"offsets": "\xff"}'}, "not UTF-8"),
        ({"content": b'{"offsets": "\\udc00"}'}, "lone surrogate (\\udc00)"),
    ],
)
def test_malformed_requests_are_400_naming_the_problem(
    client: TestClient, stand_in: StandInHerder, request_args: dict[str, Any], fragment: str
) -> None:
    response = client.patch("/connectors/x/offsets", **request_args)
    assert response.status_code == 400
    assert response.json()["error_code"] == 400
    assert fragment in response.json()["message"]
    assert stand_in.calls == []


def test_unknown_paths_and_methods(client: TestClient) -> None:
    missing = client.get("/connectors/x/nothing-here")
    assert missing.status_code == 404
    assert missing.json()["error_code"] == 404
    assert client.post("/connectors/x/stop").json()["error_code"] == 405
    task = client.get("/connectors/x/tasks/one/status")
    assert task.status_code == 400
    assert "task" in task.json()["message"]
