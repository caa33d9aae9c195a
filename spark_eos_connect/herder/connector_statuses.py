"""`ConnectorStatuses`: connectors' and tasks' statuses in the status topic, as the herder's views
show them and as the herder writes them itself.

A query reports its connector's states under its driver's worker id; a status whose driver
stopped heartbeating shows UNASSIGNED (`liveness.as_seen_now`). While no query runs a connector,
the herder writes the status its target state implies (`without_query`), and a stop marks it
STOPPED first. A connector some query runs refuses config changes (`ownership`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from spark_eos_connect.errors import EosConnectError
from spark_eos_connect.herder.config_topic import ConfigTopic
from spark_eos_connect.herder.entities import connector_state, state_entry
from spark_eos_connect.herder.errors import ConflictError, NotFoundError
from spark_eos_connect.herder.ownership import is_herder, owned_config_message, query_owner
from spark_eos_connect.herder.plugins import Plugins
from spark_eos_connect.herder.without_query import (
    herder_reports,
    shown_status,
    status_without_query,
)
from spark_eos_connect.ports import StatusStore
from spark_eos_connect.protocol.config_records import ClusterConfigSnapshot, TargetState
from spark_eos_connect.protocol.status_records import StatusRecord, StatusSnapshot, StatusState
from spark_eos_connect.runtime.lifecycle.liveness import as_seen_now

log = logging.getLogger(__name__)


@dataclass(eq=False)
class ConnectorStatuses:
    """The statuses in `store`; the herder writes its own under `worker_id`."""

    store: StatusStore
    config_topic: ConfigTopic
    plugins: Plugins
    worker_id: str
    now_ms: Callable[[], int] = field(default=lambda: int(time.time() * 1000))
    """The clock status views age heartbeats by (`liveness.as_seen_now`)."""

    def read(self) -> StatusSnapshot:
        """The status topic read to its end."""
        return self.store.read_to_end(self.config_topic.timeout_s)

    # --- views -----------------------------------------------------------------------------

    def status(self, name: str) -> dict[str, Any]:
        """``ConnectorStateInfo`` from the status topic; a STOPPED connector lists no tasks.

        The connector shows STOPPED exactly when its offsets can be altered or reset, and says
        so in `trace` when no Spark query runs it (`without_query.shown_status`).
        """
        with self.config_topic.lock:
            snapshot = self.config_topic.snapshot()
            config = self.config_topic.connector_config(snapshot, name)
            stopped = snapshot.target_state(name) is TargetState.STOPPED
            connector, tasks = self.seen_now(name)
            shown = self._shown(snapshot, name, connector)
            tasks = {} if stopped else tasks
            return connector_state(name, shown, tasks, self.plugins.kind_of(config))

    def task_status(self, name: str, task: int) -> dict[str, Any]:
        """One task's state; 404 for an unknown task or any task of a stopped connector."""
        with self.config_topic.lock:
            snapshot = self.config_topic.snapshot()
            self.config_topic.connector_config(snapshot, name)
            record = self.seen_now(name)[1].get(task)
            if record is None or snapshot.target_state(name) is TargetState.STOPPED:
                raise NotFoundError(f"No status found for task {name}-{task}")
            return {"id": task, **state_entry(record)}

    def seen_now(self, name: str) -> tuple[StatusRecord | None, dict[int, StatusRecord]]:
        """The connector's and tasks' statuses, UNASSIGNED once their driver stopped
        heartbeating (`liveness.as_seen_now`); a herder's own statuses as written."""
        statuses = self.read()
        connector = statuses.connector_status(name)
        tasks = statuses.task_statuses(name)
        if connector is None or is_herder(connector.worker_id, self.worker_id):
            return connector, tasks
        written_at = statuses.connector_written_at(name)
        return as_seen_now(connector, written_at, tasks, self.now_ms())

    def _shown(
        self, snapshot: ClusterConfigSnapshot, name: str, record: StatusRecord | None
    ) -> StatusRecord:
        """The connector's status as views show it (`without_query.shown_status`)."""
        target = snapshot.target_state(name) or TargetState.STARTED
        committed = snapshot.committed_task_count(name)
        return shown_status(name, record, target, committed, self.worker_id)

    def refuse_if_owned(self, name: str) -> None:
        """`ConflictError` naming the query's driver if a running query owns the connector
        (not one whose driver stopped heartbeating: `seen_now`)."""
        owner = query_owner(self.seen_now(name)[0], self.worker_id)
        if owner is not None:
            raise ConflictError(owned_config_message(name, owner))

    # --- the herder's own statuses ---------------------------------------------------------

    def report_without_query(
        self, snapshot: ClusterConfigSnapshot, name: str, target: TargetState
    ) -> StatusRecord | None:
        """After `target` was written: the status it implies when no query runs the connector
        (`without_query.herder_reports`), written; returns the connector's status now."""
        record = self.seen_now(name)[0]
        if not herder_reports(record, target, self.worker_id):
            return record
        own = status_without_query(name, target, self.worker_id, snapshot.generation(name))
        self.store.put_connector_status(name, own.state, own.worker_id, own.generation, own.trace)
        return own

    def created_entry(
        self, snapshot: ClusterConfigSnapshot, name: str, target: TargetState
    ) -> dict[str, Any]:
        """A new connector's status as ``GET .../status`` shows it, once the herder reported
        `target` (saying when no query runs the connector and how to start one)."""
        record = self.report_without_query(snapshot, name, target)
        committed = snapshot.committed_task_count(name)
        return state_entry(shown_status(name, record, target, committed, self.worker_id))

    def mark_stopped(self, snapshot: ClusterConfigSnapshot, name: str) -> StatusRecord | None:
        """Status STOPPED (unless it is already); returns the status it replaced."""
        previous = self.read().connector_status(name)
        if previous is None or previous.state is not StatusState.STOPPED:
            self.store.put_connector_status(
                name, StatusState.STOPPED, self.worker_id, snapshot.generation(name)
            )
        return previous

    def restore(self, name: str, previous: StatusRecord | None) -> None:
        """Put back the connector status a failed stop replaced (best effort)."""
        try:
            if previous is None:
                self.store.delete_connector_status(name)
            else:
                self.store.put_connector_status(
                    name, previous.state, previous.worker_id, previous.generation, previous.trace
                )
        except EosConnectError as exc:
            log.warning("Could not restore the status of connector %s: %s", name, exc)

    def clear(self, name: str, delete_connector: bool) -> None:
        """Tombstones for the tasks' statuses, and the connector's if `delete_connector`."""
        statuses = self.read()
        for task in statuses.task_statuses(name):
            self.store.delete_task_status(name, task)
        if delete_connector:
            self.store.delete_connector_status(name)
