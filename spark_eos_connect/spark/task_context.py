"""What a Python worker can learn about the Spark task it runs in (executor side)."""

from __future__ import annotations


def current_batch_id() -> int | None:
    """The micro-batch id of the running streaming task, if any."""
    from pyspark import TaskContext

    context = TaskContext.get()
    value = context.getLocalProperty("streaming.sql.batchId") if context else None
    return int(value) if value not in (None, "") else None


def current_attempt() -> int:
    """How many earlier attempts of the running Spark task failed (0 outside a task)."""
    from pyspark import TaskContext

    context = TaskContext.get()
    return context.attemptNumber() if context else 0
