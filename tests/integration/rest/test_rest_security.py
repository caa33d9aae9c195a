"""`eosconnect rest` with TLS and basic authentication, as a real server on the test broker:
HTTPS verified with a CA made at test time (nothing committed), 401 with Connect's error body
and a challenge, a non-loopback address refused with neither, and no credential in its log."""

from __future__ import annotations

import base64
import os
import shlex
import ssl
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import httpx
import pytest

from spark_eos_connect.herder import WorkerSettings
from spark_eos_connect.jvm.broker import free_port
from spark_eos_connect.rest.auth import REALM, UNAUTHORIZED_MESSAGE
from spark_eos_connect.testing import wait_for

from ..docs.readme import shell_lines, snippet

pytestmark = pytest.mark.integration

PASSWORD = "Pl4nted-rest-s3cret"
WRONG_PASSWORD = "Wr0ng-planted-guess"
KEY_PASSWORD = "K3y-planted-pass"
VENV_BIN = Path(sys.executable).parent


def openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=120)


@dataclass(frozen=True)
class Certificates:
    """A test CA and a server certificate it signed for localhost and 127.0.0.1."""

    ca: Path
    cert: Path
    key: Path
    key_password: str | None

    def client_context(self) -> ssl.SSLContext:
        """An SSL context trusting only the test CA."""
        return ssl.create_default_context(cafile=str(self.ca))


def make_certificates(folder: Path, key_password: str | None = None) -> Certificates:
    """CA and server certificate made with `openssl`; the server key encrypted if asked."""
    folder.mkdir(parents=True, exist_ok=True)
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=test-ca",
            "-keyout", "ca.key", "-out", "ca.pem", cwd=folder)  # fmt: skip
    key_protection = ["-passout", f"pass:{key_password}"] if key_password else ["-nodes"]
    openssl("req", "-newkey", "rsa:2048", *key_protection, "-subj", "/CN=localhost",
            "-keyout", "server.key", "-out", "server.csr", cwd=folder)  # fmt: skip
    (folder / "san.ext").write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
            "-CAcreateserial", "-days", "1", "-extfile", "san.ext", "-out", "server.pem",
            cwd=folder)  # fmt: skip
    return Certificates(
        folder / "ca.pem", folder / "server.pem", folder / "server.key", key_password
    )


def credentials_file(folder: Path) -> Path:
    """A credentials file in Connect's PropertyFileLoginModule format."""
    path = folder / "connect.password"
    path.write_text(f"# users of the REST API\nadmin: {PASSWORD}\nviewer=other-{PASSWORD}\n")
    return path


@dataclass
class RestServer:
    """A running `eosconnect rest` process, its base URL and its log file."""

    process: subprocess.Popen[bytes]
    url: str
    log_path: Path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


def rest_argv(bootstrap_servers: str, settings: WorkerSettings, *extra: str) -> list[str]:
    """`eosconnect rest` on the `settings` topics with `extra` options."""
    return [
        str(VENV_BIN / "eosconnect"),
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
        *extra,
    ]


def answers(server: RestServer, **request: object) -> bool:
    """Whether the server answers `/` (any status); fails when the process has exited."""
    assert server.process.poll() is None, server.log()[-3000:]
    try:
        httpx.get(server.url + "/", timeout=2, **request)  # type: ignore[arg-type]
    except httpx.TransportError:
        return False
    return True


@pytest.fixture
def start_rest(
    bootstrap_servers: str, settings: WorkerSettings, tmp_path: Path
) -> Iterator[Callable[..., RestServer]]:
    """`start_rest(scheme, *options, **request)`: a server on a free port, answering."""
    started: list[tuple[RestServer, IO[bytes]]] = []

    def start(scheme: str, *options: str, **request: object) -> RestServer:
        port = free_port()
        log_path = tmp_path / f"rest-{port}.log"
        log = log_path.open("wb")
        argv = rest_argv(bootstrap_servers, settings, "--port", str(port), *options)
        process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
        server = RestServer(process, f"{scheme}://127.0.0.1:{port}", log_path)
        started.append((server, log))
        wait_for(lambda: answers(server, **request), 60, "eosconnect rest to answer")
        return server

    yield start
    for server, log in started:
        stop(server)
        log.close()


def stop(server: RestServer) -> None:
    """Terminate the server and wait for it (its log is complete afterwards)."""
    if server.process.poll() is None:
        server.process.terminate()
        server.process.wait(timeout=30)


