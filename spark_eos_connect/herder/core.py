"""`Herder`: every cluster action of the REST API and the CLI, backed only by Kafka.

State lives in the internal topics (config, status, offsets) and in sink connectors' consumer
groups; nothing is kept in memory that Kafka does not hold. The herder reaches them through the
ports of `HerderStores` (Kafka's by default, `storage.memory`'s twins in unit tests). Writes to
the config topic go through the config-topic leader (``connect-cluster-<group.id>``); each action
reads the config topic to its end first and, if its leader turns out to be fenced by a newer one,
reads again and re-decides.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, TypeVar

from spark_eos_connect.api.sink import SinkConnector, TopicPartition
from spark_eos_connect.api.source import SourceConnector
from spark_eos_connect.errors import EosConnectError
from spark_eos_connect.herder.consumer_groups import group_errors, require_inactive
from spark_eos_connect.herder.entities import (
    connector_info,
    connector_state,
    modified_message,
    restart_plan,
    state_entry,
    task_infos,
)
from spark_eos_connect.herder.errors import (
    BadRequestError,
    ConflictError,
    HerderError,
    HerderTimeoutError,
    NotFoundError,
)
from spark_eos_connect.herder.java_plugins import JavaPlugins
from spark_eos_connect.herder.offsets_body import (
    parse_sink_offsets,
    parse_source_offsets,
    sink_offsets_body,
    source_offsets_body,
)
from spark_eos_connect.herder.ownership import (
    is_herder,
    owned_config_message,
    query_owner,
)
from spark_eos_connect.herder.plugins import Plugins
from spark_eos_connect.herder.secrets import masked
from spark_eos_connect.herder.settings import WorkerSettings
from spark_eos_connect.herder.source_offsets import (
    OffsetTopics,
    known_partitions,
    merged_offsets,
    remaining_partitions,
)
from spark_eos_connect.herder.stores import HerderStores
from spark_eos_connect.herder.text import check_unicode
from spark_eos_connect.herder.without_query import (
    herder_reports,
    offsets_modifiable,
    shown_status,
    status_without_query,
)
from spark_eos_connect.kafka.clients import kafka_client_config
from spark_eos_connect.ports import (
    ConfigReadTimeoutError,
    ConfigWriter,
    LeaderFencedError,
    OffsetEntries,
)
from spark_eos_connect.protocol.config_records import ClusterConfigSnapshot, TargetState
from spark_eos_connect.protocol.sink_groups import sink_group_id
from spark_eos_connect.protocol.status_records import StatusRecord, StatusSnapshot, StatusState
from spark_eos_connect.runtime.liveness import as_seen_now
from spark_eos_connect.storage.offsets import OffsetStoreError
from spark_eos_connect.version import __version__

log = logging.getLogger(__name__)

T = TypeVar("T")
INITIAL_STATES = {
    "RUNNING": TargetState.STARTED,
    "PAUSED": TargetState.PAUSED,
    "STOPPED": TargetState.STOPPED,
}


def _config_strings(config: object) -> dict[str, str | None]:
    """A connector config as Connect stores it: string values (numbers, booleans converted)."""
    if not isinstance(config, Mapping):
        raise BadRequestError(f"A connector config must be a JSON object, got {config!r}")
    check_unicode(config, "config")
    result: dict[str, str | None] = {}
    for key, value in config.items():
        if not isinstance(key, str):
            raise BadRequestError(f"Config names must be strings, got {key!r}")
        if value is None or isinstance(value, str):
            result[key] = value
        elif isinstance(value, bool):
            result[key] = "true" if value else "false"
        elif isinstance(value, int | float):
            result[key] = str(value)
        else:
            raise BadRequestError(f"Config {key!r} must be a string, got {type(value).__name__}")
    return result


def _check_name(name: object) -> str:
    """A new connector's name, trimmed: non-empty, no control characters, Unicode text, and
    usable as one segment of a URL path (no '/', not '.' or '..')."""
    if not isinstance(name, str) or not name.strip():
        raise BadRequestError("A connector name must be a non-empty string")
    if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in name):
        raise BadRequestError(f"Connector name {name!r} must not contain control characters")
    check_unicode(name, "the connector name")
    trimmed = name.strip()
    if "/" in trimmed or trimmed in (".", ".."):
        raise BadRequestError(
            f"Connector name {trimmed!r} cannot be used: a name must not contain '/' nor be "
            "'.' or '..', since /connectors/{name} could never reach it"
        )
    return trimmed


def _defined(config: Mapping[str, str | None]) -> dict[str, str]:
    return {k: v for k, v in config.items() if v is not None}


def _tasks_max(config: Mapping[str, str | None]) -> int:
    try:
        return max(1, int(config.get("tasks.max") or 1))
    except ValueError:
        return 1


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
        self.plugins = Plugins(self.settings.plugin_packages, java)
        self._leader: ConfigWriter | None = None
        self._lock = threading.RLock()
        self._cluster_id: str | None = None
        self.now_ms: Callable[[], int] = lambda: int(time.time() * 1000)
        """The clock status views age heartbeats by (`liveness.as_seen_now`)."""

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
        with self._lock:
            if self._leader is not None:
                self._leader.close()
                self._leader = None
            self.statuses.close()
            self.configs.close()

    # --- reading ---------------------------------------------------------------------------

    def _snapshot(self) -> ClusterConfigSnapshot:
        try:
            return self.configs.read_to_end(self.timeout_s)
        except ConfigReadTimeoutError as exc:
            raise HerderTimeoutError(str(exc)) from exc

    def _config(self, snapshot: ClusterConfigSnapshot, name: str) -> dict[str, str | None]:
        config = snapshot.connector_config(name)
        if config is None:
            raise NotFoundError(f"Connector {name} not found")
        return config

    def server_info(self) -> dict[str, Any]:
        """``GET /``: version, commit and the Kafka cluster id."""
        if self._cluster_id is None:
            self._cluster_id = self._ask_cluster_id(self.timeout_s)
        return {"version": __version__, "commit": "", "kafka_cluster_id": self._cluster_id}

    def connectors(self) -> list[str]:
        """Names of every connector with a config, sorted."""
        with self._lock:
            return self._snapshot().connectors()

    def connectors_expanded(self, expand: Iterable[str]) -> dict[str, dict[str, Any]]:
        """``?expand=status|info``: per connector, the requested views (others ignored)."""
        wanted = [e for e in dict.fromkeys(expand) if e in ("status", "info")]
        with self._lock:
            result: dict[str, dict[str, Any]] = {}
            for name in self._snapshot().connectors():
                views: dict[str, Any] = {}
                for view in wanted:
                    views[view] = self.status(name) if view == "status" else self.info(name)
                result[name] = views
            return result

    def info(self, name: str) -> dict[str, Any]:
        """``ConnectorInfo``: config, task ids, type."""
        with self._lock:
            snapshot = self._snapshot()
            config = self._config(snapshot, name)
            tasks = len(snapshot.task_configs(name))
            shown = masked(config, self.plugins.definitions(config))
            return connector_info(name, shown, tasks, self.plugins.kind_of(config))

    def config(self, name: str) -> dict[str, str | None]:
        """The connector's config as stored, secrets shown as `[hidden]`: "secrets (SASL/SSL
        passwords) are never logged or returned by the REST API" (the project's design)."""
        with self._lock:
            config = self._config(self._snapshot(), name)
            return masked(config, self.plugins.definitions(config))

    def task_configs(self, name: str) -> list[dict[str, Any]]:
        """``[TaskInfo]`` of the latest committed task configs (none for a stopped connector)."""
        with self._lock:
            snapshot = self._snapshot()
            config = self._config(snapshot, name)
            definitions = self.plugins.definitions(config)
            shown = [masked(task, definitions) for task in snapshot.task_configs(name)]
            return task_infos(name, shown)

    def status(self, name: str) -> dict[str, Any]:
        """``ConnectorStateInfo`` from the status topic; a STOPPED connector lists no tasks.

        The connector shows STOPPED exactly when its offsets can be altered or reset, and says
        so in `trace` when no Spark query runs it (`without_query.shown_status`).
        """
        with self._lock:
            snapshot = self._snapshot()
            config = self._config(snapshot, name)
            statuses = self.statuses.read_to_end(self.timeout_s)
            stopped = snapshot.target_state(name) is TargetState.STOPPED
            connector, tasks = self._seen_now(statuses, name)
            shown = self._shown(snapshot, name, connector)
            tasks = {} if stopped else tasks
            return connector_state(name, shown, tasks, self.plugins.kind_of(config))

    def _shown(
        self, snapshot: ClusterConfigSnapshot, name: str, record: StatusRecord | None
    ) -> StatusRecord:
        """The connector's status as views show it (`without_query.shown_status`)."""
        target = snapshot.target_state(name) or TargetState.STARTED
        committed = snapshot.committed_task_count(name)
        return shown_status(name, record, target, committed, self.settings.worker_id)

    def _report_without_query(
        self, snapshot: ClusterConfigSnapshot, name: str, target: TargetState
    ) -> StatusRecord | None:
        """After `target` was written: the status it implies when no query runs the connector
        (`without_query.herder_reports`), written; returns the connector's status now."""
        record = self._seen_now(self.statuses.read_to_end(self.timeout_s), name)[0]
        if not herder_reports(record, target, self.settings.worker_id):
            return record
        own = status_without_query(name, target, self.settings.worker_id, snapshot.generation(name))
        self.statuses.put_connector_status(
            name, own.state, own.worker_id, own.generation, own.trace
        )
        return own

    def _seen_now(
        self, statuses: StatusSnapshot, name: str
    ) -> tuple[StatusRecord | None, dict[int, StatusRecord]]:
        """The connector's and tasks' statuses, UNASSIGNED once their driver stopped
        heartbeating (`liveness.as_seen_now`); a herder's own statuses as written."""
        connector = statuses.connector_status(name)
        tasks = statuses.task_statuses(name)
        if connector is None or is_herder(connector.worker_id, self.settings.worker_id):
            return connector, tasks
        written_at = statuses.connector_written_at(name)
        return as_seen_now(connector, written_at, tasks, self.now_ms())

    def task_status(self, name: str, task: int) -> dict[str, Any]:
        """One task's state; 404 for an unknown task or any task of a stopped connector."""
        with self._lock:
            snapshot = self._snapshot()
            self._config(snapshot, name)
            record = self._seen_now(self.statuses.read_to_end(self.timeout_s), name)[1].get(task)
            if record is None or snapshot.target_state(name) is TargetState.STOPPED:
                raise NotFoundError(f"No status found for task {name}-{task}")
            return {"id": task, **state_entry(record)}

    # --- writing the config topic ----------------------------------------------------------

    def _write(self, action: Callable[[ClusterConfigSnapshot, ConfigWriter], T]) -> T:
        """Run `action` on a fresh snapshot with the leader; re-read and retry once if fenced."""
        with self._lock:
            for attempt in range(2):
                snapshot = self._snapshot()
                if self._leader is None or self._leader.fenced:
                    self._leader = self._claim_leader()
                try:
                    return action(snapshot, self._leader)
                except LeaderFencedError as exc:
                    log.info("Config-topic leader fenced (attempt %d): %s", attempt + 1, exc)
                    self._leader = None
            raise ConflictError(
                "Another leader keeps claiming the config topic; the request was not applied. "
                "Try again."
            )

    def _claim_leader(self) -> ConfigWriter:
        try:
            return self.configs.leader(self.timeout_s)
        except EosConnectError:
            raise
        except Exception as exc:  # librdkafka: init_transactions timed out or was refused
            raise HerderTimeoutError(
                f"Could not claim the config-topic leader's transactional id: {exc}"
            ) from exc

    def create(self, name: str, config: object, initial_state: str | None = None) -> dict[str, Any]:
        """``POST /connectors``: a new connector (409 if it exists); returns its info."""
        name = _check_name(name)
        props = self._checked_config(name, config)
        target = None
        if initial_state is not None:
            target = INITIAL_STATES.get(str(initial_state).upper())
            if target is None:
                raise BadRequestError(
                    f"initial_state must be one of {', '.join(INITIAL_STATES)}, "
                    f"got {initial_state!r}"
                )

        def action(snapshot: ClusterConfigSnapshot, leader: ConfigWriter) -> dict[str, Any]:
            if snapshot.contains(name):
                raise ConflictError(f"Connector {name} already exists")
            if target is not None:
                leader.put_target_state(name, target)
            leader.put_connector_config(name, props)
            return self._created_info(snapshot, name, props, target or TargetState.STARTED)

        info = self._write(action)
        self._log_config(name, props)
        return info

    def put_config(self, name: str, config: object) -> tuple[bool, dict[str, Any]]:
        """``PUT /connectors/{name}/config``: create or replace; returns (created, info).

        A change to a connector that a running query owns is refused (409, see `ownership`).
        """
        name = _check_name(name)
        props = self._checked_config(name, config)

        def action(
            snapshot: ClusterConfigSnapshot, leader: ConfigWriter
        ) -> tuple[bool, dict[str, Any]]:
            stored = snapshot.connector_config(name)
            if stored is not None and stored != props:
                self._refuse_if_owned(name)
            leader.put_connector_config(name, props)
            if stored is None:
                return True, self._created_info(snapshot, name, props, TargetState.STARTED)
            return False, self._written_info(snapshot, name, props)

        created, info = self._write(action)
        self._log_config(name, props)
        return created, info

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
        shows it (saying when no query runs the connector and how to start one)."""
        record = self._report_without_query(snapshot, name, target)
        committed = snapshot.committed_task_count(name)
        shown = shown_status(name, record, target, committed, self.settings.worker_id)
        return {**self._written_info(snapshot, name, props), "status": state_entry(shown)}

    def _checked_config(self, name: str, config: object) -> dict[str, str | None]:
        props = _config_strings(config)
        given = props.get("name")
        if given is not None and given != name:
            raise BadRequestError(
                f"Connector name configuration ({given}) doesn't match connector name in the "
                f"URL ({name})"
            )
        props["name"] = name
        self.plugins.check_config(props)
        return props

    def _refuse_if_owned(self, name: str) -> None:
        """`ConflictError` naming the query's driver if a running query owns the connector
        (not one whose driver stopped heartbeating: `_seen_now`)."""
        status = self._seen_now(self.statuses.read_to_end(self.timeout_s), name)[0]
        owner = query_owner(status, self.settings.worker_id)
        if owner is not None:
            raise ConflictError(owned_config_message(name, owner))

    def _log_config(self, name: str, props: Mapping[str, str | None]) -> None:
        log.info(
            "Connector %s configured: %s", name, masked(props, self.plugins.definitions(props))
        )

    def delete(self, name: str) -> None:
        """``DELETE /connectors/{name}``: tombstones for its config, target state and statuses."""

        def action(snapshot: ClusterConfigSnapshot, leader: ConfigWriter) -> None:
            self._config(snapshot, name)
            leader.delete_connector(name)

        self._write(action)
        self._clear_statuses(name, delete_connector=True)

    def _clear_statuses(self, name: str, delete_connector: bool) -> None:
        statuses = self.statuses.read_to_end(self.timeout_s)
        for task in statuses.task_statuses(name):
            self.statuses.delete_task_status(name, task)
        if delete_connector:
            self.statuses.delete_connector_status(name)

    def pause(self, name: str) -> None:
        """``PUT .../pause``: target state PAUSED (also for a stopped connector); without a
        running query the status becomes PAUSED (`without_query`)."""
        self._set_target(name, TargetState.PAUSED)

    def resume(self, name: str) -> None:
        """``PUT .../resume``: target state STARTED; the running query brings tasks back;
        without one the status becomes UNASSIGNED, saying so (`without_query`)."""
        self._set_target(name, TargetState.STARTED)

    def _set_target(self, name: str, state: TargetState) -> None:
        def action(snapshot: ClusterConfigSnapshot, leader: ConfigWriter) -> None:
            self._config(snapshot, name)
            leader.put_target_state(name, state)
            self._report_without_query(snapshot, name, state)

        self._write(action)

    def stop(self, name: str) -> None:
        """``PUT .../stop``: status STOPPED, then empty task set and target STOPPED (idempotent).

        The status comes first, so that a running query, which reports STOPPED under its own
        worker id once it sees the target state, writes the last status and keeps owning the
        connector; an already STOPPED status is left as it is.
        """

        def action(snapshot: ClusterConfigSnapshot, leader: ConfigWriter) -> None:
            self._config(snapshot, name)
            previous = self.statuses.read_to_end(self.timeout_s).connector_status(name)
            if previous is None or previous.state is not StatusState.STOPPED:
                self.statuses.put_connector_status(
                    name, StatusState.STOPPED, self.settings.worker_id, snapshot.generation(name)
                )
            try:
                leader.stop_connector(name)
            except Exception:
                self._restore_status(name, previous)
                raise

        self._write(action)
        self._clear_statuses(name, delete_connector=False)

    def _restore_status(self, name: str, previous: StatusRecord | None) -> None:
        """Put back the connector status a failed stop replaced (best effort)."""
        try:
            if previous is None:
                self.statuses.delete_connector_status(name)
            else:
                self.statuses.put_connector_status(
                    name, previous.state, previous.worker_id, previous.generation, previous.trace
                )
        except EosConnectError as exc:
            log.warning("Could not restore the status of connector %s: %s", name, exc)

    # --- restarts (KIP-745, with KIP-618's checks) ----------------------------------------

    def _check_restartable(
        self, snapshot: ClusterConfigSnapshot, name: str, task: int | None
    ) -> dict[str, str | None]:
        config = self._config(snapshot, name)
        if snapshot.is_inconsistent(name):
            raise ConflictError(
                f"Cannot restart connector {name} now: its latest task configurations are "
                "incomplete (a commit record names tasks that were never written); a new set "
                "must be written first"
            )
        if task is not None and not 0 <= task < len(snapshot.task_configs(name)):
            raise NotFoundError(f"Task {name}-{task} not found")
        if (
            self.settings.exactly_once
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

    def restart(
        self, name: str, include_tasks: bool = False, only_failed: bool = False
    ) -> dict[str, Any] | None:
        """``POST .../restart``: None (204) for the connector alone, else the plan (202)."""

        def action(snapshot: ClusterConfigSnapshot, leader: ConfigWriter) -> dict[str, Any]:
            config = self._check_restartable(snapshot, name, None)
            leader.put_restart_request(name, include_tasks, only_failed)
            statuses = self.statuses.read_to_end(self.timeout_s)
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

        plan = self._write(action)
        return plan if include_tasks or only_failed else None

    def restart_task(self, name: str, task: int) -> None:
        """``POST .../tasks/{task}/restart``: a connector restart request including its tasks.

        A connector's tasks run in one Spark query, so one task restarts with the others.
        """

        def action(snapshot: ClusterConfigSnapshot, leader: ConfigWriter) -> None:
            self._check_restartable(snapshot, name, task)
            leader.put_restart_request(name, True, False)

        self._write(action)

    # --- offsets (KIP-875) -----------------------------------------------------------------

    def _offset_topics(self, config: Mapping[str, str | None]) -> OffsetTopics:
        return OffsetTopics(self.settings.offsets_topic, config.get("offsets.storage.topic"))

    def _source_offsets(self, name: str, topics: OffsetTopics) -> dict[str, OffsetEntries]:
        with _offset_errors():
            return self.source_offsets.per_topic(name, topics)

    def offsets(self, name: str) -> dict[str, Any]:
        """``GET .../offsets``: source offsets from the offsets topics, or the sink's group's."""
        with self._lock:
            config = self._config(self._snapshot(), name)
            if self.plugins.kind_of(config) == "sink":
                with group_errors():
                    return sink_offsets_body(self.groups.committed(sink_group_id(name)))
            topics = self._offset_topics(config)
            return source_offsets_body(merged_offsets(self._source_offsets(name, topics)))

    def _modifiable(self, name: str) -> tuple[ClusterConfigSnapshot, dict[str, str | None]]:
        snapshot = self._snapshot()
        config = self._config(snapshot, name)
        target = snapshot.target_state(name)
        if not offsets_modifiable(target, snapshot.committed_task_count(name)):
            raise BadRequestError(
                "Connectors must be in the STOPPED state before their offsets can be modified. "
                "This can be done for the specified connector by issuing a 'PUT' request to the "
                f"'/connectors/{name}/stop' endpoint"
            )
        return snapshot, config

    def alter_offsets(self, name: str, body: object) -> dict[str, str]:
        """``PATCH .../offsets``: only the partitions named change; the connector's hook first."""
        with self._lock:
            snapshot, config = self._modifiable(name)
            connector = self.plugins.load(config)
            if isinstance(connector, SinkConnector):
                sink = parse_sink_offsets(body)
                resets = sorted(f"{tp.topic}-{tp.partition}" for tp, o in sink.items() if o is None)
                if resets:
                    raise BadRequestError(
                        "Resetting single partitions of a sink connector (a null offset) is not "
                        f"supported here ({', '.join(resets)}); use DELETE "
                        f"/connectors/{name}/offsets to reset them all"
                    )
                require_inactive(self.groups, name, sink_group_id(name), "altered")
                handled = self._hook(name, lambda: connector.alter_offsets(_defined(config), sink))
                with group_errors():
                    self.groups.alter(name, sink_group_id(name), _complete(sink))
                count = len(sink)
            else:
                pairs = parse_source_offsets(body)
                source = self._source(name, connector)
                with _offset_errors():
                    self.source_offsets.fence_tasks(name, self._fence_count(snapshot, name, config))
                handled = self._hook(name, lambda: source.alter_offsets(_defined(config), pairs))
                with _offset_errors():
                    self.source_offsets.write(name, self._offset_topics(config), pairs)
                count = len(pairs)
            log.info("Offsets of connector %s altered (%d partitions)", name, count)
            return {"message": modified_message(handled, reset=False)}

    def reset_offsets(self, name: str) -> dict[str, str]:
        """``DELETE .../offsets``: tombstone every known partition (verified), or drop the group."""
        with self._lock:
            snapshot, config = self._modifiable(name)
            connector = self.plugins.load(config)
            if isinstance(connector, SinkConnector):
                group = sink_group_id(name)
                require_inactive(self.groups, name, group, "reset")
                with group_errors():
                    committed = self.groups.committed(group)
                sink: dict[TopicPartition, int | None] = dict.fromkeys(committed)
                handled = self._hook(name, lambda: connector.alter_offsets(_defined(config), sink))
                with group_errors():
                    self.groups.delete(name, group)
            else:
                source = self._source(name, connector)
                topics = self._offset_topics(config)
                with _offset_errors():
                    self.source_offsets.fence_tasks(name, self._fence_count(snapshot, name, config))
                partitions = known_partitions(self._source_offsets(name, topics))
                pairs: list[tuple[dict[str, Any], dict[str, Any] | None]] = [
                    (p, None) for p in partitions
                ]
                handled = self._hook(name, lambda: source.alter_offsets(_defined(config), pairs))
                if pairs:
                    with _offset_errors():
                        self.source_offsets.write(name, topics, pairs)
                    left = remaining_partitions(self._source_offsets(name, topics), partitions)
                    if left:
                        raise HerderError(
                            f"Offsets of connector {name} are still present after the reset for "
                            f"{len(left)} partitions; try again"
                        )
            log.info("Offsets of connector %s reset", name)
            return {"message": modified_message(handled, reset=True)}

    @staticmethod
    def _source(name: str, connector: object) -> SourceConnector:
        if not isinstance(connector, SourceConnector):
            raise BadRequestError(
                f"Connector {name}'s class {type(connector).__name__} is neither a source nor a "
                "sink connector; its offsets cannot be modified"
            )
        return connector

    def _fence_count(
        self, snapshot: ClusterConfigSnapshot, name: str, config: Mapping[str, str | None]
    ) -> int:
        return max(snapshot.task_count(name) or 0, _tasks_max(config))

    @staticmethod
    def _hook(name: str, call: Callable[[], bool]) -> bool:
        """Run the connector's alter_offsets hook; a rejection is a 400 with its message."""
        try:
            return bool(call())
        except NotImplementedError as exc:
            raise BadRequestError(
                f"Connector {name} does not support modifying its offsets: {exc}"
            ) from exc
        except (EosConnectError, ValueError) as exc:
            if isinstance(exc, HerderError):
                raise
            raise BadRequestError(f"Connector {name} rejected the offsets: {exc}") from exc

    # --- plugins ---------------------------------------------------------------------------

    def connector_plugins(self) -> list[dict[str, str]]:
        """``GET /connector-plugins``: the shipped connectors and the Java ones of
        ``plugin.path``."""
        return self.plugins.connector_plugins()

    def validate(self, plugin: str, config: object) -> dict[str, Any]:
        """``PUT /connector-plugins/{plugin}/config/validate``: Connect's ConfigInfos."""
        return self.plugins.validate(plugin, _config_strings(config))


@contextmanager
def _offset_errors() -> Iterator[None]:
    """A source offsets store's failure as the herder's (500)."""
    try:
        yield
    except OffsetStoreError as exc:
        raise HerderError(str(exc)) from exc


def _complete(offsets: Mapping[TopicPartition, int | None]) -> dict[TopicPartition, int]:
    return {tp: offset for tp, offset in offsets.items() if offset is not None}
