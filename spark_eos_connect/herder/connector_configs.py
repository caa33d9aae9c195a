"""`ConnectorConfigs`: connectors' configs in the config topic, created, replaced, read and
deleted as Connect's REST API does (``/connectors``, ``/connectors/{name}[/config|/tasks]``).

Secrets show as `[hidden]` in every answer and log line (`secrets.masked`). A config change to a
connector that a running query owns is refused (409, `ownership`); a new connector's answer
carries its status, which the herder writes while no query runs it (`without_query`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from spark_eos_connect.herder.config_topic import ConfigTopic
from spark_eos_connect.herder.connector_requests import check_name, config_strings, initial_target
from spark_eos_connect.herder.connector_statuses import ConnectorStatuses
from spark_eos_connect.herder.entities import connector_info, task_infos
from spark_eos_connect.herder.errors import BadRequestError, ConflictError
from spark_eos_connect.herder.plugins import Plugins
from spark_eos_connect.ports import ConfigWriter
from spark_eos_connect.protocol.config_records import ClusterConfigSnapshot, TargetState
from spark_eos_connect.runtime.config.secret_names import masked

log = logging.getLogger(__name__)


@dataclass(eq=False)
class ConnectorConfigs:
    """Configs in `config_topic`, checked by `plugins`; statuses through `statuses`."""

    config_topic: ConfigTopic
    statuses: ConnectorStatuses
    plugins: Plugins

    # --- reading ---------------------------------------------------------------------------

    def connectors(self) -> list[str]:
        """Names of every connector with a config, sorted."""
        with self.config_topic.lock:
            return self.config_topic.snapshot().connectors()

    def info(self, name: str) -> dict[str, Any]:
        """``ConnectorInfo``: config, task ids, type."""
        with self.config_topic.lock:
            snapshot = self.config_topic.snapshot()
            config = self.config_topic.connector_config(snapshot, name)
            tasks = len(snapshot.task_configs(name))
            shown = masked(config, self.plugins.definitions(config))
            return connector_info(name, shown, tasks, self.plugins.kind_of(config))

    def config(self, name: str) -> dict[str, str | None]:
        """The connector's config as stored, secrets shown as `[hidden]`: "secrets (SASL/SSL
        passwords) are never logged or returned by the REST API" (the project's design)."""
        with self.config_topic.lock:
            config = self.config_topic.connector_config(self.config_topic.snapshot(), name)
            return masked(config, self.plugins.definitions(config))

    def task_configs(self, name: str) -> list[dict[str, Any]]:
        """``[TaskInfo]`` of the latest committed task configs (none for a stopped connector)."""
        with self.config_topic.lock:
            snapshot = self.config_topic.snapshot()
            config = self.config_topic.connector_config(snapshot, name)
            definitions = self.plugins.definitions(config)
            shown = [masked(task, definitions) for task in snapshot.task_configs(name)]
            return task_infos(name, shown)

    # --- writing ---------------------------------------------------------------------------

    def create(self, name: str, config: object, initial_state: str | None = None) -> dict[str, Any]:
        """``POST /connectors``: a new connector (409 if it exists); returns its info."""
        name = check_name(name)
        props = self._checked_config(name, config)
        target = initial_target(initial_state)

        def action(snapshot: ClusterConfigSnapshot, leader: ConfigWriter) -> dict[str, Any]:
            if snapshot.contains(name):
                raise ConflictError(f"Connector {name} already exists")
            if target is not None:
                leader.put_target_state(name, target)
            leader.put_connector_config(name, props)
            return self._created_info(snapshot, name, props, target or TargetState.STARTED)

        info = self.config_topic.write(action)
        self._log_config(name, props)
        return info

    def put_config(self, name: str, config: object) -> tuple[bool, dict[str, Any]]:
        """``PUT /connectors/{name}/config``: create or replace; returns (created, info).

        A change to a connector that a running query owns is refused (409, see `ownership`).
        """
        name = check_name(name)
        props = self._checked_config(name, config)

        def action(
            snapshot: ClusterConfigSnapshot, leader: ConfigWriter
        ) -> tuple[bool, dict[str, Any]]:
            stored = snapshot.connector_config(name)
            if stored is not None and stored != props:
                self.statuses.refuse_if_owned(name)
            leader.put_connector_config(name, props)
            if stored is None:
                return True, self._created_info(snapshot, name, props, TargetState.STARTED)
            return False, self._written_info(snapshot, name, props)

        created, info = self.config_topic.write(action)
        self._log_config(name, props)
        return created, info

    def delete(self, name: str) -> None:
        """``DELETE /connectors/{name}``: tombstones for its config, target state and statuses."""

        def action(snapshot: ClusterConfigSnapshot, leader: ConfigWriter) -> None:
            self.config_topic.connector_config(snapshot, name)
            leader.delete_connector(name)

        self.config_topic.write(action)
        self.statuses.clear(name, delete_connector=True)

    def _written_info(
        self, snapshot: ClusterConfigSnapshot, name: str, props: Mapping[str, str | None]
    ) -> dict[str, Any]:
        """The info of the config just written (the answer even if a DELETE follows at once)."""
        tasks = len(snapshot.task_configs(name))
        shown = masked(props, self.plugins.definitions(props))
        return connector_info(name, shown, tasks, self.plugins.kind_of(props))

    def _created_info(
        self,
        snapshot: ClusterConfigSnapshot,
        name: str,
        props: Mapping[str, str | None],
        target: TargetState,
    ) -> dict[str, Any]:
        """The 201 body: the info, plus ``status``, the connector's status as ``GET .../status``
        shows it (`ConnectorStatuses.created_entry`)."""
        status = self.statuses.created_entry(snapshot, name, target)
        return {**self._written_info(snapshot, name, props), "status": status}

    def _checked_config(self, name: str, config: object) -> dict[str, str | None]:
        """`config` as stored for connector `name`: string values, its name, valid."""
        props = config_strings(config)
        given = props.get("name")
        if given is not None and given != name:
            raise BadRequestError(
                f"Connector name configuration ({given}) doesn't match connector name in the "
                f"URL ({name})"
            )
        props["name"] = name
        self.plugins.check_config(props)
        return props

    def _log_config(self, name: str, props: Mapping[str, str | None]) -> None:
        log.info(
            "Connector %s configured: %s", name, masked(props, self.plugins.definitions(props))
        )
