"""Which config values are secrets, and configs with those values masked for REST output and logs.

A name is a secret when a config definition types it PASSWORD, when it is one of the Kafka
client or Schema Registry secret names below, bare or behind any prefix (``kafka.``,
``producer.override.``, ``consumer.override.``, ``admin.override.``, ``value.converter.``,
``schema.registry.`` ...: the name ends in ``.<secret name>``), or when it contains
``password`` or ``secret``. Names are compared case-insensitively (Spark lower-cases options).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from spark_eos_connect.api.config import HIDDEN, ConfigDef, ConfigType

SECRET_NAME_MARKERS: Final = ("password", "secret")

JAVA_CLIENT_SECRETS: Final = frozenset(
    {  # PASSWORD-typed settings of Kafka's Java clients (SslConfigs, SaslConfigs)
        "ssl.key.password",
        "ssl.keystore.password",
        "ssl.keystore.key",
        "ssl.keystore.certificate.chain",
        "ssl.truststore.password",
        "ssl.truststore.certificates",
        "sasl.jaas.config",
        "sasl.oauthbearer.client.credentials.client.secret",
        "sasl.oauthbearer.assertion.private.key.passphrase",
    }
)

LIBRDKAFKA_SECRETS: Final = frozenset(
    {  # librdkafka's settings flagged sensitive (_RK_SENSITIVE in rdkafka_conf.c)
        "ssl.key.location",
        "ssl.key.password",
        "ssl.key.pem",
        "ssl.ca.pem",
        "ssl.keystore.password",
        "sasl.username",
        "sasl.password",
        "sasl.oauthbearer.config",
        "sasl.oauthbearer.client.secret",
        "sasl.oauthbearer.assertion.private.key.passphrase",
        "sasl.oauthbearer.assertion.private.key.pem",
    }
)

SCHEMA_REGISTRY_SECRETS: Final = frozenset(
    {  # Schema Registry clients (Java and Python); its ssl.* secrets are the clients' above
        "basic.auth.user.info",
        "bearer.auth.token",
        "bearer.auth.client.secret",
        "bearer.auth.custom.provider.config",
    }
)

SECRET_NAMES: Final = JAVA_CLIENT_SECRETS | LIBRDKAFKA_SECRETS | SCHEMA_REGISTRY_SECRETS


def is_listed_secret(name: str) -> bool:
    """Whether `name`, or its part after any dotted prefix, is a known secret name."""
    parts = name.lower().split(".")
    return any(".".join(parts[start:]) in SECRET_NAMES for start in range(len(parts)))


def is_password_option(name: str, definitions: Iterable[ConfigDef]) -> bool:
    """Whether any of `definitions` types `name` PASSWORD."""
    for definition in definitions:
        key = definition.keys.get(name) or definition.keys.get(name.lower())
        if key is not None and key.type is ConfigType.PASSWORD:
            return True
    return False


def is_secret(name: str, definitions: Iterable[ConfigDef] = ()) -> bool:
    """A PASSWORD option of any of `definitions`, a known secret name, or one that looks like it."""
    lowered = name.lower()
    return (
        any(marker in lowered for marker in SECRET_NAME_MARKERS)
        or is_listed_secret(name)
        or is_password_option(name, definitions)
    )


def masked(props: Mapping[str, Any], definitions: Iterable[ConfigDef] = ()) -> dict[str, Any]:
    """`props` with every secret value replaced by ``[hidden]`` (for output, never for storage)."""
    definitions = list(definitions)
    return {
        name: HIDDEN if value is not None and is_secret(name, definitions) else value
        for name, value in props.items()
    }
