"""A Python program that exits with streaming queries running stops them first, saying so.

Without it the JVM goes away with the program, in the middle of a micro-batch: a source task's
transaction stays open (read_committed readers stall until the broker's
`transaction.timeout.ms`) and the connector's status keeps saying RUNNING. Stopping the
queries lets each stream reader's `stop` abort its tasks' open transactions and report the
connector UNASSIGNED (`source.coordinator`, `sink.lifecycle`; `worker_signals` lets that
finish after the program is gone). `spark_eos_connect.register(spark)` installs it.
"""

from __future__ import annotations

import atexit
import sys
from typing import Any

_sessions: set[int] = set()


def stop_queries_at_exit(spark: Any) -> None:
    """Stop `spark`'s active streaming queries when Python exits (once per session)."""
    if id(spark) in _sessions:
        return
    _sessions.add(id(spark))
    atexit.register(stop_active_queries, spark)


def stop_active_queries(spark: Any) -> list[str]:
    """Stop every active query of `spark`, one line on standard error each; their names."""
    try:
        queries = list(spark.streams.active)
    except Exception:  # the session or its JVM is gone already: nothing to stop
        return []
    stopped = []
    for query in queries:
        label = query.name or str(query.id)
        print(
            f"eosconnect: Python is exiting with streaming query {label} running: stopping it "
            "(open transactions of its source tasks are aborted, its connector is reported "
            "UNASSIGNED)",
            file=sys.stderr,
            flush=True,
        )
        try:
            query.stop()
        except Exception as error:
            print(f"eosconnect: stopping query {label} failed: {error}", file=sys.stderr)
            continue
        stopped.append(label)
    return stopped
