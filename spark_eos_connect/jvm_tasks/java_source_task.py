"""The `SourceTask` the task loop runs for a Java plugin's task: a front for the task that runs
in this process's JVM task host (`client`).

Executor side. The plan's `extra` names the `plugin.path` and holds the connector's options the
JVM applies (converters, transforms, `errors.tolerance`); the task config holds Connect's
`task.class`. Records come back converted (`poll_converted`; a key or value converter class
that only this project has is run here on the Connect data the JVM hands over: `stand_ins`);
`commit()`, which the task loop
calls after each committed transaction, tells the JVM which records are committed, so the Java
task gets `commitRecord` for each and then `commit()`. Committed offsets the Java task asks
for are read from this task's `OffsetStorageReader`. Under `transaction.boundary=connector`
the Java task's `TransactionContext` requests come with the batches (`ConvertedRecords.on_last`
and `after_poll`), each batch ending at one, and the connector boundary applies them.
"""

from __future__ import annotations

import logging
from typing import Any

from spark_eos_connect.jvm_tasks.batch_reply import read_batch
from spark_eos_connect.jvm_tasks.client import TaskHostProcess, offset_answer, shared_host
from spark_eos_connect.jvm_tasks.converted import (
    ConvertedRecords,
    ConvertingSourceTask,
    DeliveryReceipts,
)
from spark_eos_connect.jvm_tasks.errors import JavaPluginError
from spark_eos_connect.jvm_tasks.stand_ins import STAND_INS, HandedOverColumns
from spark_eos_connect.jvm_tasks.wire import COMMITTED, POLL, START_TASK, STOP_TASK, FrameWriter

log = logging.getLogger(__name__)

TASK_CLASS = "task.class"
"""Connect's key for the task class in a task config (its worker adds it, as the driver does)."""
PLUGIN_PATH = "plugin.path"
CONNECTOR_OPTIONS = "connector.options"
"""Keys of a Java task's plan `extra`: the plugin.path entries and the connector's options."""
TRANSACTION_BOUNDARY = "transaction.boundary"


class JavaSourceTask(ConvertingSourceTask):
    """A Java `SourceTask` in the JVM task host, driven from Python."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._host: TaskHostProcess | None = None
        self._java_class = ""
        self._receipts: DeliveryReceipts | None = None
        self._handed_over: HandedOverColumns | None = None
        self._handed_out = -1
        self._committed = -1

    @property
    def host(self) -> TaskHostProcess | None:
        """The JVM task host the Java task runs in (None when stopped)."""
        return self._host

    def version(self) -> str:
        """The adapter's version (the Java task's is its own)."""
        return "java"

    @property
    def plugin_path(self) -> list[str]:
        """The `plugin.path` entries the Java task comes from."""
        return list(self.settings.get(PLUGIN_PATH) or [])

    def _answer_offsets(self, partitions: list[str | None]) -> list[str | None]:
        reader = self._context.offset_storage_reader if self._context else None
        if reader is None:
            return [None] * len(partitions)
        return offset_answer(reader.offset)(partitions)

    def start(self, props: dict[str, str]) -> None:
        """Start the Java task `task.class` names in this process's JVM task host."""
        self._java_class = props.get(TASK_CLASS, "")
        if not self._java_class:
            raise JavaPluginError(f"a Java task's config must name its class ({TASK_CLASS})")
        options = self.resolve(self.settings.get(CONNECTOR_OPTIONS) or {})
        if self._context is not None and self._context.transaction_context is not None:
            options[TRANSACTION_BOUNDARY] = "connector"  # the Java task's context gets one
        self._host = shared_host(self.plugin_path)
        request = FrameWriter(START_TASK).text(self._java_class).map(props)
        request.map({k: str(v) for k, v in options.items()}).texts(STAND_INS)
        try:
            reply = self._host.call(request, self._answer_offsets)
        except JavaPluginError as error:
            raise JavaPluginError(
                f"Java source task {self._java_class} from plugin.path {self.plugin_path} "
                f"failed to start: {error.args[0].splitlines()[0]}",
                error.java_class,
                error.trace,
            ) from error
        flags = reply.i32()
        self._receipts = DeliveryReceipts() if flags & 1 else None
        try:
            self._handed_over = HandedOverColumns.for_task(flags, options)
        except Exception:
            self.stop()
            raise
        log.info(
            "Java source task %s started in JVM task host pid %d",
            self._java_class,
            self._host.pid,
        )

    def poll(self) -> None:
        """Not used: the task loop asks a converting task for `poll_converted`."""
        raise JavaPluginError("a Java task's records are polled with poll_converted")

    def poll_converted(
        self, limit: int, wait_s: float, rest_of_poll: bool = False
    ) -> ConvertedRecords:
        """At most `limit` records converted by the JVM; an empty batch after `wait_s`. With
        `rest_of_poll`, only those left of the `poll()` the last batch stopped in."""
        host = self._running()
        request = FrameWriter(POLL).i32(max(1, limit)).i64(int(max(0.0, wait_s) * 1000))
        request.i32(1 if rest_of_poll else 0)
        try:
            batch = read_batch(host.call(request, self._answer_offsets), self._receipts)
        except JavaPluginError as error:
            raise JavaPluginError(
                f"Java source task {self._java_class} (plugin.path {self.plugin_path}) failed: "
                f"{error.args[0].splitlines()[0]}",
                error.java_class,
                error.trace,
            ) from error
        if self._handed_over is not None:
            self._handed_over.convert(batch)
        if batch.taken:
            self._handed_out = batch.first_seq + batch.taken - 1
        return batch

    def commit(self) -> None:
        """Everything handed out so far is committed: `commitRecord` each, then `commit()`."""
        if self._handed_out <= self._committed:
            return
        through = self._handed_out
        stored = self._receipts.take(through) if self._receipts is not None else []
        request = FrameWriter(COMMITTED).i64(through).i32(len(stored))
        for seq, partition, offset in stored:
            request.i64(seq).i32(partition).i64(offset)
        self._running().call(request, self._answer_offsets)
        self._committed = through

    def stop(self) -> None:
        """Stop the Java task (its JVM stays, for the next task of this process)."""
        host, self._host = self._host, None
        if host is None or not host.alive():
            return
        try:
            host.call(FrameWriter(STOP_TASK))
        except JavaPluginError as error:
            log.warning("stopping Java task %s failed: %s", self._java_class, error)

    def _running(self) -> TaskHostProcess:
        if self._host is None:
            raise JavaPluginError(f"Java source task {self._java_class} is not running")
        return self._host