def assert_unauthorized(response: httpx.Response) -> None:
    assert response.status_code == 401, response.text
    assert response.json() == {"error_code": 401, "message": UNAUTHORIZED_MESSAGE}
    assert response.headers["www-authenticate"].startswith(f'Basic realm="{REALM}"')


def assert_no_credentials_in(text: str) -> None:
    for secret in (PASSWORD, WRONG_PASSWORD, KEY_PASSWORD):
        assert secret not in text
        for user in ("admin", "viewer", "ghost"):
            token = base64.b64encode(f"{user}:{secret}".encode()).decode()
            assert token not in text
    assert "authorization" not in text.lower()


CONNECTOR = {"connector.class": "FileStreamSource", "file": "/tmp/in.txt", "topic": "t"}


def test_https_with_basic_auth_on_every_address(
    start_rest: Callable[..., RestServer], tmp_path: Path, unique_name: Callable[[str], str]
) -> None:
    certs = make_certificates(tmp_path / "tls")
    options = ["--host", "0.0.0.0", "--certfile", str(certs.cert), "--keyfile", str(certs.key)]
    options += ["--basic-auth-file", str(credentials_file(tmp_path))]
    trust = certs.client_context()
    server = start_rest("https", *options, verify=trust)
    right = ("admin", PASSWORD)

    with httpx.Client(base_url=server.url, verify=trust, timeout=30) as client:
        assert client.get("/connectors", auth=right).json() == []
        name = unique_name("src")
        created = client.post("/connectors", json={"name": name, "config": CONNECTOR}, auth=right)
        assert created.status_code == 201, created.text
        assert client.get("/connectors", auth=("viewer", f"other-{PASSWORD}")).json() == [name]
        assert client.put(f"/connectors/{name}/stop", auth=right).status_code == 204

        for path in ("/connectors", "/", "/openapi.json", f"/connectors/{name}/status"):
            assert_unauthorized(client.get(path))
            assert_unauthorized(client.get(path, auth=("admin", WRONG_PASSWORD)))
            assert_unauthorized(client.get(path, auth=("ghost", PASSWORD)))
        assert_unauthorized(client.delete(f"/connectors/{name}", auth=("viewer", PASSWORD)))
        assert_unauthorized(client.post("/connectors", json={"name": "x", "config": CONNECTOR}))
        assert client.get("/connectors", auth=right).json() == [name]  # nothing else written

    with pytest.raises(httpx.TransportError):  # plain HTTP to the TLS port gets no answer
        httpx.get(server.url.replace("https://", "http://") + "/", auth=right, timeout=10)
    with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
        httpx.get(server.url + "/", auth=right, timeout=10)  # the system CAs do not know it

    stop(server)
    log = server.log()
    assert "GET /connectors HTTP/1.1" in log and "401" in log  # the log does record requests
    assert_no_credentials_in(log)


def test_basic_auth_over_http_on_every_address_works_with_a_warning(
    start_rest: Callable[..., RestServer], tmp_path: Path
) -> None:
    options = ["--host", "0.0.0.0", "--basic-auth-file", str(credentials_file(tmp_path))]
    server = start_rest("http", *options)
    assert httpx.get(server.url + "/connectors", auth=("admin", PASSWORD)).json() == []
    assert_unauthorized(httpx.get(server.url + "/connectors", auth=("admin", WRONG_PASSWORD)))
    stop(server)
    assert "listening on 0.0.0.0 without TLS" in server.log()
    assert_no_credentials_in(server.log())


def test_tls_with_an_encrypted_key_and_no_authentication(
    start_rest: Callable[..., RestServer], tmp_path: Path
) -> None:
    certs = make_certificates(tmp_path / "tls", key_password=KEY_PASSWORD)
    password_file = tmp_path / "key.password"
    password_file.write_text(KEY_PASSWORD + "\n")
    options = ["--host", "0.0.0.0", "--certfile", str(certs.cert), "--keyfile", str(certs.key)]
    options += ["--keyfile-password-file", str(password_file)]
    trust = certs.client_context()
    server = start_rest("https", *options, verify=trust)
    assert httpx.get(server.url + "/connectors", verify=trust).json() == []
    stop(server)
    assert "without authentication" in server.log()
    assert_no_credentials_in(server.log())


def run_cli(argv: list[str], **options: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False, **options)


