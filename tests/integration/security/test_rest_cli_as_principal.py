"""The CLI and `eosconnect rest` as a principal granted exactly the README's REST/CLI rows, over
SASL_SSL, with the password given by reference (`-X 'sasl.password=${file:...}'`) and the
bootstrap servers by `${env:...}`: both resolve their own Kafka settings, stop connectors and
get, alter and reset source and sink offsets; the secret is in none of their output or logs.
Without a row the CLI exits 1 naming the ACL (no traceback) and changes nothing; a bad reference
exits 2 naming it, not the value.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from spark_eos_connect.herder import Herder
from spark_eos_connect.jvm.broker import LocalKafkaBroker, free_port
from spark_eos_connect.jvm.processes import terminate
from spark_eos_connect.testing import wait_for

from .acl_table import ACL_ROWS, ADMIN, grants, grants_without, rows_for
from .conftest import SECURITY_MARKS, Principal
from .paths import (
    SOURCE_OFFSETS_BODY,
    AdminRun,
    Context,
    Deployment,
    canonical,
    make_deployment,
    principal_with,
    sink_offsets_body,
)
from .paths import settings as worker_settings

pytestmark = SECURITY_MARKS

BOOTSTRAP_VARIABLE = "ACL_TEST_BOOTSTRAP_SERVERS"
PASSWORD_KEY = "kafka.password"


@dataclass(frozen=True)
class AdminClientSettings:
    """The principal's settings as the CLI and `eosconnect rest` take them, by reference."""

    principal: Principal
    secrets: Path
    """The properties file holding the password."""

    def argv(self, deployment: Deployment | None = None) -> list[str]:
        """Cluster options: `--bootstrap-servers ${env:...}`, the `-X` settings and the
        deployment's worker topics."""
        argv = ["--bootstrap-servers", f"${{env:{BOOTSTRAP_VARIABLE}}}"]
        for key, value in self.principal.config.items():
            if key == "sasl.password":
                value = f"${{file:{self.secrets}:{PASSWORD_KEY}}}"
            if key != "bootstrap.servers":
                argv += ["-X", f"{key}={value}"]
        if deployment is not None:
            worker = deployment.worker_options()
            argv += ["--group-id", worker["group.id"]]
            argv += ["--config-topic", worker["config.storage.topic"]]
            argv += ["--offsets-topic", worker["offset.storage.topic"]]
            argv += ["--status-topic", worker["status.storage.topic"]]
        return argv

    def env(self) -> dict[str, str]:
        return {**os.environ, BOOTSTRAP_VARIABLE: self.principal.config["bootstrap.servers"]}


def by_reference(principal: Principal, folder: Path) -> AdminClientSettings:
    """`principal`'s settings with the password in a properties file."""
    secrets = folder / "kafka-secrets.properties"
    secrets.write_text(f"# the principal's password\n{PASSWORD_KEY}={principal.password}\n")
    return AdminClientSettings(principal, secrets)


def eosconnect(
    settings: AdminClientSettings, deployment: Deployment, *command: str
) -> subprocess.CompletedProcess[str]:
    """`eosconnect <command>` with the principal's cluster options."""
    argv = [
        sys.executable,
        "-m",
        "spark_eos_connect.apps.cli",
        *command,
        *settings.argv(deployment),
    ]
    return subprocess.run(
        argv, env=settings.env(), capture_output=True, text=True, timeout=120, check=False
    )


@pytest.fixture
def deployment(secured_broker: LocalKafkaBroker, tmp_path: Path) -> Deployment:
    """Fresh topics; a Generator source and a FileStreamSink sink connector made by the super
    user, both RUNNING (no query runs them)."""
    made = make_deployment(secured_broker)
    AdminRun().prepare(Context(None, secured_broker, tmp_path), made)
    return made


def admin_principal(
    broker: LocalKafkaBroker,
    make: Callable[[str], Principal],
    deployment: Deployment,
    leave_out: str | None = None,
) -> Principal:
    """A principal with the REST/CLI rows (but `leave_out`'s)."""
    rows = rows_for(ADMIN)
    missing = next((row for row in ACL_ROWS if row.key == leave_out), None)
    granted = (
        grants(deployment.pipeline, rows)
        if missing is None
        else grants_without(deployment.pipeline, missing, rows)
    )
    return principal_with(broker, make, granted)


def offsets_now(broker: LocalKafkaBroker, deployment: Deployment, tmp_path: Path) -> Any:
    return AdminRun.offsets_now(Context(None, broker, tmp_path), deployment)


