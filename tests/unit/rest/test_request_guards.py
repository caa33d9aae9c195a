"""The REST layer under hostile or careless requests, over a stand-in herder (issue 27): every
answer is Connect's error body, bodies are bounded before they are parsed, HEAD and trailing
slashes answer as Connect does, the Location header survives any name."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient

from spark_eos_connect.herder import Herder
from spark_eos_connect.rest import create_app
from spark_eos_connect.rest.auth import BasicAuth
from spark_eos_connect.rest.bodies import ConnectJSONResponse, require_json
from spark_eos_connect.rest.guards import DEFAULT_MAX_REQUEST_BYTES, REST_CONFIG, max_request_bytes

LIMIT = 4096


class StandInHerder:
    """Answers what the test sets (per method); records the calls."""

    def __init__(self) -> None:
        self.answers: dict[str, Any] = {}
        self.raises: Exception | None = None
        self.calls: list[tuple[str, tuple[Any, ...]]] = []

    def __getattr__(self, name: str) -> Any:
        def call(*args: Any) -> Any:
            self.calls.append((name, args))
            if self.raises is not None:
                raise self.raises
            return self.answers.get(name)

        return call


@pytest.fixture
def stand_in() -> StandInHerder:
    return StandInHerder()


@pytest.fixture
def client(stand_in: StandInHerder) -> Iterator[TestClient]:
    herder: Herder = stand_in  # type: ignore[assignment]
    with TestClient(create_app(herder, max_request_bytes=LIMIT)) as test_client:
        yield test_client


def assert_connect_error(response: Any, status: int, fragment: str = "") -> None:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert body["error_code"] == status
    assert fragment in body["message"]


@pytest.mark.parametrize(
    ("name", "location"),
    [
        ("\u2713", "/connectors/%E2%9C%93"),
        ("y", "/connectors/y"),
        ("a b?#%", "/connectors/a%20b%3F%23%25"),
    ],
)
def test_location_is_the_stored_name_percent_encoded(
    client: TestClient, stand_in: StandInHerder, name: str, location: str
) -> None:
    stand_in.answers["put_config"] = (True, {"name": name})
    stand_in.answers["create"] = {"name": name}
    created = client.put(f"/connectors/{quote(f' {name} ', safe='')}/config", json={"a": "b"})
    assert created.status_code == 201
    assert created.headers["location"] == location
    posted = client.post("/connectors", json={"name": f" {name} ", "config": {}})
    assert posted.status_code == 201
    assert posted.headers["location"] == location


def test_a_body_over_the_limit_is_413_before_it_is_read(
    client: TestClient, stand_in: StandInHerder
) -> None:
    body = b'{"offsets":[' + b" " * LIMIT + b"]}"
    assert_connect_error(client.patch("/connectors/x/offsets", content=body), 413, "4096 bytes")
    chunks = iter([b'{"a":"', b"x" * LIMIT, b'"}'])
    chunked = client.put("/connectors/x/config", content=chunks)  # no Content-Length
    assert_connect_error(chunked, 413, "rest.max.request.bytes")
    assert stand_in.calls == []
    stand_in.answers["put_config"] = (False, {"name": "x"})
    at_limit = b'{"a":"' + b"x" * (LIMIT - 8) + b'"}'
    assert client.put("/connectors/x/config", content=at_limit).status_code == 200


def test_a_bad_content_length_is_400(client: TestClient) -> None:
    response = client.put("/connectors/x/config", content=b"{}", headers={"content-length": "1e9"})
    assert_connect_error(response, 400, "Content-Length")


@pytest.mark.parametrize(
    "content_type", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data"]
)
def test_a_body_that_is_not_json_is_415(
    client: TestClient, stand_in: StandInHerder, content_type: str
) -> None:
    for method, path in (
        ("PUT", "/connectors/x/config"),
        ("POST", "/connectors"),
        ("PATCH", "/connectors/x/offsets"),
        ("PUT", "/connector-plugins/Generator/config/validate"),
    ):
        response = client.request(
            method, path, content=b"{}", headers={"content-type": content_type}
        )
        assert_connect_error(response, 415, "Unsupported Media Type")
    assert stand_in.calls == []


def test_json_media_types_and_none_are_accepted() -> None:
    for content_type in (
        None,
        "",
        "application/json",
        "application/json; charset=utf-8",
        "application/vnd.x+json",
    ):
        require_json(content_type)


def test_head_answers_as_get_without_a_body(client: TestClient, stand_in: StandInHerder) -> None:
    stand_in.answers["connectors"] = ["a", "b"]
    response = client.head("/connectors")
    assert response.status_code == 200
    assert response.content == b""
    assert response.headers["content-length"] == str(len(b'["a","b"]'))
    assert client.head("/connectors/x/nothing").status_code == 404
    assert client.head("/connectors/x/stop").status_code == 405


def test_a_trailing_slash_is_answered_never_redirected(
    client: TestClient, stand_in: StandInHerder
) -> None:
    stand_in.answers["connectors"] = ["a"]
    response = client.get("/connectors/", headers={"host": "evil.example"}, follow_redirects=False)
    assert response.status_code == 200
    assert response.json() == ["a"]
    assert "location" not in response.headers
    assert client.get("/connectors//", follow_redirects=False).json() == ["a"]


def test_unexpected_errors_are_connect_shaped_500(
    client: TestClient, stand_in: StandInHerder
) -> None:
    stand_in.raises = RuntimeError("boom")
    with TestClient(client.app, raise_server_exceptions=False) as quiet:
        assert_connect_error(quiet.get("/connectors/x/status"), 500, "RuntimeError: boom")


def test_lone_surrogates_in_any_body_are_400(client: TestClient, stand_in: StandInHerder) -> None:
    headers = {"content-type": "application/json"}
    for method, path, body in (
        ("PUT", "/connector-plugins/Generator/config/validate", b'{"topic":"\\ud800"}'),
        ("PUT", "/connectors/x/config", b'{"\\uDFFF":"t"}'),
        ("POST", "/connectors", b'{"name":"\\ud800","config":{}}'),
        ("PATCH", "/connectors/x/offsets", b'{"offsets":[{"partition":{"f":"\\ud83d"}}]}'),
    ):
        response = client.request(method, path, content=body, headers=headers)
        assert_connect_error(response, 400, "lone surrogate")
    assert stand_in.calls == []


def test_responses_holding_lone_surrogates_are_still_sent() -> None:
    response = ConnectJSONResponse({"message": "bad \ud800 name \u2713"})
    assert response.body == b'{"message":"bad \\ud800 name \\u2713"}'
    assert ConnectJSONResponse({"name": "\u2713"}).body == '{"name":"\u2713"}'.encode()


def test_authentication_comes_before_the_body_is_read(stand_in: StandInHerder) -> None:
    herder: Herder = stand_in  # type: ignore[assignment]
    app = create_app(herder, auth=BasicAuth({"u": "p"}), max_request_bytes=LIMIT)
    with TestClient(app) as guarded:
        too_large = guarded.put("/connectors/x/config", content=b"x" * (LIMIT + 1))
        assert_connect_error(too_large, 401)
        assert guarded.head("/connectors").content == b""
        assert guarded.head("/connectors").status_code == 401


def test_max_request_bytes_option() -> None:
    assert max_request_bytes(None) == DEFAULT_MAX_REQUEST_BYTES == 4 * 1024 * 1024
    assert max_request_bytes("65536") == 65536
    assert "rest.max.request.bytes" in REST_CONFIG
    with pytest.raises(ValueError, match=r"rest\.max\.request\.bytes"):
        max_request_bytes("10")
    with pytest.raises(ValueError, match=r"rest\.max\.request\.bytes"):
        max_request_bytes("lots")
