"""Spark's own floor under the first-record time: a streaming query of one row, through a Python
data source reader and writer, started from nothing the way the project's jobs start.

It runs `spark.floor_stream`'s data source and does what every `format("eosconnect")` job does
before its first record and no connector work: the same session (`plan_job_session`,
`job_session`: class data sharing archive, worker interpreter), Spark's Python processes for
the data source lookup, its schema, the stream reader, planning, the writer and the executor's
worker, and one task. Like the project's reader and writers it hands Spark Arrow batches (built
without pyarrow's pandas probe) and takes them. It touches no Kafka. The writer's task appends
a line to `MARKER` once it has its row, about where a source task of the project has committed
its first transaction, so the time from starting `python -m
spark_eos_connect.apps.bench.spark_floor MARKER CHECKPOINT` until `MARKER` has that line is
what a Python data source stream costs on the machine before any connector work.
"""

from __future__ import annotations

import sys

MODULE = "spark_eos_connect.apps.bench.spark_floor"
"""The module to run (`python -m`)."""


def main(argv: list[str] | None = None) -> int:
    """`MARKER CHECKPOINT`: run the one-row query until SIGTERM."""
    from spark_eos_connect.spark.floor_stream import FLOOR_SOURCE, FloorDataSource
    from spark_eos_connect.spark.job_support import (
        job_session,
        plan_job_session,
        run_query,
        stop_on_sigterm,
    )

    args = argv if argv is not None else sys.argv[1:]
    if len(args) != 2:
        print(f"usage: python -m {MODULE} MARKER CHECKPOINT", file=sys.stderr)
        return 2
    marker, checkpoint = args
    plan = plan_job_session("spark_floor", None, delta=False)
    spark = job_session(plan)
    spark.dataSource.register(FloorDataSource)
    query = (
        spark.readStream.format(FLOOR_SOURCE)
        .load()
        .writeStream.format(FLOOR_SOURCE)
        .option("marker", marker)
        .option("checkpointLocation", checkpoint)
        .start()
    )
    try:
        run_query(query, False, None, stop_on_sigterm(query))
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
