"""Fixtures for the transforms tests: a JsonConverter-style envelope reader and Connect's oracle.

`from_envelope` reads `{"schema": ..., "payload": ...}` the way Connect's JsonConverter
(schemas.enable=true) does, schemaless objects becoming dicts in Java HashMap order as
JsonConverter builds them, so that both sides start from the same data. `oracle` runs Connect's
own SMTs in a JVM (one per test module, `oracle/TransformOracle.java`);
`differential.check(config, record)` runs the same chain on the same record here and there and
fails, printing both sides, unless topic, partition, timestamp, the key and value bytes and every
header's name and bytes are identical. Bytes here are written by the project's JsonConverter
(`spark_eos_connect.converters`), as a task would write them.
"""

from __future__ import annotations

import base64
import decimal
import json
import os
import subprocess
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from spark_eos_connect.api.data import (
    Date,
    Decimal,
    Schema,
    SchemaBuilder,
    Struct,
    Time,
    Timestamp,
    Type,
)
from spark_eos_connect.converters import ConverterType, JsonConverter
from spark_eos_connect.errors import ConfigError
from spark_eos_connect.jvm.jars import ensure_jars
from spark_eos_connect.transforms import ConnectRecord, Header, parse_transform_chain
from spark_eos_connect.transforms._hashmap import JavaHashMap
from spark_eos_connect.transforms._jnumbers import (
    to_float32,
)

ORACLE_SOURCE = Path(__file__).parent / "oracle" / "TransformOracle.java"

# --- envelope codec ----------------------------------------------------------------------------


_FROM_JSON_TYPE = {"float": Type.FLOAT32, "double": Type.FLOAT64}


def schema_from_json(node: Mapping[str, Any] | None) -> Schema | None:
    """JsonConverter.asConnectSchema."""
    if node is None:
        return None
    kind = node["type"]
    if kind == "struct":
        builder = SchemaBuilder.struct()
        for field in node.get("fields", []):
            child = schema_from_json(field)
            assert child is not None
            builder.field(field["field"], child)
    elif kind == "array":
        items = schema_from_json(node["items"])
        assert items is not None
        builder = SchemaBuilder.array(items)
    elif kind == "map":
        keys, values = schema_from_json(node["keys"]), schema_from_json(node["values"])
        assert keys is not None and values is not None
        builder = SchemaBuilder.map(keys, values)
    else:
        builder = SchemaBuilder(_FROM_JSON_TYPE.get(kind) or Type(kind))
    if node.get("optional") is True:
        builder.optional()
    if node.get("name") is not None:
        builder.name(node["name"])
    if node.get("version") is not None:
        builder.version(node["version"])
    if node.get("doc") is not None:
        builder.doc(node["doc"])
    if node.get("parameters"):
        builder.parameters(node["parameters"])
    if node.get("default") is not None:
        builder.default_value(value_from_json(builder.build(), node["default"]))
    return builder.build()


def _java_map(items: Any) -> dict[Any, Any]:
    result = JavaHashMap()
    result.put_all(items)
    return result.to_dict()