def test_the_cli_runs_as_the_principal_with_its_password_by_reference(
    secured_broker: LocalKafkaBroker,
    principal_factory: Callable[[str], Principal],
    deployment: Deployment,
    tmp_path: Path,
) -> None:
    settings = by_reference(
        admin_principal(secured_broker, principal_factory, deployment), tmp_path
    )
    source, sink = deployment.connector, deployment.sink_connector
    sink_body = sink_offsets_body(deployment)
    outputs: list[str] = []

    def run(*command: str) -> Any:
        result = eosconnect(settings, deployment, *command)
        outputs.extend([result.stdout, result.stderr])
        assert result.returncode == 0, (command, result.stderr[-3000:])
        return json.loads(result.stdout) if result.stdout.strip() else None

    listed = run("connectors", "--expand", "status")
    assert sorted(listed) == sorted([source, sink])
    assert run("stop", source)["target_state"] == "STOPPED"
    run("offsets", "alter", source, "--offsets", json.dumps(SOURCE_OFFSETS_BODY))
    assert canonical(run("offsets", "get", source)["offsets"]) == SOURCE_OFFSETS_BODY["offsets"]
    assert "reset" in run("offsets", "reset", source)["message"]
    run("stop", sink)
    run("offsets", "alter", sink, "--offsets", json.dumps(sink_body))
    assert canonical(run("offsets", "get", sink)["offsets"]) == canonical(sink_body["offsets"])
    run("offsets", "reset", sink)

    assert offsets_now(secured_broker, deployment, tmp_path) == {"source": [], "sink": []}
    for text in outputs:
        assert settings.principal.password not in text


@dataclass(frozen=True)
class Refusal:
    """A CLI command refused for want of one README row, and the ACL its error must name."""

    first: Callable[[Deployment], list[list[str]]]
    """Commands that must go through before it (stopping the connector)."""
    command: Callable[[Deployment], list[str]]
    needs: Callable[[Deployment], str]
    """The text naming the missing ACL."""


REFUSALS = {
    "offsets-transactional-id": Refusal(
        lambda d: [["stop", d.connector]],
        lambda d: ["offsets", "alter", d.connector, "--offsets", json.dumps(SOURCE_OFFSETS_BODY)],
        lambda d: (
            f"it needs Write and Describe on TransactionalId '{d.pipeline.group_id}-{d.connector}'"
        ),
    ),
    "topic-write": Refusal(
        lambda d: [],
        lambda d: ["stop", d.connector],
        lambda d: f"it needs Write on Topic '{d.status_topic}'",
    ),
    "sink-group-read": Refusal(
        lambda d: [["stop", d.sink_connector]],
        lambda d: [
            *["offsets", "alter", d.sink_connector],
            *["--offsets", json.dumps(sink_offsets_body(d))],
        ],
        lambda d: f"it needs Read on Group 'connect-{d.sink_connector}'",
    ),
    "sink-group-delete": Refusal(
        lambda d: [["stop", d.sink_connector]],
        lambda d: ["offsets", "reset", d.sink_connector],
        lambda d: f"it needs Delete on Group 'connect-{d.sink_connector}'",
    ),
}


def connector_states(broker: LocalKafkaBroker, deployment: Deployment) -> dict[str, Any]:
    """Each connector's status and target state, read as the super user."""
    herder = Herder(broker.client_config(), worker_settings(deployment)).start()
    try:
        snapshot = herder.configs.read_to_end()
        return {
            name: (herder.status(name), snapshot.target_state(name))
            for name in (deployment.connector, deployment.sink_connector)
        }
    finally:
        herder.close()


@pytest.mark.parametrize("leave_out", sorted(REFUSALS))
def test_without_a_row_the_cli_exits_1_naming_the_acl_and_changes_nothing(
    secured_broker: LocalKafkaBroker,
    principal_factory: Callable[[str], Principal],
    deployment: Deployment,
    tmp_path: Path,
    leave_out: str,
) -> None:
    refusal = REFUSALS[leave_out]
    principal = admin_principal(secured_broker, principal_factory, deployment, leave_out)
    settings = by_reference(principal, tmp_path)
    for command in refusal.first(deployment):
        done = eosconnect(settings, deployment, *command)
        assert done.returncode == 0, (command, done.stderr[-3000:])
    before = connector_states(secured_broker, deployment)

    refused = eosconnect(settings, deployment, *refusal.command(deployment))

    assert refused.returncode == 1, refused.stderr[-3000:]
    assert refusal.needs(deployment) in refused.stderr, refused.stderr[-3000:]
    assert "Traceback" not in refused.stderr, refused.stderr[-3000:]
    assert principal.password not in refused.stdout + refused.stderr
    assert offsets_now(secured_broker, deployment, tmp_path) == {"source": [], "sink": []}
    assert connector_states(secured_broker, deployment) == before


