"""SASL and TLS for the local broker: broker settings, client settings, certificates, principals.

`--security sasl` serves clients on a SASL_PLAINTEXT listener, `--security sasl_ssl` on a SASL_SSL
one; both take SCRAM-SHA-512 (users made with the admin API) and PLAIN (the super user only). The
controller listener (same JVM) authenticates with PLAIN as the super user, and the
StandardAuthorizer denies whatever no ACL allows (`allow.everyone.if.no.acl.found=false`).
"""

from __future__ import annotations

import secrets
import subprocess
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from spark_eos_connect.errors import EosConnectError, SetupError
from spark_eos_connect.kafka.client_settings import with_client_defaults
from spark_eos_connect.kafka.clients import KafkaTimeoutError
from spark_eos_connect.kafka.errors import describe_client

SECURITY_MODES = ("none", "sasl", "sasl_ssl")
SUPER_USER = "admin"
SCRAM_MECHANISM = "SCRAM-SHA-512"
PLAIN_MECHANISM = "PLAIN"
AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
CONTROLLER_LISTENER = "CONTROLLER"
_PLAIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"
_SCRAM_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"


@dataclass(frozen=True)
class BrokerSecurity:
    """How the local broker authenticates: the mode, the super user's password and, for
    `sasl_ssl`, the PKCS12 keystore the broker serves and the PEM certificate clients trust."""

    mode: str = "none"
    admin_password: str = ""
    keystore: Path | None = None
    store_password: str = ""
    ca_location: Path | None = None

    def __post_init__(self) -> None:
        if self.mode not in SECURITY_MODES:
            raise SetupError(f"security must be one of {', '.join(SECURITY_MODES)}: {self.mode!r}")

    @property
    def protocol(self) -> str:
        """The client listener's security protocol (and listener name)."""
        return {"none": "PLAINTEXT", "sasl": "SASL_PLAINTEXT", "sasl_ssl": "SASL_SSL"}[self.mode]


def plain_jaas(user: str, password: str) -> str:
    """A PlainLoginModule entry: `user` logs in as itself and is the one PLAIN user accepted."""
    credentials = f'username="{user}" password="{password}" user_{user}="{password}"'
    return f"{_PLAIN_MODULE} required {credentials};"


def listener_properties(
    security: BrokerSecurity, host: str, port: int, controller_port: int
) -> dict[str, str]:
    """Listener layout: the client (and inter-broker) listener plus the controller's."""
    name = security.protocol
    controller_protocol = "PLAINTEXT" if security.mode == "none" else "SASL_PLAINTEXT"
    return {
        "listeners": f"{name}://{host}:{port},{CONTROLLER_LISTENER}://{host}:{controller_port}",
        "advertised.listeners": f"{name}://{host}:{port}",
        "listener.security.protocol.map": (
            f"{name}:{name},{CONTROLLER_LISTENER}:{controller_protocol}"
        ),
        "inter.broker.listener.name": name,
    }


def sasl_properties(security: BrokerSecurity) -> dict[str, str]:
    """SASL, the authorizer and the super user; empty for `none`."""
    if security.mode == "none":
        return {}
    listener = security.protocol.lower()
    admin_jaas = plain_jaas(SUPER_USER, security.admin_password)
    return {
        "sasl.enabled.mechanisms": f"{SCRAM_MECHANISM},{PLAIN_MECHANISM}",
        "sasl.mechanism.inter.broker.protocol": PLAIN_MECHANISM,
        "sasl.mechanism.controller.protocol": PLAIN_MECHANISM,
        f"listener.name.{listener}.plain.sasl.jaas.config": admin_jaas,
        f"listener.name.{listener}.{SCRAM_MECHANISM.lower()}.sasl.jaas.config": (
            f"{_SCRAM_MODULE} required;"
        ),
        "listener.name.controller.sasl.enabled.mechanisms": PLAIN_MECHANISM,
        "listener.name.controller.plain.sasl.jaas.config": admin_jaas,
        "authorizer.class.name": AUTHORIZER,
        "super.users": f"User:{SUPER_USER}",
        "allow.everyone.if.no.acl.found": "false",
    }


def ssl_properties(security: BrokerSecurity) -> dict[str, str]:
    """The broker's keystore and, for its own inter-broker connections, the PEM it trusts."""
    if security.mode != "sasl_ssl":
        return {}
    if security.keystore is None or security.ca_location is None:
        raise SetupError("security sasl_ssl needs a keystore and a CA certificate")
    return {
        "ssl.keystore.type": "PKCS12",
        "ssl.keystore.location": str(security.keystore),
        "ssl.keystore.password": security.store_password,
        "ssl.key.password": security.store_password,
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": str(security.ca_location),
    }


def security_properties(
    security: BrokerSecurity, host: str, port: int, controller_port: int
) -> dict[str, str]:
    """Every broker setting `security` decides."""
    return {
        **listener_properties(security, host, port, controller_port),
        **sasl_properties(security),
        **ssl_properties(security),
    }


def scram_format_arguments(security: BrokerSecurity) -> list[str]:
    """`kafka-storage format` arguments creating the super user's SCRAM credentials."""
    if security.mode == "none":
        return []
    credential = f"{SCRAM_MECHANISM}=[name={SUPER_USER},password={security.admin_password}]"
    return ["--add-scram", credential]


