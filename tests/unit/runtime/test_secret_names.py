"""Secrets masking: every Kafka client and Schema Registry secret name, bare and behind the prefixes
options carry, and the PASSWORD-typed options of a connector's own config definition."""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator

import pytest

from spark_eos_connect.api.config import HIDDEN, ConfigDef, ConfigType
from spark_eos_connect.connectors.file_stream import (
    SOURCE_CONFIG_DEF,
    FileStreamSourceConnector,
)
from spark_eos_connect.herder.plugins import Plugins
from spark_eos_connect.runtime.config.secret_names import SECRET_NAMES, is_secret, masked

PREFIXES = [
    "",
    "kafka.",
    "producer.override.",
    "consumer.override.",
    "admin.override.",
    "key.converter.",
    "value.converter.",
    "value.converter.schema.registry.",
    "producer.",
]
NAMED_IN_ISSUE_17 = [
    "ssl.key.pem",
    "ssl.keystore.key",
    "sasl.oauthbearer.config",
    "basic.auth.user.info",
]
NOT_SECRETS = [
    "topic",
    "kafka.bootstrap.servers",
    "kafka.security.protocol",
    "kafka.sasl.mechanism",
    "ssl.keystore.location",
    "ssl.truststore.location",
    "ssl.certificate.location",
    "ssl.key",
    "xssl.key.pem",
    "ssl.key.pem.file",
    "basic.auth.credentials.source",
    "bearer.auth.credentials.source",
    "value.converter.schema.registry.url",
    "consumer.override.max.poll.records",
    "key.converter",
]
VAULT_MODULE = "eosconnect_test_vault_connector"


class VaultSourceConnector(FileStreamSourceConnector):
    """FileStreamSource with a PASSWORD-typed option whose name looks like no secret."""

    def config_def(self) -> ConfigDef:
        own = ConfigDef().define("vault.token", ConfigType.PASSWORD, None)
        return SOURCE_CONFIG_DEF.merge(own)


@pytest.fixture
def vault_class() -> Iterator[str]:
    """The dotted path of `VaultSourceConnector`, importable while the test runs."""
    module = types.ModuleType(VAULT_MODULE)
    module.VaultSourceConnector = VaultSourceConnector  # type: ignore[attr-defined]
    sys.modules[VAULT_MODULE] = module
    try:
        yield f"{VAULT_MODULE}.VaultSourceConnector"
    finally:
        del sys.modules[VAULT_MODULE]


def test_the_names_issue_17_found_in_clear_are_listed() -> None:
    assert set(NAMED_IN_ISSUE_17) <= SECRET_NAMES


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("secret", sorted(SECRET_NAMES))
def test_every_listed_secret_is_masked_bare_and_prefixed(secret: str, prefix: str) -> None:
    name = prefix + secret
    assert is_secret(name)
    assert is_secret(name.upper())
    assert masked({name: "s3cr3t", "topic": "t"}) == {name: HIDDEN, "topic": "t"}


@pytest.mark.parametrize("name", NOT_SECRETS)
def test_other_options_are_shown(name: str) -> None:
    assert not is_secret(name)
    assert masked({name: "v"}) == {name: "v"}


def test_a_connectors_own_password_option_is_masked(vault_class: str) -> None:
    props = {"connector.class": vault_class, "file": "/f", "topic": "t", "vault.token": "tok"}
    assert not is_secret("vault.token")
    shown = masked(props, Plugins((vault_class.rpartition(".")[0],)).definitions(props))
    assert shown == {**props, "vault.token": HIDDEN}


def test_unset_secrets_stay_null() -> None:
    assert masked({"kafka.ssl.key.pem": None}) == {"kafka.ssl.key.pem": None}
