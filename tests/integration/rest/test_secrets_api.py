"""Secrets never leave the REST API in clear: every Kafka client and Schema Registry secret name,
bare and prefixed, and a connector's own PASSWORD option, in every view of a connector (real
broker)."""

from __future__ import annotations

import dataclasses
import sys
import types
from collections.abc import Callable, Iterator

import pytest
from fastapi.testclient import TestClient

from spark_eos_connect.api.config import HIDDEN, ConfigDef, ConfigType
from spark_eos_connect.connectors.file_stream import SOURCE_CONFIG_DEF, FileStreamSourceConnector
from spark_eos_connect.herder import Herder, WorkerSettings
from spark_eos_connect.runtime.config.secret_names import SECRET_NAMES

pytestmark = pytest.mark.integration

PREFIXES = ["", "kafka.", "producer.override.", "consumer.override.", "admin.override."]
SR_PREFIXES = ["value.converter.", "key.converter.schema.registry."]
VAULT_MODULE = "eosconnect_test_vault_connector_api"


class VaultSourceConnector(FileStreamSourceConnector):
    """FileStreamSource with a PASSWORD-typed option whose name looks like no secret."""

    def config_def(self) -> ConfigDef:
        own = ConfigDef().define("vault.token", ConfigType.PASSWORD, None)
        return SOURCE_CONFIG_DEF.merge(own)


@pytest.fixture
def settings(settings: WorkerSettings) -> WorkerSettings:
    """The herder may load the vault connector (plugin.packages)."""
    return dataclasses.replace(settings, plugin_packages=(VAULT_MODULE,))


@pytest.fixture
def vault_class() -> Iterator[str]:
    """The dotted path of `VaultSourceConnector`, importable by the herder while the test runs."""
    module = types.ModuleType(VAULT_MODULE)
    module.VaultSourceConnector = VaultSourceConnector  # type: ignore[attr-defined]
    sys.modules[VAULT_MODULE] = module
    try:
        yield f"{VAULT_MODULE}.VaultSourceConnector"
    finally:
        del sys.modules[VAULT_MODULE]


def secret_options() -> dict[str, str]:
    """Every secret name under every prefix, each with its own recognisable value."""
    names = [prefix + secret for prefix in PREFIXES for secret in sorted(SECRET_NAMES)]
    names += [prefix + "basic.auth.user.info" for prefix in SR_PREFIXES]
    names += [prefix + "bearer.auth.token" for prefix in SR_PREFIXES]
    return {name: f"clear-secret-{index:03d}" for index, name in enumerate(names)}


def assert_masked(config: dict[str, str | None], secrets: dict[str, str], shown: str) -> None:
    for name in [*secrets, "vault.token"]:
        assert config[name] == HIDDEN, name
    assert config["topic"] == "t"
    assert "clear-secret-" not in shown
    assert "vault-token-value" not in shown


def test_every_secret_is_masked_in_every_view(
    client: TestClient, herder: Herder, unique_name: Callable[[str], str], vault_class: str
) -> None:
    name = unique_name("secrets")
    secrets = secret_options()
    config = {
        "connector.class": vault_class,
        "file": "/tmp/in.txt",
        "topic": "t",
        "vault.token": "vault-token-value",
        **secrets,
    }
    put = client.put(f"/connectors/{name}/config", json=config)
    assert put.status_code == 201, put.text
    assert_masked(put.json()["config"], secrets, put.text)

    info = client.get(f"/connectors/{name}")
    assert_masked(info.json()["config"], secrets, info.text)
    stored = client.get(f"/connectors/{name}/config")
    assert_masked(stored.json(), secrets, stored.text)
    expanded = client.get("/connectors", params={"expand": "info"})
    assert_masked(expanded.json()[name]["info"]["config"], secrets, expanded.text)

    leader = herder.configs.leader()  # a driver writes task configs holding the same options
    leader.put_task_configs(name, [config])
    leader.close()
    tasks = client.get(f"/connectors/{name}/tasks")
    assert_masked(tasks.json()[0]["config"], secrets, tasks.text)

    # Stored in clear (the query needs them), only shown masked.
    assert herder.configs.read_to_end().connector_config(name) == {**config, "name": name}