def value_from_json(schema: Schema | None, node: Any) -> Any:
    """JsonConverter.convertToConnect (replace.null.with.default=true)."""
    if schema is None:
        if isinstance(node, dict):
            return _java_map((k, value_from_json(None, v)) for k, v in node.items())
        if isinstance(node, list):
            return [value_from_json(None, v) for v in node]
        return node
    if node is None:
        if schema.default_value is not None:
            return schema.default_value
        if schema.optional:
            return None
        raise AssertionError(f"null for required {schema!r}")
    if schema.name == Decimal.LOGICAL_NAME:
        if isinstance(node, int | float):
            return decimal.Decimal(str(node))
        return Decimal.to_logical(schema, base64.b64decode(node))
    if schema.name == Date.LOGICAL_NAME:
        return Date.to_logical(schema, node)
    if schema.name == Time.LOGICAL_NAME:
        return Time.to_logical(schema, node)
    if schema.name == Timestamp.LOGICAL_NAME:
        return Timestamp.to_logical(schema, node)
    kind = schema.type
    if kind in (Type.FLOAT32, Type.FLOAT64):
        # Jackson reads JSON numbers as BigDecimal here, which has no negative zero.
        number = float(node) or 0.0
        return to_float32(number) if kind is Type.FLOAT32 else number
    if kind is Type.BYTES:
        return base64.b64decode(node)
    if kind is Type.ARRAY:
        return [value_from_json(schema.value_schema, v) for v in node]
    if kind is Type.MAP:
        assert schema.key_schema is not None
        if schema.key_schema.type is Type.STRING:
            return _java_map((k, value_from_json(schema.value_schema, v)) for k, v in node.items())
        return _java_map(
            (value_from_json(schema.key_schema, k), value_from_json(schema.value_schema, v))
            for k, v in node
        )
    if kind is Type.STRUCT:
        struct = Struct(schema)
        for field in schema.fields:
            struct.put(field.name, value_from_json(field.schema, node.get(field.name)))
        return struct
    return node


def from_envelope(envelope: Mapping[str, Any] | None) -> tuple[Schema | None, Any]:
    """(schema, value) of an envelope; None is Connect's null with no schema."""
    if envelope is None:
        return None, None
    schema = schema_from_json(envelope["schema"])
    return schema, value_from_json(schema, envelope["payload"])


# --- running both sides ------------------------------------------------------------------------


