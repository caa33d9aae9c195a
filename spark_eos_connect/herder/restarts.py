"""`Restarts`: restart requests (KIP-745) written to the config topic
(``restart-connector-<name>``), with KIP-618's checks: no restart while the latest task configs
are incomplete, nor, for an exactly-once source, before the new generation's task-count record."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from spark_eos_connect.herder.config_topic import ConfigTopic
from spark_eos_connect.herder.connector_statuses import ConnectorStatuses
from spark_eos_connect.herder.entities import restart_plan
from spark_eos_connect.herder.errors import ConflictError, NotFoundError
from spark_eos_connect.herder.plugins import Plugins
from spark_eos_connect.ports import ConfigWriter
from spark_eos_connect.protocol.config_records import ClusterConfigSnapshot, TargetState


@dataclass(eq=False)
class Restarts:
    """Restart requests in `config_topic`; `exactly_once`: the worker's source support."""

    config_topic: ConfigTopic
    statuses: ConnectorStatuses
    plugins: Plugins
    exactly_once: bool

    def restart(
        self, name: str, include_tasks: bool = False, only_failed: bool = False
    ) -> dict[str, Any] | None:
        """``POST .../restart``: None (204) for the connector alone, else the plan (202)."""

        def action(snapshot: ClusterConfigSnapshot, leader: ConfigWriter) -> dict[str, Any]:
            config = self._check_restartable(snapshot, name, None)
            leader.put_restart_request(name, include_tasks, only_failed)
            statuses = self.statuses.read()
            stopped = snapshot.target_state(name) is TargetState.STOPPED
            tasks = {} if stopped else statuses.task_statuses(name)
            return restart_plan(
                name,
                statuses.connector_status(name),
                tasks,
                self.plugins.kind_of(config),
                include_tasks,
                only_failed,
            )

        plan = self.config_topic.write(action)
        return plan if include_tasks or only_failed else None

    def restart_task(self, name: str, task: int) -> None:
        """``POST .../tasks/{task}/restart``: a connector restart request including its tasks.

        A connector's tasks run in one Spark query, so one task restarts with the others.
        """

        def action(snapshot: ClusterConfigSnapshot, leader: ConfigWriter) -> None:
            self._check_restartable(snapshot, name, task)
            leader.put_restart_request(name, True, False)

        self.config_topic.write(action)

    def _check_restartable(
        self, snapshot: ClusterConfigSnapshot, name: str, task: int | None
    ) -> dict[str, str | None]:
        config = self.config_topic.connector_config(snapshot, name)
        if snapshot.is_inconsistent(name):
            raise ConflictError(
                f"Cannot restart connector {name} now: its latest task configurations are "
                "incomplete (a commit record names tasks that were never written); a new set "
                "must be written first"
            )
        if task is not None and not 0 <= task < len(snapshot.task_configs(name)):
            raise NotFoundError(f"Task {name}-{task} not found")
        if (
            self.exactly_once
            and (snapshot.committed_task_count(name) or 0) > 0
            and snapshot.pending_fencing(name)
            and self.plugins.kind_of(config) == "source"
        ):
            raise ConflictError(
                f"Cannot restart connector {name} now: its newest task configurations are not "
                "yet followed by a task-count record (earlier task producers may still be "
                "unfenced); try again once the new generation has started"
            )
        return config
