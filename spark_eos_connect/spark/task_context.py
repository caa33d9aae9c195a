"""What a Python worker can learn about the Spark task it runs in (executor side)."""

from __future__ import annotations

import re

_RUN_ID = re.compile(r"runId = ([0-9a-f-]+)")


def current_batch_id() -> int | None:
    """The micro-batch id of the running streaming task, if any."""
    from pyspark import TaskContext

    context = TaskContext.get()
    value = context.getLocalProperty("streaming.sql.batchId") if context else None
    return int(value) if value not in (None, "") else None


def attempt_key() -> str:
    """A name for this task attempt shared by the reader and the writer of the same Spark task.

    Unique across queries, query runs and task attempts, so that two drivers on one host (a
    zombie and its successor) never read each other's manifests.
    """
    from pyspark import TaskContext

    context = TaskContext.get()
    if context is None:
        raise RuntimeError("attempt_key() must run inside a Spark task")
    query = context.getLocalProperty("sql.streaming.queryId") or "batch"
    description = context.getLocalProperty("spark.job.description") or ""
    match = _RUN_ID.search(description)
    run = match.group(1) if match else "run"
    return (
        f"{query}-{run}-s{context.stageId()}-p{context.partitionId()}"
        f"-a{context.attemptNumber()}-t{context.taskAttemptId()}"
    )
