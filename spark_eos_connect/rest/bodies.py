"""Request and response bodies of the REST API: JSON only (else 415, as Connect's resources
consume ``application/json``), parsed with Python's own types, text that is Unicode.

Parsing is plain `json.loads` on bytes the body limit already bounded; the REST layer runs it in
a worker thread. Every problem is a `BadRequestError` (400) naming it.
"""

from __future__ import annotations

import json
import math
from email.message import Message
from typing import Any

from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from spark_eos_connect.herder import BadRequestError
from spark_eos_connect.herder.text import check_unicode

JSON_MEDIA_TYPE = "application/json"
_SURROGATE_ESCAPE = b"\\ud"
"""Lone surrogates reach Python strings only through ``\\uD800``-``\\uDFFF`` escapes."""


def require_json(content_type: str | None) -> None:
    """415 unless `content_type` is absent or a JSON media type (``application/json``,
    ``application/*+json``)."""
    if content_type is None or not content_type.strip():
        return
    message = Message()
    message["content-type"] = content_type
    subtype = message.get_content_subtype()
    if message.get_content_maintype() == "application" and (
        subtype == "json" or subtype.endswith("+json")
    ):
        return
    raise HTTPException(
        415,
        f"Unsupported Media Type: the request body must be JSON (Content-Type: "
        f"{JSON_MEDIA_TYPE}), got Content-Type {content_type[:80]!r}",
    )


def _not_finite(text: str) -> float:
    """Refuse ``NaN``/``Infinity``, which Python's parser takes but JSON has not."""
    raise ValueError(f"{text} is not a JSON number")


def _finite_float(text: str) -> float:
    """A JSON number as a float; one too large for a double (``1e999``) is refused."""
    value = float(text)
    if math.isinf(value):
        raise ValueError(f"the number {text[:40]} is out of range")
    return value


def parse_json(raw: bytes) -> Any:
    """The JSON value of a request body; `BadRequestError` naming what is wrong with it."""
    if not raw.strip():
        raise BadRequestError("Invalid request: body: a JSON body is required")
    try:
        value = json.loads(raw, parse_constant=_not_finite, parse_float=_finite_float)
    except json.JSONDecodeError as error:
        raise BadRequestError(
            f"Invalid request: body: malformed JSON ({error.msg} at position {error.pos})"
        ) from None
    except UnicodeDecodeError:
        raise BadRequestError("Invalid request: body: not UTF-8 encoded JSON") from None
    except RecursionError:
        raise BadRequestError("Invalid request: body: JSON nested too deeply") from None
    except ValueError as error:  # NaN, Infinity, numbers out of range or too many digits
        raise BadRequestError(f"Invalid request: body: {error}") from None
    if _SURROGATE_ESCAPE in raw.lower():
        check_unicode(value, "body")
    return value


class ConnectJSONResponse(JSONResponse):
    """`JSONResponse` that never fails on text: UTF-8 when it can be, else ASCII escapes."""

    def render(self, content: Any) -> bytes:
        """Compact JSON, UTF-8; a string that is no Unicode text is sent escaped."""
        try:
            return super().render(content)
        except UnicodeEncodeError:
            return json.dumps(content, ensure_ascii=True, separators=(",", ":")).encode()
