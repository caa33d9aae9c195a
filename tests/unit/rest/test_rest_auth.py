"""Basic authentication pieces: Connect's credentials file format, the Authorization header, the
constant-time check and the 401 every path answers without valid credentials."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from spark_eos_connect.errors import ConfigError
from spark_eos_connect.rest.auth import (
    REALM,
    UNAUTHORIZED_MESSAGE,
    BasicAuth,
    BasicAuthMiddleware,
    CredentialsFileError,
    load_credentials,
    parse_authorization,
    parse_credentials,
)


def basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("thisismyusername: thisismypass\n", {"thisismyusername": "thisismypass"}),
        ("alice=secret", {"alice": "secret"}),
        ("alice secret", {"alice": "secret"}),
        ("  alice  =  secret\n", {"alice": "secret"}),
        ("alice:secret,admin", {"alice": "secret,admin"}),  # Connect: the whole value
        ("alice=a=b:c d", {"alice": "a=b:c d"}),
        ("alice=trailing  ", {"alice": "trailing  "}),  # Java keeps trailing blanks
        ("# comment\n! comment\n\n\talice=1\n", {"alice": "1"}),
        ("alice=1\nbob=2\nalice=3", {"alice": "3", "bob": "2"}),
        (r"dom\:ain\=user=p\\w", {"dom:ain=user": "p\\w"}),
        ("alice=se\\\n    cret", {"alice": "secret"}),
        ("alice=\\u00e9t\\u00E9\\t", {"alice": "été\t"}),
        ("alice=ends\\\\\nbob=2", {"alice": "ends\\", "bob": "2"}),
        ("# not continued \\\nbob=2", {"bob": "2"}),
        ("alice=été", {"alice": "été"}),
        ("alice\r\nbob=2\r\n", {"alice": "", "bob": "2"}),
    ],
)
def test_credentials_file_follows_java_properties(text: str, expected: dict[str, str]) -> None:
    assert parse_credentials(text) == expected


def test_load_credentials_reads_the_file(tmp_path: Path) -> None:
    path = tmp_path / "connect.password"
    path.write_text("alice: wonderland\nbob=builder\n")
    auth = load_credentials(path)
    assert auth.accepts(basic("alice", "wonderland"))
    assert auth.accepts(basic("bob", "builder"))
    assert "wonderland" not in repr(auth)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "holds no user=password line"),
        ("# only a comment\n", "holds no user=password line"),
        ("alice\n", "has an empty user or password"),
        ("=nobody\n", "has an empty user or password"),
        ("alice=s3cret\\u12\n", r"Malformed \\uxxxx encoding in .* line 1"),
    ],
)
def test_load_credentials_refuses_empty_entries(tmp_path: Path, text: str, problem: str) -> None:
    path = tmp_path / "connect.password"
    path.write_text(text)
    with pytest.raises(CredentialsFileError, match=problem) as caught:
        load_credentials(path)
    assert str(path) in str(caught.value)
    assert "s3cret" not in str(caught.value)
    assert isinstance(caught.value, ConfigError)


def test_load_credentials_names_a_missing_file_not_its_contents(tmp_path: Path) -> None:
    with pytest.raises(CredentialsFileError, match=r"cannot read the credentials file .*missing"):
        load_credentials(tmp_path / "missing")
    binary = tmp_path / "binary"
    binary.write_bytes(b"alice=\xff\xfe-secret")
    with pytest.raises(CredentialsFileError, match="not UTF-8") as caught:
        load_credentials(binary)
    assert "secret" not in str(caught.value)


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        (basic("alice", "pw"), ("alice", "pw")),
        ("basic " + base64.b64encode(b"alice:p:w").decode(), ("alice", "p:w")),
        (basic("alice", ""), ("alice", "")),
        (basic("", "pw"), None),
        ("Basic " + base64.b64encode(b"alice").decode(), None),
        ("Basic not-base64!", None),
        ("Basic " + base64.b64encode(b"\xff:pw").decode(), None),
        ("Basic \u00e9", None),
        ("Basic \u00c3\u00a9", None),  # "é" in UTF-8 as the server reads it (Latin-1)
        ("Basic \u2713", None),
        ("Bearer abc", None),
        ("Basic", None),
        ("", None),
        (None, None),
    ],
)
def test_parse_authorization(header: str | None, expected: tuple[str, str] | None) -> None:
    assert parse_authorization(header) == expected


def test_accepts_only_a_matching_user_and_password() -> None:
    auth = BasicAuth({"alice": "wonderland", "bob": "builder"})
    assert auth.accepts(basic("alice", "wonderland"))
    assert not auth.accepts(basic("alice", "builder"))  # another user's password
    assert not auth.accepts(basic("alice", "wonderland!"))
    assert not auth.accepts(basic("carol", "wonderland"))
    assert not auth.accepts(basic("ALICE", "wonderland"))
    assert not auth.accepts(None)


def test_basic_auth_needs_credentials() -> None:
    with pytest.raises(CredentialsFileError):
        BasicAuth({})


@pytest.fixture
def guarded() -> TestClient:
    app = FastAPI()

    @app.get("/")
    def root() -> dict[str, Any]:
        return {"version": "x"}

    @app.post("/connectors")
    def create() -> dict[str, Any]:
        return {"created": True}

    app.add_middleware(BasicAuthMiddleware, auth=BasicAuth({"alice": "wonderland"}))
    return TestClient(app)


@pytest.mark.parametrize("path", ["/", "/openapi.json", "/docs", "/nowhere"])
@pytest.mark.parametrize(
    "header", [None, basic("alice", "wrong"), "Basic ???", "Basic \u00e9".encode(), b"\xff\xfe"]
)
def test_every_path_answers_401_without_valid_credentials(
    guarded: TestClient, path: str, header: str | bytes | None
) -> None:
    value = header.encode() if isinstance(header, str) else header
    response = guarded.get(path, headers=[(b"authorization", value)] if value else [])
    assert response.status_code == 401
    assert response.json() == {"error_code": 401, "message": UNAUTHORIZED_MESSAGE}
    assert response.headers["www-authenticate"] == f'Basic realm="{REALM}", charset="UTF-8"'


def test_valid_credentials_pass_through(guarded: TestClient) -> None:
    headers = {"Authorization": basic("alice", "wonderland")}
    assert guarded.get("/", headers=headers).json() == {"version": "x"}
    assert guarded.post("/connectors", headers=headers).json() == {"created": True}
    assert guarded.get("/openapi.json", headers=headers).status_code == 200
    assert guarded.get("/", auth=("alice", "wonderland")).status_code == 200
