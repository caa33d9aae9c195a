"""The task host protocol's encoding (spec: `TaskHostMain`'s class comment, java/task-host):
frames of a u32 little-endian length and a kind byte; i32, i64, length-prefixed strings,
bytes and string maps, all little-endian."""

from __future__ import annotations

import struct
from collections.abc import Iterable, Mapping

START_TASK = 1
POLL = 2
COMMITTED = 3
STOP_TASK = 4
VALIDATE = 10
EXACTLY_ONCE_SUPPORT = 11
START_CONNECTOR = 12
TASK_CONFIGS = 13
STOP_CONNECTOR = 14
CONNECTOR_EVENTS = 15
CONNECTOR_PLUGINS = 16
CONFIG_INFOS = 17
TRANSACTION_BOUNDARIES = 18
ALTER_OFFSETS = 19
OK = 100
ERROR = 101
BATCH = 102
PROBLEMS = 103
CONFIGS = 104
TEXT = 105
QUERY = 110
ANSWER = 111
CONNECTOR_QUERY = 112

_I32 = struct.Struct("<i")
_I64 = struct.Struct("<q")
_U32 = struct.Struct("<I")


class FrameWriter:
    """One frame being written."""

    def __init__(self, kind: int) -> None:
        self._parts: list[bytes] = [bytes((kind,))]

    def i32(self, value: int) -> FrameWriter:
        """An i32."""
        self._parts.append(_I32.pack(value))
        return self

    def i64(self, value: int) -> FrameWriter:
        """An i64."""
        self._parts.append(_I64.pack(value))
        return self

    def raw(self, data: bytes) -> FrameWriter:
        """Bytes without a length."""
        self._parts.append(data)
        return self

    def text(self, value: str | None) -> FrameWriter:
        """A string (None: length -1)."""
        if value is None:
            return self.i32(-1)
        data = value.encode("utf-8")
        return self.i32(len(data)).raw(data)

    def texts(self, values: Iterable[str | None]) -> FrameWriter:
        """An i32 count, then the strings."""
        items = list(values)
        self.i32(len(items))
        for value in items:
            self.text(value)
        return self

    def map(self, values: Mapping[str, str]) -> FrameWriter:
        """An i32 count, then keys and values."""
        self.i32(len(values))
        for key, value in values.items():
            self.text(key).text(value)
        return self

    def frame(self) -> bytes:
        """The frame with its length prefix."""
        body = b"".join(self._parts)
        return _U32.pack(len(body)) + body


class FrameReader:
    """One received frame's fields, read in order."""

    def __init__(self, body: bytes) -> None:
        self.body = body
        self.kind = body[0]
        self.at = 1

    def i32(self) -> int:
        """An i32."""
        (value,) = _I32.unpack_from(self.body, self.at)
        self.at += 4
        return int(value)

    def i64(self) -> int:
        """An i64."""
        (value,) = _I64.unpack_from(self.body, self.at)
        self.at += 8
        return int(value)

    def raw(self, size: int) -> bytes:
        """`size` bytes."""
        data = self.body[self.at : self.at + size]
        self.at += size
        return data

    def text(self) -> str | None:
        """A string (None when written as null)."""
        size = self.i32()
        return None if size < 0 else self.raw(size).decode("utf-8")

    def texts(self) -> list[str | None]:
        """An i32 count, then the strings."""
        return [self.text() for _ in range(self.i32())]

    def map(self) -> dict[str, str]:
        """An i32 count, then keys and values."""
        result: dict[str, str] = {}
        for _ in range(self.i32()):
            key, value = self.text(), self.text()
            result[key or ""] = value or ""
        return result


def frame_length(header: bytes) -> int:
    """The body length a frame's 4-byte header announces."""
    return int(_U32.unpack(header)[0])