@pytest.mark.parametrize("host", ["0.0.0.0", "::"])
def test_cli_refuses_every_address_with_neither_tls_nor_auth(
    bootstrap_servers: str, settings: WorkerSettings, host: str
) -> None:
    result = run_cli(rest_argv(bootstrap_servers, settings, "--host", host, "--port", "1"))
    assert result.returncode == 2, result.stderr
    assert "not a loopback address" in result.stderr
    for option in ("--certfile", "--basic-auth-file"):
        assert option in result.stderr


def test_cli_refuses_bad_security_files_before_serving(
    bootstrap_servers: str, settings: WorkerSettings, tmp_path: Path
) -> None:
    certs = make_certificates(tmp_path / "tls", key_password=KEY_PASSWORD)
    empty = tmp_path / "empty.password"
    empty.write_text("# nobody\n")
    cases = {
        ("--basic-auth-file", str(tmp_path / "missing")): "cannot read the credentials file",
        ("--basic-auth-file", str(empty)): "holds no user=password line",
        ("--certfile", str(certs.cert), "--keyfile", str(certs.key)): "password is missing",
        ("--keyfile", str(certs.key)): "need --certfile",
    }
    for options, message in cases.items():
        result = run_cli(rest_argv(bootstrap_servers, settings, "--port", "1", *options))
        assert result.returncode == 2, (options, result.stderr)
        assert message in result.stderr, (options, result.stderr)
        assert "Traceback" not in result.stderr


def test_rest_help_names_the_security_options() -> None:
    result = run_cli([str(VENV_BIN / "eosconnect"), "rest", "--help"])
    for option in ("--certfile", "--keyfile", "--keyfile-password-file", "--basic-auth-file"):
        assert option in result.stdout
    assert "PropertyFileLoginModule" in result.stdout


# --- the README's "REST API" security block -----------------------------------------------------

README_KEY = "```bash eosconnect rest --bootstrap-servers 127.0.0.1:9092 --host 0.0.0.0"
"""The block's key in the docs tests (`tests/integration/docs/readme.py`): its first line."""


def readme_security_block() -> str:
    """README.md's security block (its "REST API" part of the Security section)."""
    return snippet(README_KEY).text


def run_readme_security_block(
    block: str, bootstrap_servers: str, settings: WorkerSettings, folder: Path
) -> None:
    """Run every line of `block` in `folder` as a user would: `eosconnect rest` on a free port
    (on the `settings` topics), exit codes and curl statuses checked against the comments."""
    port = free_port()
    env = {**os.environ, "PATH": f"{VENV_BIN}{os.pathsep}{os.environ['PATH']}"}
    extra = [*rest_argv(bootstrap_servers, settings)[4:], "--port", str(port)]
    log_path = folder / "rest.log"
    servers: list[subprocess.Popen[bytes]] = []
    probe = f"curl -s --cacert rest-cert.pem https://localhost:{port}/"
    try:
        for line, comment in shell_lines(block):
            command = line.replace("127.0.0.1:9092", bootstrap_servers).replace(":8083", f":{port}")
            if line.startswith("eosconnect rest") and line.endswith("&"):
                argv = [*shlex.split(command.removesuffix("&")), *extra]
                with log_path.open("ab") as log:
                    process = subprocess.Popen(
                        argv, cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT
                    )
                servers.append(process)
                wait_for(lambda: curl_status(probe, folder) > 0, 60, "eosconnect rest (HTTPS)")
            elif line.startswith("eosconnect rest"):
                argv = [*shlex.split(command), *extra]
                result = run_cli(argv, cwd=folder, env=env)
                assert comment.startswith(f"exit {result.returncode}:"), (line, result.stderr)
            elif line.startswith("curl "):
                assert curl_status(command, folder) == int(comment.split()[0]), line
            else:
                subprocess.run(["bash", "-c", command], cwd=folder, env=env, check=True, timeout=60)
    finally:
        for server in servers:
            server.terminate()
            server.wait(timeout=30)
    assert servers, "the block starts no server"
    assert "change-me" not in log_path.read_text()


def curl_status(command: str, folder: Path) -> int:
    """The HTTP status a curl line gets (0 when it gets no answer)."""
    result = subprocess.run(
        ["bash", "-c", f"{command} -o /dev/null -w '%{{http_code}}'"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return int(result.stdout or 0)


def test_readme_security_block(
    bootstrap_servers: str, settings: WorkerSettings, tmp_path: Path
) -> None:
    run_readme_security_block(readme_security_block(), bootstrap_servers, settings, tmp_path)
