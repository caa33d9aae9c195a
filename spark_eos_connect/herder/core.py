"""`Herder`: every cluster action of the REST API and the CLI, backed only by Kafka.

State lives in the internal topics (config, status, offsets) and in sink connectors' consumer
groups; nothing is kept in memory that Kafka does not hold. The herder reaches them through the
ports of `HerderStores` (Kafka's by default, `storage.memory`'s twins in unit tests). Writes to
the config topic go through the config-topic leader (``connect-cluster-<group.id>``); each action
reads the config topic to its end first and, if its leader turns out to be fenced by a newer one,
reads again and re-decides (`config_topic`).

The herder is a façade over one unit per responsibility: `connector_configs` (create, replace,
read, delete), `target_states` (pause, resume, stop), `connector_statuses` (status views and the
statuses the herder writes), `restarts`, `connector_offsets` (KIP-875) and `plugins`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from spark_eos_connect.herder.config_topic import ConfigTopic
from spark_eos_connect.herder.connector_configs import ConnectorConfigs
from spark_eos_connect.herder.connector_offsets import ConnectorOffsets
from spark_eos_connect.herder.connector_requests import config_strings
from spark_eos_connect.herder.connector_statuses import ConnectorStatuses
from spark_eos_connect.herder.errors import BadRequestError
from spark_eos_connect.herder.java_plugins import JavaPlugins
from spark_eos_connect.herder.plugins import Plugins
from spark_eos_connect.herder.restarts import Restarts
from spark_eos_connect.herder.settings import WorkerSettings
from spark_eos_connect.herder.stores import HerderStores
from spark_eos_connect.herder.target_states import TargetStates
from spark_eos_connect.kafka.clients import kafka_client_config
from spark_eos_connect.version import __version__

__all__ = ["Herder", "WorkerSettings"]


class Herder:
    """Cluster actions over the Kafka cluster reached through `kafka` (librdkafka settings), or
    over the given `stores` (then `kafka` may be omitted).

    Thread-safe (actions are serialised). Errors: `NotFoundError` (404), `BadRequestError` (400),
    `ConflictError` (409), `HerderTimeoutError`/`HerderError` (500).
    """

    def __init__(
        self,
        kafka: Mapping[str, Any] | None = None,
        settings: WorkerSettings | None = None,
        timeout_s: float = 30.0,
        stores: HerderStores | None = None,
    ) -> None:
        self.settings = settings or WorkerSettings()
        java = JavaPlugins.for_plugin_path(self.settings.plugin_path)  # a missing folder: here
        self.kafka = {k: v for k, v in (kafka or {}).items() if k != "transactional.id"}
        self.timeout_s = timeout_s
        if stores is None:
            if kafka is None:
                raise ValueError("A herder needs Kafka client settings or its stores")
            stores = HerderStores.in_kafka(kafka, self.settings, timeout_s)
        self.configs = stores.configs
        self.statuses = stores.statuses
        self.source_offsets = stores.source_offsets
        self.groups = stores.groups
        self._ask_cluster_id = stores.cluster_id
        self._cluster_id: str | None = None
        self.plugins = Plugins(self.settings.plugin_packages, java)
        self.config_topic = ConfigTopic(stores.configs, timeout_s)
        self.connector_statuses = ConnectorStatuses(
            stores.statuses, self.config_topic, self.plugins, self.settings.worker_id
        )
        self.connector_configs = ConnectorConfigs(
            self.config_topic, self.connector_statuses, self.plugins
        )
        self.target_states = TargetStates(self.config_topic, self.connector_statuses)
        self.restarts = Restarts(
            self.config_topic, self.connector_statuses, self.plugins, self.settings.exactly_once
        )
        self.connector_offsets = ConnectorOffsets(
            self.config_topic,
            self.plugins,
            stores.source_offsets,
            stores.groups,
            self.settings.offsets_topic,
        )

    @classmethod
    def from_options(cls, options: Mapping[str, Any], timeout_s: float = 30.0) -> Herder:
        """From worker options plus ``kafka.``-prefixed client settings."""
        kafka = kafka_client_config({str(k): v for k, v in options.items()})
        if "bootstrap.servers" not in kafka:
            raise BadRequestError("Missing option kafka.bootstrap.servers: the Kafka cluster")
        return cls(kafka, WorkerSettings.from_options(options), timeout_s)

    def start(self) -> Herder:
        """Create (or check) the config and status topics."""
        topics = self.settings.topics
        self.configs.ensure_topic(self.timeout_s, topics.config_replication)
        self.statuses.ensure_topic(
            topics.status_partitions, self.timeout_s, topics.status_replication
        )
        return self

    def close(self) -> None:
        """Release producers and the config topic's reader."""
        with self.config_topic.lock:
            self.statuses.close()
            self.config_topic.close()

    def server_info(self) -> dict[str, Any]:
        """``GET /``: version, commit and the Kafka cluster id."""
        if self._cluster_id is None:
            self._cluster_id = self._ask_cluster_id(self.timeout_s)
        return {"version": __version__, "commit": "", "kafka_cluster_id": self._cluster_id}

    # --- connectors and their configs (`connector_configs`) --------------------------------

    def connectors(self) -> list[str]:
        """Names of every connector with a config, sorted."""
        return self.connector_configs.connectors()

    def connectors_expanded(self, expand: Iterable[str]) -> dict[str, dict[str, Any]]:
        """``?expand=status|info``: per connector, the requested views (others ignored)."""
        wanted = [e for e in dict.fromkeys(expand) if e in ("status", "info")]
        with self.config_topic.lock:
            result: dict[str, dict[str, Any]] = {}
            for name in self.connectors():
                views: dict[str, Any] = {}
                for view in wanted:
                    views[view] = self.status(name) if view == "status" else self.info(name)
                result[name] = views
            return result

    def info(self, name: str) -> dict[str, Any]:
        """``ConnectorInfo``: config, task ids, type."""
        return self.connector_configs.info(name)

    def config(self, name: str) -> dict[str, str | None]:
        """The connector's config as stored, secrets shown as `[hidden]`."""
        return self.connector_configs.config(name)

    def task_configs(self, name: str) -> list[dict[str, Any]]:
        """``[TaskInfo]`` of the latest committed task configs (none for a stopped connector)."""
        return self.connector_configs.task_configs(name)

    def create(self, name: str, config: object, initial_state: str | None = None) -> dict[str, Any]:
        """``POST /connectors``: a new connector (409 if it exists); returns its info."""
        return self.connector_configs.create(name, config, initial_state)

    def put_config(self, name: str, config: object) -> tuple[bool, dict[str, Any]]:
        """``PUT /connectors/{name}/config``: create or replace; returns (created, info)."""
        return self.connector_configs.put_config(name, config)

    def delete(self, name: str) -> None:
        """``DELETE /connectors/{name}``: tombstones for its config, target state and statuses."""
        self.connector_configs.delete(name)

    # --- statuses (`connector_statuses`) ---------------------------------------------------

    def status(self, name: str) -> dict[str, Any]:
        """``ConnectorStateInfo`` from the status topic; a STOPPED connector lists no tasks."""
        return self.connector_statuses.status(name)

    def task_status(self, name: str, task: int) -> dict[str, Any]:
        """One task's state; 404 for an unknown task or any task of a stopped connector."""
        return self.connector_statuses.task_status(name, task)

    # --- target states (`target_states`) and restarts (`restarts`) -------------------------

    def pause(self, name: str) -> None:
        """``PUT .../pause``: target state PAUSED."""
        self.target_states.pause(name)

    def resume(self, name: str) -> None:
        """``PUT .../resume``: target state STARTED."""
        self.target_states.resume(name)

    def stop(self, name: str) -> None:
        """``PUT .../stop``: status STOPPED, then empty task set and target STOPPED."""
        self.target_states.stop(name)

    def restart(
        self, name: str, include_tasks: bool = False, only_failed: bool = False
    ) -> dict[str, Any] | None:
        """``POST .../restart``: None (204) for the connector alone, else the plan (202)."""
        return self.restarts.restart(name, include_tasks, only_failed)

    def restart_task(self, name: str, task: int) -> None:
        """``POST .../tasks/{task}/restart``: a connector restart request including its tasks."""
        self.restarts.restart_task(name, task)

    # --- offsets, KIP-875 (`connector_offsets`) --------------------------------------------

    def offsets(self, name: str) -> dict[str, Any]:
        """``GET .../offsets``: source offsets from the offsets topics, or the sink's group's."""
        return self.connector_offsets.offsets(name)

    def alter_offsets(self, name: str, body: object) -> dict[str, str]:
        """``PATCH .../offsets``: only the partitions named change; the connector's hook first."""
        return self.connector_offsets.alter(name, body)

    def reset_offsets(self, name: str) -> dict[str, str]:
        """``DELETE .../offsets``: tombstone every known partition, or drop the group."""
        return self.connector_offsets.reset(name)

    # --- plugins (`plugins`) ---------------------------------------------------------------

    def connector_plugins(self) -> list[dict[str, str]]:
        """``GET /connector-plugins``: the shipped connectors and the Java ones of
        ``plugin.path``."""
        return self.plugins.connector_plugins()

    def validate(self, plugin: str, config: object) -> dict[str, Any]:
        """``PUT /connector-plugins/{plugin}/config/validate``: Connect's ConfigInfos."""
        return self.plugins.validate(plugin, config_strings(config))
