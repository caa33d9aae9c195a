"""What the Schema Registry converters share: their options, the registry client, the wire format.

The wire format (Confluent's): magic byte 0, the schema id as a 4-byte big-endian integer,
then the serialised value. The client is confluent-kafka's `SchemaRegistryClient` (a `mock://`
URL gives its in-process mock, shared by every converter of this process with the same URL);
`RegistryClient` caches what it learns and turns the registry's answers into errors naming the
subject or schema id, the registry's URLs and what it said. This module is the converters' only
importer of `confluent_kafka` (its `schema_registry` package; see setup.cfg's contracts).
"""

from __future__ import annotations

import struct
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from spark_eos_connect.api.config import ConfigDef, ConfigType, Password, Range, ValidString
from spark_eos_connect.errors import ConfigError, DataError, RetriableError

__all__ = [
    "MAGIC_BYTE",
    "REGISTRY_CONFIG_DEF",
    "RegisteredSchema",
    "RegistryClient",
    "RegistryError",
    "RegistryUnreachableError",
    "frame",
    "mock_client",
    "unframe",
]

MAGIC_BYTE = 0
_HEADER = struct.Struct(">bI")

URL = "schema.registry.url"
CREDENTIALS_SOURCE = "basic.auth.credentials.source"
USER_INFO = "basic.auth.user.info"
SSL_PREFIX = "schema.registry.ssl."
SSL_CA = SSL_PREFIX + "ca.location"
SSL_CERTIFICATE = SSL_PREFIX + "certificate.location"
SSL_KEY = SSL_PREFIX + "key.location"
SSL_KEY_PASSWORD = SSL_PREFIX + "key.password"
SSL_TRUSTSTORE = SSL_PREFIX + "truststore.location"
SSL_TRUSTSTORE_TYPE = SSL_PREFIX + "truststore.type"
SSL_ENDPOINT_IDENTIFICATION = SSL_PREFIX + "endpoint.identification.algorithm"
AUTO_REGISTER = "auto.register.schemas"
USE_LATEST = "use.latest.version"
KEY_STRATEGY = "key.subject.name.strategy"
VALUE_STRATEGY = "value.subject.name.strategy"
CACHE_SIZE = "max.schemas.per.subject"
TIMEOUT_MS = "schema.registry.request.timeout.ms"

REGISTRY_CONFIG_DEF = (
    ConfigDef()
    .define(
        URL,
        ConfigType.LIST,
        doc="Comma-separated URLs of the Schema Registry (tried in turn); a mock:// URL is "
        "confluent-kafka's in-process mock.",
        importance="high",
    )
    .define(
        CREDENTIALS_SOURCE,
        ConfigType.STRING,
        "URL",
        ValidString.one_of("URL", "USER_INFO", case_insensitive=True),
        "medium",
        "Where basic auth credentials come from: URL (user:password@ in the URL) or USER_INFO "
        "(basic.auth.user.info).",
    )
    .define(
        USER_INFO,
        ConfigType.PASSWORD,
        None,
        None,
        "medium",
        "user:password for basic auth when basic.auth.credentials.source=USER_INFO.",
    )
    .define(SSL_CA, ConfigType.STRING, None, None, "medium", "PEM file of the CAs to trust.")
    .define(SSL_CERTIFICATE, ConfigType.STRING, None, None, "medium", "Client certificate (PEM).")
    .define(SSL_KEY, ConfigType.STRING, None, None, "medium", "Client private key (PEM).")
    .define(SSL_KEY_PASSWORD, ConfigType.PASSWORD, None, None, "medium", "The key's password.")
    .define(
        SSL_TRUSTSTORE,
        ConfigType.STRING,
        None,
        None,
        "low",
        "A truststore of type PEM (Java's JKS/PKCS12 stores are not read here).",
    )
    .define(SSL_TRUSTSTORE_TYPE, ConfigType.STRING, "JKS", None, "low", "The truststore's type.")
    .define(
        SSL_ENDPOINT_IDENTIFICATION,
        ConfigType.STRING,
        "https",
        None,
        "low",
        "https checks the registry's host name; empty does not verify the registry's certificate.",
    )
    .define(
        AUTO_REGISTER,
        ConfigType.BOOLEAN,
        True,
        None,
        "medium",
        "Register a value's schema under its subject (false: it must be registered already).",
    )
    .define(
        USE_LATEST,
        ConfigType.BOOLEAN,
        False,
        None,
        "medium",
        "Write with the subject's latest registered schema (with auto.register.schemas=false).",
    )
    .define(
        KEY_STRATEGY,
        ConfigType.STRING,
        "TopicNameStrategy",
        None,
        "medium",
        "Subject name strategy for keys (TopicNameStrategy, RecordNameStrategy, "
        "TopicRecordNameStrategy, or Confluent's class names).",
    )
    .define(
        VALUE_STRATEGY,
        ConfigType.STRING,
        "TopicNameStrategy",
        None,
        "medium",
        "Subject name strategy for values.",
    )
    .define(
        CACHE_SIZE,
        ConfigType.INT,
        1000,
        Range.at_least(1),
        "low",
        "Schemas remembered by the client and the converter.",
    )
    .define(
        TIMEOUT_MS,
        ConfigType.INT,
        30000,
        Range.at_least(1),
        "low",
        "How long one request to the registry may take before it counts as unreachable.",
    )
)
"""The options every Schema Registry converter reads (Confluent's names)."""


