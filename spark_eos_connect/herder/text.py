"""Text a request may carry: strings that are Unicode, so that Kafka records can hold them."""

from __future__ import annotations

from typing import Any

from spark_eos_connect.herder.errors import BadRequestError


def check_unicode(value: Any, where: str) -> None:
    """`BadRequestError` if a string in `value` (keys included) holds a lone surrogate, which no
    Kafka record can carry (not Unicode text). Walks iteratively: any depth is fine."""
    pending: list[tuple[Any, str]] = [(value, where)]
    while pending:
        item, path = pending.pop()
        if isinstance(item, str):
            _check_text(item, path)
        elif isinstance(item, dict):
            for key, nested in item.items():
                if isinstance(key, str):
                    _check_text(key, f"a key in {path}")
                pending.append((nested, f"{path}.{key}"))
        elif isinstance(item, list):
            pending.extend((nested, f"{path}[{index}]") for index, nested in enumerate(item))


def _check_text(text: str, path: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        code = ord(text[error.start])
        shown = path.encode("utf-8", "backslashreplace").decode("utf-8")
        raise BadRequestError(
            f"Invalid request: {shown} holds a lone surrogate (\\u{code:04x}), which is not "
            "Unicode text (Kafka records cannot carry it)"
        ) from None
