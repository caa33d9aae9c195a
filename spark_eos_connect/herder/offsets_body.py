"""Connect's REST offsets bodies: ``{"offsets":[{"partition":{...},"offset":{...}|null}]}``.

Source partitions and offsets are maps of string keys to primitive values. Sink partitions are
``{"kafka_topic":t,"kafka_partition":p}`` with offsets ``{"kafka_offset":n}``; as in Connect,
partition and offset numbers may also be given as numeric strings. Pure functions; every problem
raises `BadRequestError` naming the entry and what is wrong.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from spark_eos_connect.api.sink import TopicPartition
from spark_eos_connect.herder.errors import BadRequestError
from spark_eos_connect.herder.text import check_unicode
from spark_eos_connect.protocol import _json
from spark_eos_connect.protocol.offsets_format import (
    SOURCE_OFFSET,
    SOURCE_PARTITION,
    OffsetFormatError,
    partition_key,
    validate_offset_map,
)

KAFKA_TOPIC = "kafka_topic"
KAFKA_PARTITION = "kafka_partition"
KAFKA_OFFSET = "kafka_offset"
_SHAPE = '{"offsets":[{"partition":{...},"offset":{...}}]}'
MAX_PARTITION = 2**31 - 1
"""Kafka partition numbers are Java ints (int32)."""
MAX_OFFSET = 2**63 - 1
"""Kafka offsets are Java longs (int64)."""
MAX_TOPIC_LENGTH = 249
_TOPIC_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")

SourceOffsets = list[tuple[dict[str, Any], dict[str, Any] | None]]
SinkOffsets = dict[TopicPartition, int | None]


def _entries(body: object) -> list[tuple[int, object, object]]:
    if not isinstance(body, Mapping):
        raise BadRequestError(
            f"The offsets request body must be a JSON object like {_SHAPE}, "
            f"got {_json.type_name(body)}"
        )
    offsets = body.get("offsets")
    if offsets is None or (isinstance(offsets, list) and not offsets):
        raise BadRequestError(
            f"The offsets request body names no offsets: give at least one entry, as in {_SHAPE}"
        )
    if not isinstance(offsets, list):
        raise BadRequestError(f"'offsets' must be a JSON array, got {_json.type_name(offsets)}")
    check_unicode(offsets, "offsets")
    entries = []
    for index, entry in enumerate(offsets):
        if not isinstance(entry, Mapping):
            raise BadRequestError(
                f"offsets[{index}] must be an object with a 'partition' and an 'offset' "
                f"(null to reset), got {_json.type_name(entry)}"
            )
        if "partition" not in entry:
            raise BadRequestError(f"offsets[{index}] has no 'partition'")
        entries.append((index, entry.get("partition"), entry.get("offset")))
    return entries


def parse_source_offsets(body: object) -> SourceOffsets:
    """``[(source partition, offset or None)]``; a repeated partition keeps its last offset."""
    parsed: dict[str, tuple[dict[str, Any], dict[str, Any] | None]] = {}
    for index, partition, offset in _entries(body):
        if partition is None:
            raise BadRequestError(f"offsets[{index}]: the source partition cannot be null")
        try:
            validate_offset_map(partition, SOURCE_PARTITION)
            if offset is not None:
                validate_offset_map(offset, SOURCE_OFFSET)
        except OffsetFormatError as exc:
            raise BadRequestError(f"offsets[{index}]: {exc}") from exc
        assert isinstance(partition, Mapping)
        value = None if offset is None else dict(offset)  # type: ignore[call-overload]
        parsed[partition_key(partition)] = (dict(partition), value)
    return list(parsed.values())


def _number(value: object, what: str, index: int, maximum: int, kind: str) -> int:
    """A non-negative integer (or numeric string) of at most `maximum` (`kind` names the type)."""
    if isinstance(value, str):
        try:
            value = int(value.strip(), 10)
        except ValueError:
            value = None
    if not _json.is_int(value):
        raise BadRequestError(f"offsets[{index}]: {what} must be an integer, got {value!r}")
    assert isinstance(value, int)
    if value < 0:
        raise BadRequestError(f"offsets[{index}]: {what} must not be negative, got {value}")
    if value > maximum:
        raise BadRequestError(
            f"offsets[{index}]: {what} must be at most {maximum} (a Kafka {kind}), got {value}"
        )
    return value


def _topic(value: object, index: int) -> str:
    """A name Kafka allows for a topic: 1 to 249 of ``[a-zA-Z0-9._-]``, not ``.`` or ``..``."""
    if not isinstance(value, str) or not value:
        raise BadRequestError(
            f"offsets[{index}]: '{KAFKA_TOPIC}' must be a non-empty string, got {value!r}"
        )
    legal = len(value) <= MAX_TOPIC_LENGTH and value not in (".", "..")
    if not legal or not _TOPIC_CHARACTERS.issuperset(value):
        shown = value if len(value) <= 60 else value[:60] + "..."
        raise BadRequestError(
            f"offsets[{index}]: '{KAFKA_TOPIC}' {shown!r} is not a Kafka topic name (1 to "
            f"{MAX_TOPIC_LENGTH} ASCII letters, digits, '.', '_' or '-'; not '.' or '..')"
        )
    return value


def parse_sink_offsets(body: object) -> SinkOffsets:
    """``{TopicPartition: offset or None}``; an offset is the next one the connector reads."""
    parsed: SinkOffsets = {}
    for index, partition, offset in _entries(body):
        if not isinstance(partition, Mapping):
            raise BadRequestError(
                f"offsets[{index}]: a sink connector's partition must be an object with "
                f"'{KAFKA_TOPIC}' and '{KAFKA_PARTITION}', got {_json.type_name(partition)}"
            )
        if KAFKA_TOPIC not in partition or KAFKA_PARTITION not in partition:
            raise BadRequestError(
                f"offsets[{index}]: a sink connector's partition must contain the keys "
                f"'{KAFKA_TOPIC}' and '{KAFKA_PARTITION}', got {sorted(partition)}"
            )
        topic = _topic(partition[KAFKA_TOPIC], index)
        number = _number(
            partition[KAFKA_PARTITION], f"'{KAFKA_PARTITION}'", index, MAX_PARTITION, "int32"
        )
        tp = TopicPartition(topic, number)
        if offset is None:
            parsed[tp] = None
            continue
        if not isinstance(offset, Mapping) or KAFKA_OFFSET not in offset:
            raise BadRequestError(
                f"offsets[{index}]: a sink connector's offset must be null or an object with the "
                f"key '{KAFKA_OFFSET}'"
            )
        parsed[tp] = _number(offset[KAFKA_OFFSET], f"'{KAFKA_OFFSET}'", index, MAX_OFFSET, "int64")
    return parsed


def source_offsets_body(
    pairs: Iterable[tuple[Mapping[str, Any], Mapping[str, Any]]],
) -> dict[str, Any]:
    """The GET body for source offsets, sorted by partition."""
    ordered = sorted(pairs, key=lambda pair: partition_key(pair[0]))
    return {"offsets": [{"partition": dict(p), "offset": dict(o)} for p, o in ordered]}


def sink_offsets_body(offsets: Mapping[TopicPartition, int]) -> dict[str, Any]:
    """The GET body for a sink connector's consumer-group offsets, sorted by partition."""
    return {
        "offsets": [
            {
                "partition": {KAFKA_TOPIC: tp.topic, KAFKA_PARTITION: tp.partition},
                "offset": {KAFKA_OFFSET: offset},
            }
            for tp, offset in sorted(offsets.items())
        ]
    }
