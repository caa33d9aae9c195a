"""Decoding of PostgreSQL's `pgoutput` logical replication messages (protocol version 1).

Pure functions over the bytes `pg_logical_slot_peek_binary_changes` returns, one message per row:
Begin, Commit, Relation, Type, Insert, Update, Delete, Truncate and Origin. Column values arrive
in PostgreSQL's text format (`t`), as null (`n`) or as an unchanged TOASTed value (`u`, which
pgoutput sends instead of a large value that an update did not touch). Integers are big-endian;
timestamps are microseconds since 2000-01-01 UTC.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Final

__all__ = [
    "POSTGRES_EPOCH_US",
    "UNCHANGED_TOAST",
    "Begin",
    "Column",
    "Commit",
    "Delete",
    "Insert",
    "Message",
    "Origin",
    "PgOutputError",
    "Relation",
    "Truncate",
    "TypeInfo",
    "Update",
    "decode",
    "format_lsn",
    "parse_lsn",
]

POSTGRES_EPOCH_US: Final = 946_684_800_000_000
"""2000-01-01 UTC in microseconds since the Unix epoch (PostgreSQL's timestamp origin)."""


class _Unchanged:
    """The marker of a TOASTed column an update left as it was (its value is not sent)."""

    def __repr__(self) -> str:
        return "UNCHANGED_TOAST"


UNCHANGED_TOAST: Final = _Unchanged()

Value = str | None | _Unchanged
"""A column value in text format, null, or `UNCHANGED_TOAST`."""


class PgOutputError(ValueError):
    """The bytes are not a pgoutput message this decoder understands."""


@dataclass(frozen=True, slots=True)
class Begin:
    """A transaction starts; `final_lsn` is its commit record's LSN."""

    final_lsn: int
    commit_ts_us: int
    xid: int


@dataclass(frozen=True, slots=True)
class Commit:
    """A transaction ends; `end_lsn` is the LSN just after its commit record."""

    flags: int
    commit_lsn: int
    end_lsn: int
    commit_ts_us: int


@dataclass(frozen=True, slots=True)
class Origin:
    """The replication origin the transaction came from."""

    lsn: int
    name: str


@dataclass(frozen=True, slots=True)
class Column:
    """One column of a relation: `key` when it is part of the replica identity."""

    name: str
    type_oid: int
    type_modifier: int
    key: bool


@dataclass(frozen=True, slots=True)
class Relation:
    """A table's description, sent before the first change of it in a session."""

    relation_id: int
    namespace: str
    name: str
    replica_identity: str
    columns: tuple[Column, ...]


@dataclass(frozen=True, slots=True)
class TypeInfo:
    """A non-builtin type's name, sent before a relation that uses it."""

    type_oid: int
    namespace: str
    name: str


@dataclass(frozen=True, slots=True)
class Insert:
    """A new row."""

    relation_id: int
    new: tuple[Value, ...]


@dataclass(frozen=True, slots=True)
class Update:
    """A changed row; `old` is the old key (`K`) or the whole old row (`O`), or None when the
    replica identity did not change and is not FULL."""

    relation_id: int
    old: tuple[Value, ...] | None
    new: tuple[Value, ...]
    old_is_key: bool = False


@dataclass(frozen=True, slots=True)
class Delete:
    """A deleted row: its key (`K`) or whole old row (`O`)."""

    relation_id: int
    old: tuple[Value, ...]
    old_is_key: bool = True


@dataclass(frozen=True, slots=True)
class Truncate:
    """Tables emptied by TRUNCATE."""

    relation_ids: tuple[int, ...]
    options: int


Message = Begin | Commit | Origin | Relation | TypeInfo | Insert | Update | Delete | Truncate


_FORMATS: dict[str, struct.Struct] = {}
"""Compiled `struct` formats by format string."""
_INT32: Final = struct.Struct("!i")
_TEXT, _NULL, _UNCHANGED = ord("t"), ord("n"), ord("u")


class _Reader:
    __slots__ = ("data", "position")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.position = 0

    def take(self, fmt: str) -> tuple[int, ...]:
        compiled = _FORMATS.get(fmt)
        if compiled is None:
            compiled = _FORMATS[fmt] = struct.Struct(fmt)
        end = self.position + compiled.size
        if end > len(self.data):
            raise PgOutputError(f"message truncated at byte {self.position}: {self.data[:40]!r}")
        values = compiled.unpack_from(self.data, self.position)
        self.position = end
        return values

    def byte(self) -> str:
        return chr(self.take("!B")[0])

    def string(self) -> str:
        end = self.data.find(b"\x00", self.position)
        if end < 0:
            raise PgOutputError(f"unterminated string at byte {self.position}")
        text = self.data[self.position : end].decode("utf-8")
        self.position = end + 1
        return text

    def tuple_data(self) -> tuple[Value, ...]:
        (count,) = self.take("!h")
        data, at, size = self.data, self.position, len(self.data)
        values: list[Value] = []
        append = values.append
        for _ in range(count):
            if at >= size:
                raise PgOutputError(f"message truncated at byte {at}: {data[:40]!r}")
            kind = data[at]
            at += 1
            if kind == _TEXT:
                if at + 4 > size:
                    raise PgOutputError(f"message truncated at byte {at}: {data[:40]!r}")
                end = at + 4 + _INT32.unpack_from(data, at)[0]
                if end > size:
                    raise PgOutputError(f"column value truncated at byte {at + 4}")
                append(data[at + 4 : end].decode("utf-8"))
                at = end
            elif kind == _NULL:
                append(None)
            elif kind == _UNCHANGED:
                append(UNCHANGED_TOAST)
            else:
                raise PgOutputError(f"unknown column kind {chr(kind)!r} (binary mode is not used)")
        self.position = at
        return tuple(values)


_IDENTITIES: Final = {"d": "default", "n": "nothing", "f": "full", "i": "index"}


def _relation(reader: _Reader) -> Relation:
    (relation_id,) = reader.take("!I")
    namespace, name = reader.string(), reader.string()
    identity = _IDENTITIES.get(reader.byte(), "default")
    (count,) = reader.take("!h")
    columns = []
    for _ in range(count):
        (flags,) = reader.take("!B")
        column_name = reader.string()
        type_oid, type_modifier = reader.take("!Ii")
        columns.append(Column(column_name, type_oid, type_modifier, bool(flags & 1)))
    return Relation(relation_id, namespace, name, identity, tuple(columns))


def _update(reader: _Reader) -> Update:
    (relation_id,) = reader.take("!I")
    kind = reader.byte()
    old: tuple[Value, ...] | None = None
    old_is_key = False
    if kind in ("K", "O"):
        old, old_is_key = reader.tuple_data(), kind == "K"
        kind = reader.byte()
    if kind != "N":
        raise PgOutputError(f"update without a new tuple (found {kind!r})")
    return Update(relation_id, old, reader.tuple_data(), old_is_key)


def _delete(reader: _Reader) -> Delete:
    (relation_id,) = reader.take("!I")
    kind = reader.byte()
    if kind not in ("K", "O"):
        raise PgOutputError(f"delete without an old tuple (found {kind!r})")
    return Delete(relation_id, reader.tuple_data(), kind == "K")


def _insert(reader: _Reader) -> Insert:
    (relation_id,) = reader.take("!I")
    if reader.byte() != "N":
        raise PgOutputError("insert without a new tuple")
    return Insert(relation_id, reader.tuple_data())


def _truncate(reader: _Reader) -> Truncate:
    count, options = reader.take("!IB")
    return Truncate(reader.take(f"!{count}I"), options)


def decode(data: bytes) -> Message | None:
    """One pgoutput message; None for kinds a CDC source ignores (logical messages)."""
    if not data:
        raise PgOutputError("empty message")
    reader = _Reader(data if data.__class__ is bytes else bytes(data))
    kind = reader.byte()
    if kind == "B":
        return Begin(*reader.take("!QqI"))
    if kind == "C":
        return Commit(*reader.take("!BQQq"))
    if kind == "O":
        (lsn,) = reader.take("!Q")
        return Origin(lsn, reader.string())
    if kind == "R":
        return _relation(reader)
    if kind == "Y":
        (type_oid,) = reader.take("!I")
        return TypeInfo(type_oid, reader.string(), reader.string())
    if kind == "I":
        return _insert(reader)
    if kind == "U":
        return _update(reader)
    if kind == "D":
        return _delete(reader)
    if kind == "T":
        return _truncate(reader)
    if kind == "M":
        return None
    raise PgOutputError(f"unknown pgoutput message kind {kind!r}")


def parse_lsn(text: str) -> int:
    """`'16/B374D848'` as an integer."""
    high, _, low = text.partition("/")
    try:
        return (int(high, 16) << 32) | int(low, 16)
    except ValueError:
        raise PgOutputError(f"not an LSN: {text!r}") from None


def format_lsn(lsn: int) -> str:
    """An integer LSN in PostgreSQL's `X/X` text form."""
    return f"{lsn >> 32:X}/{lsn & 0xFFFFFFFF:X}"
