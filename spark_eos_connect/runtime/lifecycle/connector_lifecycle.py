"""The driver's connector instance and its lifecycle (Connect's `WorkerConnector`).

`ManagedConnector` owns one connector at a time: it starts a fresh instance, stops it, restarts it,
and turns what goes wrong into Connect's states instead of exceptions: a connector whose `start`
raises, or which reports an error from a background thread through `ConnectorContext.raise_error`,
is FAILED (its trace is kept for the status topic); a connector whose `stop` raises is still
STOPPED. No I/O here: the coordinator decides when to call what, and `connector_owner` writes
the statuses.
"""

from __future__ import annotations

import enum
import logging
import threading
import traceback
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from spark_eos_connect.api.source import (
    InMemoryOffsetStorageReader,
    OffsetStorageReader,
    SourceConnector,
)

log = logging.getLogger(__name__)


class ConnectorPhase(enum.Enum):
    """Where the driver's connector instance is."""

    RUNNING = "RUNNING"
    STOPPED = "STOPPED"
    FAILED = "FAILED"


def error_trace(error: BaseException) -> str:
    """The formatted trace Connect shows in a FAILED status."""
    return "".join(traceback.format_exception(error)).rstrip()


class DriverConnectorContext:
    """`SourceConnectorContext` of a connector running on the driver; safe to call from any
    thread."""

    def __init__(self, offsets: OffsetStorageReader | None = None) -> None:
        self._lock = threading.Lock()
        self._error: BaseException | None = None
        self._reconfiguration_requested = False
        self._offsets = offsets if offsets is not None else InMemoryOffsetStorageReader()

    @property
    def offset_storage_reader(self) -> OffsetStorageReader:
        """The connector's committed offsets (none when the runtime gave no reader)."""
        return self._offsets

    def request_task_reconfiguration(self) -> None:
        """Remember that the connector wants `task_configs` called again."""
        with self._lock:
            self._reconfiguration_requested = True

    def raise_error(self, error: BaseException) -> None:
        """Remember the first unrecoverable error the connector reports."""
        with self._lock:
            if self._error is None:
                self._error = error

    def take_error(self) -> BaseException | None:
        """The reported error, once."""
        with self._lock:
            error, self._error = self._error, None
            return error

    def take_reconfiguration_request(self) -> bool:
        """Whether a reconfiguration was requested since the last call."""
        with self._lock:
            requested, self._reconfiguration_requested = self._reconfiguration_requested, False
            return requested


class LatestOffsetsReader:
    """An `OffsetStorageReader` over `committed()` (a connector's committed offsets, as
    `(partition, offset)` pairs), read again at each call: the reader stays current while the
    connector runs, as a Connect worker's does."""

    def __init__(
        self, committed: Callable[[], Iterable[tuple[Mapping[str, Any], Mapping[str, Any]]]]
    ) -> None:
        self._committed = committed

    def offset(self, partition: Mapping[str, Any]) -> dict[str, Any] | None:
        """The latest committed offset of `partition`, None if none."""
        return self.offsets([partition])[0][1]

    def offsets(
        self, partitions: Iterable[Mapping[str, Any]]
    ) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
        """`(partition, offset-or-None)` for each partition, in order."""
        return InMemoryOffsetStorageReader(self._committed()).offsets(partitions)


class ManagedConnector:
    """One source connector, started and stopped on the runtime's behalf."""

    def __init__(
        self,
        create: Callable[[], SourceConnector],
        props: Mapping[str, str],
        max_tasks: int,
        offsets: OffsetStorageReader | None = None,
    ) -> None:
        """`offsets`: the connector's committed offsets, its context's reader."""
        self._create = create
        self._props = dict(props)
        self._max_tasks = max_tasks
        self._offsets = offsets
        self._connector: SourceConnector | None = None
        self._context = DriverConnectorContext(offsets)
        self.phase = ConnectorPhase.STOPPED
        self.trace: str | None = None
        self.task_configs: list[dict[str, str]] | None = None

    @property
    def connector(self) -> SourceConnector | None:
        """The running instance, if any."""
        return self._connector

    def start(self) -> bool:
        """Start a fresh instance and ask it for task configs; False (and FAILED) if it raises.
        An instance whose `start` raised is not stopped (as a Connect worker does not stop
        it); one whose `task_configs` failed is, by `stop()`."""
        if self.phase is not ConnectorPhase.STOPPED:
            self.stop()
        self._context = DriverConnectorContext(self._offsets)
        connector = self._create()
        self._connector = None
        try:
            connector.initialize(self._context)
            connector.start(dict(self._props))
            self._connector = connector
            configs = connector.task_configs(self._max_tasks)[: self._max_tasks]
            if not configs:
                raise RuntimeError("the connector produced no task configs")
        except Exception as error:
            self._fail(error, "failed to start")
            return False
        self.task_configs = [dict(config) for config in configs]
        self.phase, self.trace = ConnectorPhase.RUNNING, None
        return True

    def stop(self) -> None:
        """Stop the instance; an error while stopping is logged, and the connector is STOPPED."""
        connector, self._connector = self._connector, None
        self.phase, self.trace, self.task_configs = ConnectorPhase.STOPPED, None, None
        if connector is None:
            return
        try:
            connector.stop()
        except Exception:
            log.exception("connector failed while stopping; it is STOPPED anyway")

    def restart(self) -> bool:
        """Stop, then start a fresh instance."""
        self.stop()
        return self.start()

    def check_reported_error(self) -> bool:
        """Whether a running connector reported an error since the last check (it is now FAILED)."""
        error = self._context.take_error()
        if error is None or self.phase is not ConnectorPhase.RUNNING:
            return False
        self._fail(error, "reported an unrecoverable error")
        return True

    def take_reconfiguration_request(self) -> bool:
        """Whether the running connector asked for new task configs (and they differ now)."""
        if not self._context.take_reconfiguration_request() or self._connector is None:
            return False
        try:
            configs = self._connector.task_configs(self._max_tasks)[: self._max_tasks]
        except Exception as error:
            self._fail(error, "failed to produce task configs")
            return False
        fresh = [dict(config) for config in configs]
        if not fresh or fresh == self.task_configs:
            return False
        self.task_configs = fresh
        return True

    def _fail(self, error: BaseException, what: str) -> None:
        log.error("connector %s: %s", what, error)
        self.phase, self.trace = ConnectorPhase.FAILED, error_trace(error)
