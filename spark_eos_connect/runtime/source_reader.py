"""Executor side of a source micro-batch: run one `SourceTask` from the planned offsets and turn
what it polls into Arrow batches. Committing is the writer's job (`source_writer`).
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Iterator

import pyarrow as pa

from spark_eos_connect.api.source import (
    InMemoryOffsetStorageReader,
    SourceRecord,
    SourceTask,
    SourceTaskContext,
    TransactionContext,
)
from spark_eos_connect.errors import ConfigError
from spark_eos_connect.runtime.records import records_to_arrow
from spark_eos_connect.runtime.source_plan import SourceTaskPlan


def load_class(dotted: str) -> type:
    """Import `package.module.Class`."""
    module_name, _, class_name = dotted.rpartition(".")
    try:
        return getattr(importlib.import_module(module_name), class_name)
    except (ImportError, AttributeError) as error:
        raise ConfigError(f"cannot load task class {dotted!r}: {error}") from error


def start_task(plan: SourceTaskPlan) -> tuple[SourceTask, TransactionContext | None]:
    """Instantiate, initialize and start the plan's task from the planned committed offsets."""
    task = load_class(plan.task_class)()
    transaction_context = TransactionContext() if plan.transaction_boundary == "connector" else None
    context = SourceTaskContext(
        plan.task_config,
        InMemoryOffsetStorageReader(plan.committed),
        transaction_context,
        task_id=plan.task,
        connector_name=plan.connector,
    )
    task.initialize(context)
    task.start(dict(plan.task_config))
    return task, transaction_context


def poll_batches(plan: SourceTaskPlan) -> Iterator[list[SourceRecord]]:
    """Poll the task until the batch's record budget or time budget is spent, or it is idle."""
    task, _ = start_task(plan)
    try:
        polled = 0
        deadline = time.monotonic() + plan.max_poll_duration_ms / 1000
        while polled < plan.max_records and time.monotonic() < deadline:
            records = task.poll()
            if not records:
                break
            polled += len(records)
            yield records
    finally:
        task.stop()


def read_source_task(plan: SourceTaskPlan) -> Iterator[pa.RecordBatch]:
    """The task's rows for this micro-batch as Arrow batches."""
    for records in poll_batches(plan):
        yield records_to_arrow(records)
