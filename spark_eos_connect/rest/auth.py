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
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from starlette.types import ASGIApp, Receive, Scope, Send

from spark_eos_connect.errors import ConfigError

REALM = "KafkaConnect"
"""Connect's realm: the JAAS login context its basic-auth extension uses."""
UNAUTHORIZED_MESSAGE = "User cannot access the resource."
"""The message Connect's filter answers a request that fails authentication with."""

_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}
_BLANKS = " \t\f"


class CredentialsFileError(ConfigError):
    """The credentials file is missing, unreadable, malformed or empty (never shows a secret)."""


def _logical_lines(text: str) -> list[str]:
    """Java properties logical lines: comments and blanks dropped, ``\\`` continuations joined."""
    lines: list[str] = []
    pending: str | None = None
    for natural in text.splitlines():
        stripped = natural.lstrip(_BLANKS)
        if pending is None and (not stripped or stripped[0] in "#!"):
            continue
        current = stripped if pending is None else pending + stripped
        trailing = len(current) - len(current.rstrip("\\"))
        if trailing % 2:
            pending = current[:-1]
            continue
        lines.append(current)
        pending = None
    if pending is not None:
        lines.append(pending)
    return lines


def _unescape(text: str) -> str:
    """Java properties escapes: ``\\t \\n \\r \\f``, ``\\uXXXX``, and ``\\X`` for any other X."""
    out: list[str] = []
    index = 0
    while index < len(text):
        char = text[index]
        if char != "\\" or index + 1 == len(text):
            out.append(char)
            index += 1
            continue
        escaped = text[index + 1]
        if escaped == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", text[index + 2 : index + 6]):
            out.append(chr(int(text[index + 2 : index + 6], 16)))
            index += 6
            continue
        out.append(_ESCAPES.get(escaped, escaped))
        index += 2
    return "".join(out)


def _key_end(line: str) -> int:
    """Index of the first unescaped ``=``, ``:`` or blank of a line (its length if none)."""
    index = 0
    while index < len(line):
        if line[index] == "\\":
            index += 2
        elif line[index] in "=:" + _BLANKS:
            return index
        else:
            index += 1
    return len(line)


def _split_entry(line: str) -> tuple[str, str]:
    """(key, value) of one logical line: blanks, then one ``=`` or ``:``, separate them."""
    end = _key_end(line)
    rest = line[end:].lstrip(_BLANKS)
    if rest[:1] in ("=", ":"):
        rest = rest[1:].lstrip(_BLANKS)
    return _unescape(line[:end]), _unescape(rest)


def parse_credentials(text: str) -> dict[str, str]:
    """User -> password from a properties file's text (the last of duplicate users wins)."""
    return dict(_split_entry(line) for line in _logical_lines(text))


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
    credentials = parse_credentials(text)
    if not credentials:
        raise CredentialsFileError(
            f"the credentials file {path} holds no user=password line: every request would be "
            "refused (Kafka Connect would let every request through; this refuses to start)"
        )
    empty = sorted(user for user, password in credentials.items() if not user or not password)
    if empty:
        raise CredentialsFileError(f"the credentials file {path} has an empty user or password")
    return BasicAuth(credentials)


def parse_authorization(header: str | None) -> tuple[str, str] | None:
    """(user, password) of a ``Basic`` header, or None when absent or malformed."""
    if not header:
        return None
    scheme, _, encoded = header.strip().partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        decoded = base64.b64decode(encoded.strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
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