def frame(schema_id: int, payload: bytes) -> bytes:
    """The Confluent wire format of `payload` written with schema `schema_id`."""
    return _HEADER.pack(MAGIC_BYTE, schema_id) + payload


def unframe(data: bytes, topic: str) -> tuple[int, memoryview]:
    """The schema id and the payload of Confluent-framed `data`."""
    if len(data) < _HEADER.size:
        raise DataError(
            f"Record of topic {topic} is {len(data)} bytes, shorter than the Schema Registry "
            "wire format's 5-byte header"
        )
    magic, schema_id = _HEADER.unpack_from(data)
    if magic != MAGIC_BYTE:
        raise DataError(
            f"Unknown magic byte {magic} in a record of topic {topic}: not the Schema Registry "
            "wire format (magic byte 0, 4-byte schema id)"
        )
    return schema_id, memoryview(data)[_HEADER.size :]


class RegistryError(DataError):
    """The registry refused a request; the message names the subject or id and its answer."""


class RegistryUnreachableError(RegistryError, RetriableError):
    """No registry URL answered within the timeout (retried within `errors.retry.timeout`)."""


@dataclass(frozen=True)
class RegisteredSchema:
    """A schema the registry holds: its id and text (and version when known)."""

    schema_id: int
    schema_str: str
    schema_type: str
    version: int | None = None


_MOCKS: dict[str, Any] = {}
_MOCKS_LOCK = threading.Lock()


def client_config(options: Mapping[str, Any]) -> dict[str, Any]:
    """confluent-kafka's client settings from the converter's parsed options."""
    urls = [u.strip() for u in options[URL] if u.strip()]
    if not urls:
        raise ConfigError(f"{URL} must name at least one Schema Registry URL")
    conf: dict[str, Any] = {
        "url": ",".join(urls),
        "cache.capacity": options[CACHE_SIZE],
        "timeout": options[TIMEOUT_MS] / 1000,
        "max.retries": 0,
    }
    if str(options[CREDENTIALS_SOURCE]).upper() == "USER_INFO":
        info = options[USER_INFO]
        secret = info.value if isinstance(info, Password) else info
        if not secret or ":" not in secret:
            raise ConfigError(
                f"{USER_INFO} must be user:password when {CREDENTIALS_SOURCE}=USER_INFO"
            )
        conf["basic.auth.user.info"] = secret
    ca = options[SSL_CA]
    if options[SSL_TRUSTSTORE]:
        if str(options[SSL_TRUSTSTORE_TYPE]).upper() != "PEM":
            raise ConfigError(
                f"{SSL_TRUSTSTORE} of type {options[SSL_TRUSTSTORE_TYPE]} cannot be read here: "
                f"use a PEM file ({SSL_TRUSTSTORE_TYPE}=PEM or {SSL_CA})"
            )
        ca = ca or options[SSL_TRUSTSTORE]
    if ca:
        conf["ssl.ca.location"] = ca
    elif not options[SSL_ENDPOINT_IDENTIFICATION]:
        conf["ssl.ca.location"] = False
    if options[SSL_CERTIFICATE]:
        conf["ssl.certificate.location"] = options[SSL_CERTIFICATE]
    if options[SSL_KEY]:
        conf["ssl.key.location"] = options[SSL_KEY]
    password = options[SSL_KEY_PASSWORD]
    if password is not None:
        conf["ssl.key.password"] = password.value if isinstance(password, Password) else password
    return conf