class Oracle:
    """One JVM running Connect's SMTs; `run(config, record)` returns its JSON answer."""

    def __init__(self, jars: Path) -> None:
        self._process = subprocess.Popen(
            [
                "java",
                "-Duser.timezone=UTC",
                "-Duser.language=en",
                "-Duser.country=US",
                "-cp",
                f"{jars}/*",
                str(ORACLE_SOURCE),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            encoding="utf-8",
        )
        self._lock = threading.Lock()

    def run(self, config: Mapping[str, Any], record: Mapping[str, Any]) -> dict[str, Any]:
        request = json.dumps({"config": {k: str(v) for k, v in config.items()}, "record": record})
        with self._lock:
            assert self._process.stdin is not None and self._process.stdout is not None
            self._process.stdin.write(request + "\n")
            self._process.stdin.flush()
            line = self._process.stdout.readline()
        if not line:
            raise RuntimeError("the Connect oracle JVM exited")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def close(self) -> None:
        if self._process.stdin is not None:
            self._process.stdin.close()
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()


def python_record(record: Mapping[str, Any]) -> ConnectRecord:
    """The ConnectRecord for an oracle request's record."""
    key_schema, key = from_envelope(record.get("key"))
    value_schema, value = from_envelope(record.get("value"))
    headers = []
    for header in record.get("headers", []):
        schema, item = from_envelope(header["value"])
        headers.append(Header(header["key"], item, schema))
    return ConnectRecord(
        topic=record["topic"],
        kafka_partition=record.get("partition"),
        key_schema=key_schema,
        key=key,
        value_schema=value_schema,
        value=value,
        timestamp=record.get("timestamp"),
        headers=tuple(headers),
        kafka_offset=record.get("offset"),
    )


def _json_converter() -> JsonConverter:
    converter = JsonConverter()
    converter.configure({"schemas.enable": "true"}, ConverterType.VALUE)
    return converter


_WRITER = _json_converter()


def _bytes_text(schema: Schema | None, value: Any, topic: str) -> str | None:
    data = _WRITER.from_connect_data(topic, schema, value)
    return None if data is None else data.decode("utf-8")


def python_run(config: Mapping[str, Any], record: Mapping[str, Any]) -> dict[str, Any]:
    """The project's answer, in the oracle's shape (bytes from the project's JsonConverter)."""
    try:
        chain = parse_transform_chain({k: str(v) for k, v in config.items()})
    except ConfigError as error:
        return {"error": f"{type(error).__name__}: {error}"}
    try:
        result = chain.apply(python_record(record))
        if result is None:
            return {"filtered": True}
        return {
            "topic": result.topic,
            "partition": result.kafka_partition,
            "timestamp": result.timestamp,
            "key": _bytes_text(result.key_schema, result.key, result.topic),
            "value": _bytes_text(result.value_schema, result.value, result.topic),
            "headers": [
                {"key": h.key, "value": _bytes_text(h.schema, h.value, result.topic)}
                for h in result.headers
            ],
        }
    except Exception as error:
        return {"error": f"{type(error).__name__}: {error}"}
    finally:
        chain.close()


def _comparable(answer: Mapping[str, Any]) -> Any:
    if "error" in answer or "filtered" in answer:
        return {"error": True} if "error" in answer else {"filtered": True}
    return {
        "topic": answer["topic"],
        "partition": answer["partition"],
        "timestamp": answer["timestamp"],
        "key": answer["key"],
        "value": answer["value"],
        "headers": [(h["key"], h["value"]) for h in answer["headers"]],
    }


class Differential:
    """Runs a chain on a record in Connect and here; `check` fails on any difference."""

    def __init__(self, oracle: Oracle) -> None:
        self.oracle = oracle
        self.outcomes: Counter[str] = Counter()

    def check(self, config: Mapping[str, Any], record: Mapping[str, Any]) -> dict[str, Any]:
        """Both answers must match; returns the Python answer."""
        expected = self.oracle.run(config, record)
        actual = python_run(config, record)
        self.outcomes[
            "error" if "error" in expected else "filtered" if "filtered" in expected else "record"
        ] += 1
        if _comparable(expected) != _comparable(actual):
            pytest.fail(
                "Connect and the project differ\n"
                f"config: {json.dumps(dict(config))}\nrecord: {json.dumps(dict(record))}\n"
                f"connect: {json.dumps(expected)}\nproject: {json.dumps(actual)}",
                pytrace=False,
            )
        return actual


@pytest.fixture(scope="module")
def oracle() -> Iterator[Oracle]:
    """Connect's SMTs in one JVM for the whole test module (jars from `make setup`)."""
    running = Oracle(ensure_jars("connect"))
    try:
        yield running
    finally:
        running.close()


@pytest.fixture(scope="module")
def differential(oracle: Oracle, request: pytest.FixtureRequest) -> Iterator[Differential]:
    """Compare the project's chain with Connect's on the same input."""
    checker = Differential(oracle)
    yield checker
    if os.environ.get("EOSCONNECT_ORACLE_STATS"):
        print(f"\n{request.module.__name__}: {dict(checker.outcomes)}")


def envelope(schema: Mapping[str, Any] | None, payload: Any) -> dict[str, Any]:
    """A JsonConverter envelope for a request."""
    return {"schema": schema, "payload": payload}


@pytest.fixture
def make_envelope() -> Callable[[Mapping[str, Any] | None, Any], dict[str, Any]]:
    """`envelope(schema_json, payload)`."""
    return envelope


# --- sample records ----------------------------------------------------------------------------

ADDRESS_SCHEMA: dict[str, Any] = {
    "type": "struct",
    "optional": True,
    "name": "com.example.Address",
    "fields": [
        {"field": "city", "type": "string", "optional": False},
        {"field": "zip", "type": "int32", "optional": True},
        {
            "field": "geo",
            "type": "struct",
            "optional": True,
            "fields": [
                {"field": "lat", "type": "double", "optional": False},
                {"field": "lon", "type": "double", "optional": False},
            ],
        },
    ],
}
ORDER_SCHEMA: dict[str, Any] = {
    "type": "struct",
    "optional": False,
    "name": "com.example.Order",
    "version": 2,
    "doc": "an order",
    "parameters": {"team": "shop"},
    "fields": [
        {"field": "id", "type": "int64", "optional": False},
        {"field": "name", "type": "string", "optional": True},
        {"field": "qty", "type": "int32", "optional": False, "default": 1},
        {"field": "small", "type": "int8", "optional": True},
        {"field": "price", "type": "double", "optional": True},
        {"field": "ratio", "type": "float", "optional": True},
        {"field": "ok", "type": "boolean", "optional": False},
        {"field": "raw", "type": "bytes", "optional": True},
        {
            "field": "tags",
            "type": "array",
            "items": {"type": "string", "optional": False},
            "optional": True,
        },
        {
            "field": "created",
            "type": "int64",
            "name": "org.apache.kafka.connect.data.Timestamp",
            "version": 1,
            "optional": True,
        },
        {
            "field": "day",
            "type": "int32",
            "name": "org.apache.kafka.connect.data.Date",
            "version": 1,
            "optional": True,
        },
        {
            "field": "amount",
            "type": "bytes",
            "name": "org.apache.kafka.connect.data.Decimal",
            "version": 1,
            "parameters": {"scale": "2"},
            "optional": True,
        },
        {"field": "when", "type": "string", "optional": True},
        {"field": "epoch", "type": "int64", "optional": True},
        {
            "field": "address",
            **{k: v for k, v in ADDRESS_SCHEMA.items() if k != "type"},
            "type": "struct",
        },
    ],
}
ORDER: dict[str, Any] = {
    "id": 42,
    "name": "widget",
    "qty": None,
    "small": -7,
    "price": 9.99,
    "ratio": 0.1,
    "ok": True,
    "raw": "AQID",
    "tags": ["a", "b"],
    "created": 1700000000123,
    "day": 19675,
    "amount": "MDk=",
    "when": "2023-11-14 22:13:20",
    "epoch": 1700000000,
    "address": {"city": "Oslo", "zip": 150, "geo": {"lat": 59.9, "lon": 10.75}},
}
SCHEMALESS: dict[str, Any] = {
    "id": 42,
    "name": "widget",
    "price": 9.99,
    "ok": True,
    "none": None,
    "tags": ["a", "b"],
    "nested": {"x": 1, "y": {"z": "deep", "w": [1, 2]}},
    "ts": 1700000000123,
    "when": "2023-11-14 22:13:20",
    "count": "17",
    "flag": "TRUE",
    "big": 300,
    "frac": -2.75,
}


def make_record(
    value: Any = None,
    key: Any = None,
    *,
    topic: str = "orders",
    partition: int | None = 3,
    timestamp: int | None = 1700000000123,
    offset: int | None = None,
    headers: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """An oracle request record (key/value are envelopes or None)."""
    return {
        "topic": topic,
        "partition": partition,
        "timestamp": timestamp,
        "offset": offset,
        "key": key,
        "value": value,
        "headers": headers or [],
    }


def order_envelope() -> dict[str, Any]:
    """The schema'd order value."""
    return envelope(ORDER_SCHEMA, ORDER)


def schemaless_envelope(payload: Any = None) -> dict[str, Any]:
    """A schemaless value (the sample map by default)."""
    return envelope(None, SCHEMALESS if payload is None else payload)


STRING_SCHEMA: dict[str, Any] = {"type": "string", "optional": False}


@pytest.fixture
def samples() -> Any:
    """The sample records and helpers as attributes."""
    from types import SimpleNamespace

    return SimpleNamespace(
        record=make_record,
        envelope=envelope,
        order=order_envelope,
        schemaless=schemaless_envelope,
        ORDER_SCHEMA=ORDER_SCHEMA,
        ORDER=ORDER,
        SCHEMALESS=SCHEMALESS,
        STRING_SCHEMA=STRING_SCHEMA,
        string_key=lambda text="k1": envelope(STRING_SCHEMA, text),
    )
