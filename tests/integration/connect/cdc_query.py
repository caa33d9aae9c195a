"""The PostgresCdcSource query the Connect interop and Debezium parity tests run."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any


def start_cdc_query(spark: Any, options: Mapping[str, Any], checkpoint: Path) -> Any:
    """Start `options`' source connector into Kafka (`name` and `kafka.bootstrap.servers` are
    among them), a micro-batch every 200 ms."""
    stream = spark.readStream.format("eosconnect").options(**options).load()
    return (
        stream.writeStream.format("eosconnect")
        .option("name", options["name"])
        .option("kafka.bootstrap.servers", options["kafka.bootstrap.servers"])
        .option("checkpointLocation", str(checkpoint))
        .trigger(processingTime="200 milliseconds")
        .start()
    )
