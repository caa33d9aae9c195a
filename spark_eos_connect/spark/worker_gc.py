"""Spark's Python workers and the cyclic garbage collector.

A reused Python worker (`spark.python.worker.reuse`, the default) runs `gc.collect()` after
every task. A full collection walks every object the process tracks, and a worker that has run
one task of this package tracks about 85,000 objects, nearly all from imports (pyspark,
pyarrow, pandas, numpy, this package): 10-40 ms a collection on the development machine, after
each task of each worker, several times a micro-batch. Those objects live as long as the
process anyway, so at the start of its second task (the first task's imports, this package's
and pyspark's, are done, and its garbage was collected after it) a worker moves them to the
permanent generation (`gc.freeze()`); each later collection walks only what tasks allocated
since. Reference counting frees everything as before.
"""

from __future__ import annotations

import gc
import os

FREEZE_AT_CALL = 2
"""The call of `settle_heap` in a process that freezes its heap."""

_calls: dict[int, int] = {}
"""Calls of `settle_heap` per process id (a forked child counts its own)."""


def settle_heap() -> None:
    """Call at the start of each task: on the second one in a process, freeze the heap."""
    pid = os.getpid()
    calls = _calls[pid] = _calls.get(pid, 0) + 1
    if calls == FREEZE_AT_CALL:
        gc.freeze()
