"""ASGI guards in front of the REST API: a request body limit enforced before anything is parsed,
HEAD answered as GET without a body, and a trailing slash answered like the path without it
(never a redirect built from the client's ``Host`` header).
"""

from __future__ import annotations

import json
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from spark_eos_connect.api.config import ConfigDef, ConfigType, Range

MAX_REQUEST_BYTES = "rest.max.request.bytes"
DEFAULT_MAX_REQUEST_BYTES = 4 * 1024 * 1024

REST_CONFIG = ConfigDef().define(
    MAX_REQUEST_BYTES,
    ConfigType.LONG,
    DEFAULT_MAX_REQUEST_BYTES,
    Range.at_least(1024),
    "medium",
    "The largest request body `eosconnect rest` accepts, in bytes; a larger one is answered 413 "
    "before it is read further or parsed (by its Content-Length, or by counting the bytes of a "
    "chunked body), so that no client can make the server hold more than this per request. "
    "Command line: `--max-request-bytes`.",
)
"""The REST server's own options."""


def max_request_bytes(value: str | int | None) -> int:
    """``rest.max.request.bytes`` parsed and checked (None: the default); `ConfigError` naming
    the option otherwise."""
    given = {} if value is None else {MAX_REQUEST_BYTES: value}
    return int(REST_CONFIG.parse(given)[MAX_REQUEST_BYTES])


async def send_error(send: Send, status: int, message: str) -> None:
    """Answer ``{"error_code": status, "message": message}`` (Connect's error body)."""
    body = json.dumps({"error_code": status, "message": message}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _content_length(scope: Scope) -> int | None:
    """The request's Content-Length (None when absent); ValueError when not a number."""
    for key, value in scope.get("headers", []):
        if key.lower() == b"content-length":
            text = bytes(value).decode("latin-1").strip()
            if not text.isdigit():
                raise ValueError(text)
            return int(text)
    return None


class BodyLimitMiddleware:
    """Refuse (413) a request body larger than `max_bytes` before it is parsed: at once when its
    Content-Length says so, else once the bytes received pass the limit. A body within the limit
    is read here and handed on whole, so the app never waits on a slow sender."""

    def __init__(self, app: ASGIApp, max_bytes: int = DEFAULT_MAX_REQUEST_BYTES) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Check and buffer the body of HTTP requests; pass everything else on."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        try:
            declared = _content_length(scope)
        except ValueError as error:
            await send_error(send, 400, f"Invalid Content-Length header {str(error)[:40]!r}")
            return
        if declared is not None and declared > self.max_bytes:
            await send_error(send, 413, self._too_large(f"of {declared} bytes"))
            return
        body = await self._read(receive)
        if body is None:
            await send_error(send, 413, self._too_large("sent in chunks"))
            return
        await self.app(scope, _replay(body, receive), send)

    def _too_large(self, size: str) -> str:
        return (
            f"Request body {size} is larger than {MAX_REQUEST_BYTES} ({self.max_bytes} bytes); "
            "send a smaller one, or raise the limit with --max-request-bytes"
        )

    async def _read(self, receive: Receive) -> bytes | None:
        """The whole body, or None as soon as more than `max_bytes` arrived."""
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return b"".join(chunks)
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                return None
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    """A `receive` that yields `body` once, then waits on the real one (for a disconnect)."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if sent:
            return await receive()
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replay


class HeadAndSlashMiddleware:
    """HEAD runs the GET handler and drops its body (Connect answers HEAD on every GET
    resource); ``/connectors/`` is routed as ``/connectors``."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Rewrite the method and path of HTTP requests; pass everything else on."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope["path"]
        changes: dict[str, Any] = {}
        if len(path) > 1 and path.endswith("/"):
            changes["path"] = path.rstrip("/") or "/"
        if scope["method"] == "HEAD":
            changes["method"] = "GET"
            send = _without_body(send)
        await self.app({**scope, **changes} if changes else scope, receive, send)


def _without_body(send: Send) -> Send:
    """A `send` that keeps the status and headers but drops every body byte."""

    async def head(message: Message) -> None:
        if message["type"] == "http.response.body":
            message = {**message, "body": b""}
        await send(message)

    return head
