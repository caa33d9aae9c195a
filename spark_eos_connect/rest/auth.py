"""HTTP basic authentication for the REST API, like Kafka Connect's
``BasicAuthSecurityRestExtension`` with its ``PropertyFileLoginModule``.

The credentials file is the one that module reads: a Java properties file of ``user=password``
(or ``user: password``) lines, ``#``/``!`` comments. As in Connect, the whole value is the
password (no role list). Unlike Connect, an empty file is refused instead of letting every
request through. Every request must carry valid credentials (``/``, ``/openapi.json`` and
``/docs`` included, as Connect's filter guards every resource); otherwise the answer is 401
with Connect's error body and a ``WWW-Authenticate: Basic`` challenge.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from starlette.types import ASGIApp, Receive, Scope, Send

from spark_eos_connect.errors import ConfigError
from spark_eos_connect.protocol.java_properties import parse_properties

REALM = "KafkaConnect"
"""Connect's realm: the JAAS login context its basic-auth extension uses."""
UNAUTHORIZED_MESSAGE = "User cannot access the resource."
"""The message Connect's filter answers a request that fails authentication with."""


class CredentialsFileError(ConfigError):
    """The credentials file is missing, unreadable, malformed or empty (never shows a secret)."""


def parse_credentials(text: str, source: str = "") -> dict[str, str]:
    """User -> password from a properties file's text (the last of duplicate users wins)."""
    try:
        return parse_properties(text, source)
    except ConfigError as error:
        raise CredentialsFileError(str(error)) from None


@dataclass(frozen=True)
class BasicAuth:
    """The accepted users and passwords (kept out of ``repr``) and the realm of the challenge."""

    credentials: Mapping[str, str] = field(repr=False)
    realm: str = REALM

    def __post_init__(self) -> None:
        if not self.credentials:
            raise CredentialsFileError("no credentials given: every request would be refused")

    def accepts(self, authorization: str | None) -> bool:
        """Whether an ``Authorization`` header value names a user and its password."""
        parsed = parse_authorization(authorization)
        if parsed is None:
            return False
        user, password = (part.encode("utf-8") for part in parsed)
        matched = False
        for known_user, known_password in self.credentials.items():
            same_user = hmac.compare_digest(user, known_user.encode("utf-8"))
            same_password = hmac.compare_digest(password, known_password.encode("utf-8"))
            matched |= same_user & same_password
        return matched


def load_credentials(path: str | Path) -> BasicAuth:
    """`BasicAuth` from a credentials file; errors name the file, never its contents."""
    try:
        text = Path(path).read_text("utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) else "not UTF-8 text"
        raise CredentialsFileError(f"cannot read the credentials file {path}: {reason}") from None
    credentials = parse_credentials(text, str(path))
    if not credentials:
        raise CredentialsFileError(
            f"the credentials file {path} holds no user=password line: every request would be "
            "refused (Kafka Connect would let every request through; this refuses to start)"
        )
    if any(not user or not password for user, password in credentials.items()):
        raise CredentialsFileError(f"the credentials file {path} has an empty user or password")
    return BasicAuth(credentials)


def parse_authorization(header: str | None) -> tuple[str, str] | None:
    """(user, password) of a ``Basic`` header, or None when absent or malformed (also when the
    credentials hold characters outside base64's alphabet, such as ``Basic é``)."""
    if not header:
        return None
    scheme, _, encoded = header.strip().partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        decoded = base64.b64decode(encoded.strip(), validate=True).decode("utf-8")
    except (binascii.Error, ValueError):  # ValueError: non-ASCII text, UnicodeDecodeError
        return None
    user, colon, password = decoded.partition(":")
    return (user, password) if colon and user else None


class BasicAuthMiddleware:
    """ASGI middleware answering 401 to every HTTP request without valid basic credentials."""

    def __init__(self, app: ASGIApp, auth: BasicAuth) -> None:
        self.app = app
        self.auth = auth

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass authenticated (and non-HTTP) calls on; challenge the others."""
        if scope["type"] != "http" or self.auth.accepts(_header(scope, b"authorization")):
            await self.app(scope, receive, send)
            return
        await _send_unauthorized(send, self.auth.realm)


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return bytes(value).decode("latin-1")
    return None


async def _send_unauthorized(send: Send, realm: str) -> None:
    body = json.dumps({"error_code": 401, "message": UNAUTHORIZED_MESSAGE}).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"www-authenticate", f'Basic realm="{realm}", charset="UTF-8"'.encode()),
    ]
    await send({"type": "http.response.start", "status": 401, "headers": headers})
    await send({"type": "http.response.body", "body": body})
