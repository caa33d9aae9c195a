"""A Java connector's `availableNow` query on internal topics of its own, and what it left in
them: its status records and its offsets records."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any


def own_internal_topics(name: str) -> dict[str, str]:
    """The options that give connector `name`'s query internal topics of its own (created by
    the query when it starts): `<name>-configs`, `<name>-offsets`, `<name>-status`."""
    return {
        "config.storage.topic": f"{name}-configs",
        "offset.storage.topic": f"{name}-offsets",
        "status.storage.topic": f"{name}-status",
    }


def run_available_now(spark: Any, options: dict[str, str], checkpoint: Path) -> None:
    """`load()` the source of `options`, then run a query of it until it has nothing more
    (`availableNow`); a refused `load()` or a failed query raises."""
    stream = spark.readStream.format("eosconnect").options(**options).load()
    kafka = {k: v for k, v in options.items() if k.startswith("kafka.")}
    query = (
        stream.writeStream.format("eosconnect")
        .options(name=options["name"], **kafka)
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    try:
        assert query.awaitTermination(180), "the query did not end within 180 s"
    finally:
        query.stop()


def statuses(
    read_committed: Callable[..., list[Any]], options: dict[str, str], task: int | None = None
) -> list[dict[str, Any]]:
    """The status records of the connector of `options` (of its task `task`, when given), in
    the order written."""
    name = options["name"]
    key = f"status-connector-{name}" if task is None else f"status-task-{name}-{task}"
    records = read_committed(options["status.storage.topic"])
    return [json.loads(r.value) for r in records if r.key == key.encode() and r.value]


def offsets(
    read_committed: Callable[..., list[Any]], options: dict[str, str]
) -> list[dict[str, Any]]:
    """The source offsets the connector of `options` committed, in the order written."""
    prefix = json.dumps([options["name"]]).encode()[:-1] + b","
    records = read_committed(options["offset.storage.topic"])
    return [json.loads(r.value) for r in records if (r.key or b"").startswith(prefix) and r.value]
