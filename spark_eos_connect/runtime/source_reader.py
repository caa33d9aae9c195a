"""Executor side of a source micro-batch: run one `SourceTask` from the planned offsets and turn
what it polls into Arrow batches. Committing is the writer's job (`source_writer`).
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable, Iterator

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


BoundarySink = Callable[[int, str], None]


def boundary_markers(
    records: list[SourceRecord], context: TransactionContext, first_row: int
) -> list[tuple[int, str]]:
    """Where the task asked to end a transaction in this poll: `(row, "commit"|"abort")`.

    `row` is the index, counted over the whole micro-batch from `first_row`, of the last record
    of the transaction; a request without a record ends it after the poll's last record.
    """
    markers: list[tuple[int, str]] = []
    for i, record in enumerate(records):
        if context.should_abort_on(record):
            markers.append((first_row + i, "abort"))
        elif context.should_commit_on(record):
            markers.append((first_row + i, "commit"))
    last_row = first_row + len(records) - 1
    batch_action = (
        "abort"
        if context.should_abort_batch()
        else "commit"
        if context.should_commit_batch()
        else None
    )
    if batch_action is not None and records and (not markers or markers[-1][0] != last_row):
        markers.append((last_row, batch_action))
    return markers


def poll_batches(
    plan: SourceTaskPlan, on_boundary: BoundarySink | None = None
) -> Iterator[list[SourceRecord]]:
    """Poll the task until the batch's record budget or time budget is spent, or it is idle.

    With connector-defined boundaries, `on_boundary(row, action)` is told of every boundary in a
    poll before that poll's records are yielded, so the writer always knows a boundary before it
    sees the rows after it.
    """
    task, transaction_context = start_task(plan)
    try:
        polled = 0
        deadline = time.monotonic() + plan.max_poll_duration_ms / 1000
        while polled < plan.max_records and time.monotonic() < deadline:
            records = task.poll()
            if not records:
                break
            if transaction_context is not None and on_boundary is not None:
                for row, action in boundary_markers(records, transaction_context, polled):
                    on_boundary(row, action)
            polled += len(records)
            yield records
    finally:
        task.stop()


def read_source_task(
    plan: SourceTaskPlan, on_boundary: BoundarySink | None = None
) -> Iterator[pa.RecordBatch]:
    """The task's rows for this micro-batch as Arrow batches."""
    for records in poll_batches(plan, on_boundary):
        yield records_to_arrow(records)