def client_security_config(
    security: BrokerSecurity,
    username: str = SUPER_USER,
    password: str | None = None,
    mechanism: str = SCRAM_MECHANISM,
) -> dict[str, str]:
    """librdkafka settings for a client of the broker (without `bootstrap.servers`); the super
    user's password unless `password` is given."""
    if security.mode == "none":
        return {}
    config = {
        "security.protocol": security.protocol,
        "sasl.mechanism": mechanism,
        "sasl.username": username,
        "sasl.password": security.admin_password if password is None else password,
    }
    if security.ca_location is not None:
        config["ssl.ca.location"] = str(security.ca_location)
    return config


def new_password() -> str:
    """A random password safe inside JAAS quotes and `--add-scram` brackets."""
    return secrets.token_hex(16)


def make_broker_certificate(folder: Path, password: str, host: str) -> tuple[Path, Path]:
    """A self-signed certificate for `host` (and localhost) made with the JDK's `keytool`:
    (the PKCS12 keystore, the certificate as PEM for clients to trust). Reused if present."""
    keystore, pem = folder / "broker.p12", folder / "broker-ca.pem"
    if keystore.exists() and pem.exists():
        return keystore, pem
    folder.mkdir(parents=True, exist_ok=True)
    common = ["-keystore", str(keystore), "-storetype", "PKCS12", "-storepass", password]
    _keytool(
        "-genkeypair", "-alias", "broker", "-keyalg", "RSA", "-keysize", "2048",
        "-validity", "365", "-dname", f"CN={host}",
        "-ext", f"SAN=ip:{host},dns:localhost", "-keypass", password, *common,
    )  # fmt: skip
    _keytool("-exportcert", "-rfc", "-alias", "broker", "-file", str(pem), *common)
    return keystore, pem


def _keytool(*args: str) -> None:
    try:
        result = subprocess.run(
            ["keytool", *args], capture_output=True, text=True, check=False, timeout=120
        )
    except FileNotFoundError as error:
        raise SetupError("`keytool` (from the JDK) is needed for --security sasl_ssl") from error
    if result.returncode != 0:
        raise SetupError(f"keytool {args[0]} failed: {result.stdout}{result.stderr}")


# -- principals and ACLs, through the admin API as the super user ------------------------------


def create_scram_user(admin_config: Mapping[str, Any], user: str, password: str) -> None:
    """Create (or reset) `user`'s SCRAM-SHA-512 credentials."""
    from confluent_kafka.admin import (
        AdminClient,
        ScramCredentialInfo,
        ScramMechanism,
        UserScramCredentialUpsertion,
    )

    info = ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096)
    upsert = UserScramCredentialUpsertion(user, info, password.encode())
    admin = AdminClient(with_client_defaults(admin_config))  # kept alive until the futures resolve
    for future in admin.alter_user_scram_credentials([upsert]).values():
        future.result()


def create_acls(admin_config: Mapping[str, Any], bindings: Iterable[Any]) -> None:
    """Create `bindings` (confluent_kafka `AclBinding`s), failing on the first refused one."""
    from confluent_kafka.admin import AdminClient

    bindings = list(bindings)
    if not bindings:
        return
    admin = AdminClient(with_client_defaults(admin_config))
    for future in admin.create_acls(bindings, request_timeout=30).values():
        future.result()


def delete_acls(admin_config: Mapping[str, Any], filters: Iterable[Any]) -> None:
    """Delete every ACL matching `filters` (confluent_kafka `AclBindingFilter`s)."""
    from confluent_kafka.admin import AdminClient

    filters = list(filters)
    if not filters:
        return
    admin = AdminClient(with_client_defaults(admin_config))
    for future in admin.delete_acls(filters, request_timeout=30).values():
        future.result()


# -- failing fast on refused credentials ---------------------------------------------------------

CONNECT_ERRORS = ("_AUTHENTICATION", "_SSL")


class KafkaAuthenticationError(EosConnectError, PermissionError):
    """The broker refused the client's credentials, or the TLS handshake failed."""


def authenticates(config: Mapping[str, Any]) -> bool:
    """Whether a client with `config` logs in or checks certificates (SASL or SSL)."""
    return str(config.get("security.protocol", "plaintext")).lower() != "plaintext"


def verify_credentials(config: Mapping[str, Any], timeout_s: float = 30.0) -> None:
    """Return once the brokers answer a metadata request with `config`; raise
    `KafkaAuthenticationError` as soon as they refuse its credentials or certificate (librdkafka
    only retries those), `KafkaTimeoutError` if neither happens within `timeout_s`. The probe's
    client logs nothing: the refusal is in the error raised, once."""
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient

    refused: list[Any] = []

    def on_error(error: Any) -> None:
        if error.name() in CONNECT_ERRORS:
            refused.append(error)

    client: dict[str, Any] = {**config, "error_cb": on_error, "log_level": 0}
    admin = AdminClient(with_client_defaults(client))
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            admin.list_topics(timeout=0.5)
            return
        except KafkaException:
            admin.poll(0)
        if refused:
            raise KafkaAuthenticationError(
                f"Kafka refused {describe_client(config)}: {refused[0].str()}"
            )
        if time.monotonic() > deadline:
            raise KafkaTimeoutError(
                f"no answer from {config.get('bootstrap.servers')} within {timeout_s:.0f}s"
            )