def mock_client(url: str) -> Any:
    """confluent-kafka's in-process mock registry that this process's converters with the
    `mock://` URL `url` share (made on first use), e.g. to register schemas in tests."""
    return _new_client({"url": url})


def _new_client(conf: dict[str, Any]) -> Any:
    from confluent_kafka.schema_registry import SchemaRegistryClient

    url = conf["url"]
    if url.startswith("mock://"):
        with _MOCKS_LOCK:
            found = _MOCKS.get(url)
            if found is None:
                found = _MOCKS[url] = SchemaRegistryClient.new_client(conf)
            return found
    try:
        return SchemaRegistryClient(conf)
    except (ValueError, TypeError) as error:
        raise ConfigError(f"Invalid Schema Registry settings: {error}") from None


class RegistryClient:
    """A Schema Registry client for converters: cached, with errors naming what failed."""

    def __init__(self, options: Mapping[str, Any]) -> None:
        conf = client_config(options)
        self.urls = conf["url"]
        self.timeout_ms = int(options[TIMEOUT_MS])
        self._client = _new_client(conf)
        self._by_id: dict[int, RegisteredSchema] = {}
        self._ids: dict[tuple[str, str, bool], int] = {}
        self._latest: dict[str, RegisteredSchema] = {}

    def _call(self, what: str, call: Any, *args: Any) -> Any:
        from confluent_kafka.schema_registry.error import SchemaRegistryError

        try:
            return call(*args)
        except SchemaRegistryError as error:
            raise RegistryError(
                f"Schema Registry at {self.urls} refused to {what}: HTTP {error.http_status_code}"
                f", error code {error.error_code}: {error.error_message}"
            ) from None
        except (OSError, ConnectionError) as error:
            raise self._unreachable(what, error) from None
        except Exception as error:
            if type(error).__module__.startswith(("httpx", "httpcore", "httpx2")):
                raise self._unreachable(what, error) from None
            raise

    def _unreachable(self, what: str, error: BaseException) -> RegistryUnreachableError:
        return RegistryUnreachableError(
            f"Schema Registry at {self.urls} unreachable (timeout {self.timeout_ms} ms) trying "
            f"to {what}: {type(error).__name__}: {error}"
        )

    def schema_id(self, subject: str, schema_str: str, schema_type: str, register: bool) -> int:
        """The id of `schema_str` under `subject`: registered (`register`) or looked up."""
        from confluent_kafka.schema_registry import Schema

        key = (subject, schema_str, register)
        found = self._ids.get(key)
        if found is not None:
            return found
        schema = Schema(schema_str, schema_type)
        if register:
            found = self._call(
                f"register a schema under subject {subject!r}",
                self._client.register_schema,
                subject,
                schema,
            )
        else:
            registered = self._call(
                f"look up the schema under subject {subject!r} (auto.register.schemas=false)",
                self._client.lookup_schema,
                subject,
                schema,
            )
            found = registered.schema_id
        assert found is not None
        self._ids[key] = int(found)
        return int(found)

    def latest(self, subject: str) -> RegisteredSchema:
        """The latest version registered under `subject` (cached)."""
        found = self._latest.get(subject)
        if found is None:
            registered = self._call(
                f"get the latest version of subject {subject!r}",
                self._client.get_latest_version,
                subject,
            )
            found = RegisteredSchema(
                int(registered.schema_id),
                registered.schema.schema_str,
                registered.schema.schema_type or "AVRO",
                registered.version,
            )
            self._latest[subject] = found
        return found

    def by_id(self, schema_id: int) -> RegisteredSchema:
        """The schema with id `schema_id` (cached)."""
        found = self._by_id.get(schema_id)
        if found is None:
            schema = self._call(
                f"get the schema with id {schema_id}", self._client.get_schema, schema_id
            )
            found = RegisteredSchema(schema_id, schema.schema_str, schema.schema_type or "AVRO")
            self._by_id[schema_id] = found
        return found