@pytest.mark.parametrize("command", [("offsets", "get", "any"), ("rest",)], ids=["cli", "rest"])
def test_a_bad_reference_exits_2_naming_it_not_the_secret(
    principal_factory: Callable[[str], Principal], tmp_path: Path, command: tuple[str, ...]
) -> None:
    settings = by_reference(principal_factory("bad-reference"), tmp_path)
    missing_key = f"${{file:{settings.secrets}:absent}}"
    port = ["--port", str(free_port())] if command == ("rest",) else []
    options = [*settings.argv(), "-X", f"sasl.password={missing_key}", *port]

    result = subprocess.run(
        [sys.executable, "-m", "spark_eos_connect.apps.cli", *command, *options],
        env=settings.env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    assert result.returncode == 2, result.stderr[-3000:]
    assert f"Cannot resolve {missing_key} in option -X sasl.password: " in result.stderr
    assert settings.principal.password not in result.stdout + result.stderr


@dataclass
class RestServer:
    """A running `eosconnect rest` and its log."""

    process: subprocess.Popen[bytes]
    url: str
    log_path: Path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def answers(self) -> bool:
        """Whether `/` answers (any status); fails when the process has exited."""
        assert self.process.poll() is None, self.log()[-3000:]
        try:
            httpx.get(self.url + "/", timeout=2)
        except httpx.TransportError:
            return False
        return True


@pytest.fixture
def rest_server(
    secured_broker: LocalKafkaBroker,
    principal_factory: Callable[[str], Principal],
    deployment: Deployment,
    tmp_path: Path,
) -> Iterator[tuple[RestServer, AdminClientSettings]]:
    """`eosconnect rest` on loopback as a principal with the REST/CLI rows."""
    settings = by_reference(
        admin_principal(secured_broker, principal_factory, deployment), tmp_path
    )
    port = free_port()
    log_path = tmp_path / "rest.log"
    argv = [sys.executable, "-m", "spark_eos_connect.apps.cli", "rest", "--port", str(port)]
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [*argv, *settings.argv(deployment)],
            env=settings.env(),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        server = RestServer(process, f"http://127.0.0.1:{port}", log_path)
        try:
            wait_for(server.answers, 60, "eosconnect rest to answer")
            yield server, settings
        finally:
            terminate(process, 30)


def test_the_rest_api_runs_as_the_principal_with_its_password_by_reference(
    rest_server: tuple[RestServer, AdminClientSettings],
    secured_broker: LocalKafkaBroker,
    deployment: Deployment,
    tmp_path: Path,
) -> None:
    server, settings = rest_server
    source, sink = deployment.connector, deployment.sink_connector
    sink_body = sink_offsets_body(deployment)
    api = httpx.Client(base_url=server.url, timeout=60)
    answers: list[str] = []

    def call(method: str, path: str, status: int, body: Any = None) -> Any:
        response = api.request(method, path, json=body)
        answers.append(response.text)
        assert response.status_code == status, (method, path, response.text)
        return response.json() if response.content else None

    listed = call("GET", "/connectors?expand=status", 200)
    assert sorted(listed) == sorted([source, sink])
    call("PUT", f"/connectors/{source}/stop", 204)
    call("PATCH", f"/connectors/{source}/offsets", 200, SOURCE_OFFSETS_BODY)
    shown = call("GET", f"/connectors/{source}/offsets", 200)["offsets"]
    assert canonical(shown) == SOURCE_OFFSETS_BODY["offsets"]
    call("DELETE", f"/connectors/{source}/offsets", 200)
    call("PUT", f"/connectors/{sink}/stop", 204)
    call("PATCH", f"/connectors/{sink}/offsets", 200, sink_body)
    shown = call("GET", f"/connectors/{sink}/offsets", 200)["offsets"]
    assert canonical(shown) == canonical(sink_body["offsets"])
    call("DELETE", f"/connectors/{sink}/offsets", 200)
    call("PUT", f"/connectors/{source}/resume", 202)

    assert offsets_now(secured_broker, deployment, tmp_path) == {"source": [], "sink": []}
    terminate(server.process, 30)
    for text in [*answers, server.log()]:
        assert settings.principal.password not in text
