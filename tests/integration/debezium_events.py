"""Debezium change events of two connectors on one database, made comparable.

Two connectors that capture the same tables write the same events but for what each makes on
its own: the topic prefix in names (topic, schema names, `source.name`, a header), the times
it emits an event at (`ts_ms`, `ts_us`, `ts_ns` of the envelope) and, in a snapshot, where and
when its own snapshot transaction read a row (`source`'s LSN, transaction, xmin, sequence and
times). The tests that compare Debezium's events (Java Debezium under eosconnect, the
project's PostgresCdcSource, each next to Debezium on a Connect worker) share these helpers.
"""

from __future__ import annotations

import json
from typing import Any

from spark_eos_connect.kafka.clients import ConsumedRecord

DEBEZIUM = "io.debezium.connector.postgresql.PostgresConnector"
EVENT_TIMES = ("ts_ms", "ts_us", "ts_ns")
"""When a connector made an event: each connector's own."""
SNAPSHOT_POSITIONS = (*EVENT_TIMES, "lsn", "txId", "xmin", "sequence")
"""Where and when each connector's own snapshot read a row."""


def decoded(record: ConsumedRecord) -> tuple[Any, Any]:
    """A record's key and value as JsonConverter wrote them (`schema` and `payload`)."""
    key = None if record.key is None else json.loads(record.key)
    value = None if record.value is None else json.loads(record.value)
    return key, value


def comparable(event: dict[str, Any]) -> dict[str, Any]:
    """A Debezium change event (an envelope's payload) without what differs between two
    connectors on one table: `source.name`, the event times and a snapshot's positions. A
    transaction's BEGIN or END event (no `source`; its `ts_ms` is the commit's) is kept whole."""
    if "source" not in event:
        return dict(event)
    source = {k: v for k, v in event["source"].items() if k != "name"}
    if event["op"] == "r":
        source = {k: v for k, v in source.items() if k not in SNAPSHOT_POSITIONS}
    kept = {k: v for k, v in event.items() if k not in EVENT_TIMES}
    return {**kept, "source": source}


def swapped(value: Any, old: str, new: str) -> Any:
    """`value` with `old` replaced by `new` in every string (one connector's prefix by the
    other's)."""
    if isinstance(value, str):
        return value.replace(old, new)
    if isinstance(value, dict):
        return {k: swapped(v, old, new) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(swapped(v, old, new) for v in value)
    return value
