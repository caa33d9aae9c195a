"""Delta Lake as the exactly-once sink: `delta_sink(options)` for `foreachBatch`, and
`starting_offsets(options, spark)` to resume Spark's own Kafka source after the table's offsets.

Both are loaded on first use, so that naming the `DeltaSink` connector (the registry, the REST
API) imports neither Spark nor Delta.
"""

from __future__ import annotations

from typing import Any

__all__ = ["delta_sink", "starting_offsets"]


def __getattr__(name: str) -> Any:
    if name == "delta_sink":
        from spark_eos_connect.delta.batch_sink import delta_sink

        return delta_sink
    if name == "starting_offsets":
        from spark_eos_connect.delta.writer import starting_offsets

        return starting_offsets
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
