"""Driver side of a source pipeline: start the connector, fence earlier task producers, read the
committed offsets from Kafka and plan each micro-batch's tasks.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from spark_eos_connect.api.config import InvalidConfigError
from spark_eos_connect.api.source import (
    ConnectorTransactionBoundaries,
    ExactlyOnceSupport,
    SourceConnector,
)
from spark_eos_connect.errors import ConfigError, EosConnectError
from spark_eos_connect.jvm_tasks.connector import JavaSourceConnector
from spark_eos_connect.jvm_tasks.resolution import resolve_with_plugin_path
from spark_eos_connect.kafka.clients import ensure_reachable
from spark_eos_connect.kafka.producers import fence_transactional_id
from spark_eos_connect.kafka.security import authenticates, verify_credentials
from spark_eos_connect.plugins.connectors import resolve_connector_class
from spark_eos_connect.plugins.loader import class_path
from spark_eos_connect.ports import ConfigStore, ConfigWriter, StatusStore
from spark_eos_connect.protocol.config_records import ClusterConfigSnapshot, TargetState
from spark_eos_connect.protocol.status_records import StatusState
from spark_eos_connect.runtime import commit_hooks
from spark_eos_connect.runtime.config.config_references import reverse_transform
from spark_eos_connect.runtime.lifecycle.connector_lifecycle import (
    ConnectorPhase,
    LatestOffsetsReader,
    ManagedConnector,
)
from spark_eos_connect.runtime.lifecycle.connector_owner import (
    RUNNING_STATES,
    STATE_CHECK_INTERVAL_S,
    ConnectorOwner,
    target_state,
)
from spark_eos_connect.runtime.lifecycle.connector_owner import (
    ConnectorInUseError as ConnectorInUseError,  # raised by claim; importable from here
)
from spark_eos_connect.runtime.lifecycle.leadership import begin_generation
from spark_eos_connect.source.config import SourcePipelineConfig, record_options
from spark_eos_connect.source.plan import SourceTaskPlan
from spark_eos_connect.storage.config_store import config_store_for
from spark_eos_connect.storage.offsets import OffsetsTopicView, ensure_offsets_topic
from spark_eos_connect.storage.status_store import KafkaStatusStore

log = logging.getLogger(__name__)
T = TypeVar("T")

CREDENTIALS_TIMEOUT_S = 60.0
"""How long the driver waits for the brokers to accept or refuse its credentials at start."""


class ConnectorTakenOverError(EosConnectError, RuntimeError):
    """Another driver now leads this connector, or it was deleted: this query must stop."""


class ConnectorFailedError(EosConnectError, RuntimeError):
    """The connector failed to start when the query started."""


def load_source_connector(
    config: SourcePipelineConfig, props: Mapping[str, str] | None = None
) -> SourceConnector:
    """Instantiate the connector and check its config and exactly-once promises (no I/O).

    `props` are the connector's options with references resolved (default: as configured).
    """
    props = dict(config.connector_props if props is None else props)
    if config.plugin_path:  # Java whenever plugin.path holds the class (`jvm_tasks.resolution`)
        connector_class = resolve_with_plugin_path(
            config.connector_class, config.plugin_path, config.name
        )
    else:
        connector_class = resolve_connector_class(config.connector_class)
        log.info(
            "connector %s: %s runs as this project's connector %s (no plugin.path)",
            config.name,
            config.connector_class,
            class_path(connector_class),
        )
    if not issubclass(connector_class, SourceConnector):
        raise ConfigError(
            f"connector.class {config.connector_class!r} is not a source connector; "
            "readStream.format('eosconnect') with connector.class needs a SourceConnector"
        )
    connector = connector_class()
    problems = {report.name: report.errors for report in connector.validate(props) if report.errors}
    if problems:
        raise InvalidConfigError(problems)
    if config.exactly_once and config.exactly_once_required:
        _check_exactly_once_support(connector, config, props)
    if config.transaction_boundary == "connector":
        _check_transaction_boundaries(connector, config, props)
    return connector


def _check_exactly_once_support(
    connector: SourceConnector, config: SourcePipelineConfig, props: dict[str, str]
) -> None:
    """``exactly.once.support=required``: refuse a connector that does not declare it."""
    option = "exactly.once.support=required"
    question = "whether it supports exactly-once delivery"
    support = _preflight(option, question, config, lambda: connector.exactly_once_support(props))
    if support is not ExactlyOnceSupport.SUPPORTED:
        raise ConfigError(
            f"{option}, but connector {config.name} ({config.connector_class}) does not declare "
            "exactly-once support for this configuration "
            f"(it answered {support.name if support else 'unknown'})"
        )


def _check_transaction_boundaries(
    connector: SourceConnector, config: SourcePipelineConfig, props: dict[str, str]
) -> None:
    """``transaction.boundary=connector``: refuse a connector that cannot define them."""
    option = "transaction.boundary=connector"
    question = "whether it can define transaction boundaries"
    answer = _preflight(
        option, question, config, lambda: connector.can_define_transaction_boundaries(props)
    )
    if answer is not ConnectorTransactionBoundaries.SUPPORTED:
        raise ConfigError(
            f"{option}, but connector {config.name} ({config.connector_class}) cannot define "
            "transaction boundaries"
        )


def _preflight(option: str, question: str, config: SourcePipelineConfig, ask: Callable[[], T]) -> T:
    """The connector's answer to `ask`; if it raises, a `ConfigError` naming `option` first."""
    try:
        return ask()
    except Exception as exc:
        raise ConfigError(
            f"{option}, but connector {config.name} ({config.connector_class}) failed when asked "
            f"{question} for this configuration: {type(exc).__name__}: {exc}"
        ) from exc


class OffsetsReplay(Protocol):
    """An offsets topic read by the driver: where tasks resume (`storage.offsets`'s view)."""

    @property
    def positions(self) -> dict[int, int]: ...

    def catch_up(self) -> Any: ...

    def offsets_for(self, connector: str) -> list[tuple[dict[str, Any], dict[str, Any]]]: ...

    def close(self) -> None: ...


@dataclass
class CoordinatorStores:
    """What the coordinator reads and writes: the config, status and offsets topics, and the
    fencing of a task's transactional id. `in_kafka` builds the real ones; tests give twins."""

    config_store: ConfigStore
    status_store: StatusStore
    primary_view: OffsetsReplay
    """The offsets topic tasks commit to (the connector's own, else the global one)."""
    global_view: OffsetsReplay | None
    """The global offsets topic, when the connector has its own (read first, as Connect does)."""
    primary_partitions: int
    global_partitions: int
    fence_task: Callable[[int], None]
    """Fence every earlier producer of task N (KIP-618: before a new generation's tasks run)."""

    @classmethod
    def in_kafka(cls, config: SourcePipelineConfig, kafka: Mapping[str, Any]) -> CoordinatorStores:
        """Create or check the internal topics (Connect's `*.storage.*` rules), then open them."""
        topics = config.topics
        global_partitions = ensure_offsets_topic(
            kafka,
            config.offsets_topic,
            topics.offsets_partitions,
            topics.offsets_replication,
        )
        primary_partitions = global_partitions
        if config.connector_offsets_topic:
            primary_partitions = ensure_offsets_topic(
                kafka,
                config.connector_offsets_topic,
                topics.offsets_partitions,
                topics.offsets_replication,
            )
        config_store = config_store_for(
            kafka, config.config_topic, config.group_id, topics.config_replication
        )
        status_store = KafkaStatusStore(kafka, config.status_topic)
        status_store.ensure_topic(
            topics.status_partitions, replication_factor=topics.status_replication
        )
        return cls(
            config_store=config_store,
            status_store=status_store,
            primary_view=OffsetsTopicView(kafka, config.primary_offsets_topic),
            global_view=(
                OffsetsTopicView(kafka, config.offsets_topic)
                if config.connector_offsets_topic
                else None
            ),
            primary_partitions=primary_partitions,
            global_partitions=global_partitions,
            fence_task=lambda task: fence_transactional_id(
                kafka, config.task_transactional_id(task)
            ),
        )


class SourceCoordinator:
    """Plans the micro-batches of one source connector (one per streaming query).

    The constructor does no I/O; `open(config)` checks the cluster, opens the Kafka stores and
    `start`s, as the driver does when its query starts.
    """

    def __init__(
        self,
        config: SourcePipelineConfig,
        stores: CoordinatorStores,
        connector_class: type[SourceConnector],
        props: Mapping[str, str],
    ) -> None:
        """`props`: the connector's options with references resolved."""
        self.config = config
        self.config_store = stores.config_store
        self.primary_view = stores.primary_view
        self.global_view = stores.global_view
        self.primary_partitions = stores.primary_partitions
        self.global_partitions = stores.global_partitions
        self._fence_task = stores.fence_task
        self.leader: ConfigWriter | None = None
        self.generation_commit_offset: int | None = None
        self.generation_active = False
        self.state: TargetState | None = None
        self._tasks_reported: tuple[StatusState | None, int, int] | None = None
        self._restart_requests_seen = False
        self._restart_offset: int | None = None
        self._checked_at = 0.0
        self._replaced = False
        self.owner = ConnectorOwner(config.name, stores.status_store, config.takeover)
        """This driver as the connector's owner in the status topic."""
        self._offsets_lock = threading.Lock()
        self.connector = ManagedConnector(
            connector_class,
            dict(props),
            config.tasks_max,
            LatestOffsetsReader(self.committed_offsets),
        )

    @property
    def generation(self) -> int:
        """The generation of this driver's status records (`ConnectorOwner.generation`)."""
        return self.owner.generation

    @property
    def taken_over(self) -> bool:
        """Another driver leads the connector now, or it was deleted."""
        return self._replaced or self.owner.taken_over_by is not None

    @classmethod
    def open(cls, config: SourcePipelineConfig) -> SourceCoordinator:
        """The driver's coordinator of `config`'s connector, started against its Kafka cluster.

        References are resolved before anything is written; the resolved values stay in memory.
        A refused login or certificate fails here, not on a timeout; a wrong address is
        reported with the option's value and the time waited.
        """
        kafka = config.providers.resolve(config.kafka, prefix="kafka.")
        if authenticates(kafka):
            verify_credentials(kafka, CREDENTIALS_TIMEOUT_S)
        else:
            ensure_reachable(kafka)
        props = config.providers.resolve(config.connector_props)
        connector_class = type(load_source_connector(config, props))
        coordinator = cls(config, CoordinatorStores.in_kafka(config, kafka), connector_class, props)
        coordinator.begin()
        return coordinator

    def begin(self) -> None:
        """Claim the connector, start it and keep its heartbeat: a driver's coordinator starts
        so. A connector that fails to start is stopped again (a Java connector leaves the
        driver's JVM) and the stores are closed, its FAILED status kept, before the error
        propagates."""
        self.claim()
        try:
            self.start()
        except ConnectorFailedError:
            try:
                self.stop()
            except Exception:
                log.exception("connector %s: releasing a failed start failed", self.config.name)
            raise
        self.owner.start_heartbeat()

    def claim(self, **clock: Any) -> None:
        """Make sure no other driver that is alive runs the connector (`ConnectorOwner.claim`;
        `clock`: its `now_ms`, `sleep`, `alive` in tests): refused with `ConnectorInUseError`
        while one does, unless `takeover=true`."""
        self.owner.claim(**clock)

    def beat(self) -> None:
        """Re-write the connector's RUNNING or PAUSED status: this driver is alive
        (`ConnectorOwner.beat`, which also notices a driver that took the connector over)."""
        self.owner.beat()

    def start(self) -> None:
        """Start the connector, claim the config topic's leadership (fencing a zombie leader
        before the first read) and follow the connector's target state."""
        if not self.connector.start():
            self.owner.report(StatusState.FAILED, self.connector.trace)
            self.owner.report_tasks(0, None, self.config.tasks_max)
            raise ConnectorFailedError(
                f"connector {self.config.name} failed to start:\n{self.connector.trace}"
            )
        self.leader = self.config_store.leader()
        self.refresh_target_state(force=True)

    @property
    def task_configs(self) -> list[dict[str, str]]:
        """The running connector's task configs (none while it is stopped or failed to start),
        options the connector config holds references in set back to those references."""
        return reverse_transform(self.config.connector_props, self.connector.task_configs or [])

    def start_generation(self) -> None:
        """Lead a new generation of this connector's tasks (KIP-618 §5, see `leadership`)."""
        config = self.config
        self.leader, snapshot = begin_generation(
            self.config_store,
            config.name,
            config.connector_props,
            self.task_configs,
            fence=self._fence_task,
            exactly_once=config.exactly_once,
            leader=self.leader,
        )
        self.generation_commit_offset = snapshot.latest_commit_offset(config.name)
        self.owner.config_generation = snapshot.generation(config.name)
        self.generation_active = True

    def refresh_target_state(self, force: bool = False) -> TargetState:
        """React to the config topic (read at most every `STATE_CHECK_INTERVAL_S` unless forced).

        STOPPED stops the connector instance; STARTED or PAUSED after a stop starts a fresh one,
        and STARTED leads a new generation of its tasks; a restart request restarts the
        connector (a FAILED one only, if asked so); an error the connector reports makes it
        FAILED while its tasks keep running, as in Connect. A newer generation that this driver
        did not write, or a newer driver's status (`ConnectorOwner.beat`), means another driver
        took the connector over.
        """
        if self.owner.taken_over_by is not None:
            raise ConnectorTakenOverError(
                f"connector {self.config.name} was taken over by driver "
                f"{self.owner.taken_over_by} (takeover=true): this query stops; the other one "
                "runs the connector"
            )
        if not force and time.monotonic() - self._checked_at < STATE_CHECK_INTERVAL_S:
            return self.state or TargetState.STARTED
        self._checked_at = time.monotonic()
        name = self.config.name
        snapshot = self.config_store.read_to_end()
        state = target_state(snapshot, name)
        if self.generation_commit_offset is not None and not snapshot.contains(name):
            self._replaced = True
            raise ConnectorTakenOverError(f"connector {name} was deleted from the config topic")
        self.connector.check_reported_error()
        self._follow_restart_requests(snapshot, state)
        if state is TargetState.STOPPED:
            if self.connector.phase is not ConnectorPhase.STOPPED:
                self.connector.stop()
            self.generation_active = False
        else:
            self._follow_generation(snapshot, state)
        self.state = state
        self._report(state)
        return state

    def _follow_restart_requests(self, snapshot: ClusterConfigSnapshot, state: TargetState) -> None:
        """Restart the connector for a restart request written since this driver started."""
        offset = snapshot.restart_request_offset(self.config.name)
        first_look = not self._restart_requests_seen
        self._restart_requests_seen = True
        if first_look or offset is None or offset == self._restart_offset:
            self._restart_offset = offset
            return
        self._restart_offset = offset
        request = snapshot.restart_requests[self.config.name]
        failed = self.connector.phase is ConnectorPhase.FAILED
        if state is TargetState.STOPPED or (request.only_failed and not failed):
            return
        log.info("restarting connector %s on request", self.config.name)
        previous = self.connector.task_configs
        if not self.connector.restart() or self.connector.task_configs != previous:
            self.generation_active = False  # no tasks, or new task configs: a new generation

    def _follow_generation(self, snapshot: ClusterConfigSnapshot, state: TargetState) -> None:
        name = self.config.name
        latest = snapshot.latest_commit_offset(name)
        if self.generation_active and latest != self.generation_commit_offset:
            if snapshot.committed_task_count(name) != 0:
                self._replaced = True
                raise ConnectorTakenOverError(
                    f"a newer generation of connector {name} was started by another driver "
                    "(this query is a zombie and stops; its tasks are fenced)"
                )
            self.connector.stop()  # stopped and resumed between two looks: restart as well
            self.generation_active = False
        if self.connector.phase is ConnectorPhase.STOPPED:
            self.connector.start()
        if self.connector.take_reconfiguration_request():
            self.generation_active = False
        if (
            state is TargetState.STARTED
            and not self.generation_active
            and self.connector.task_configs
        ):
            self.start_generation()

    def _report(self, state: TargetState) -> None:
        """Write the connector's state (FAILED with its trace when it failed) and its tasks'
        (tombstones while no generation of them is active) when they changed."""
        failed = self.connector.phase is ConnectorPhase.FAILED
        self.owner.follow(state, failure=self.connector.trace if failed else None)
        task_state = RUNNING_STATES[state] if self.generation_active else None
        tasks = (task_state, self.generation, len(self.task_configs))
        if tasks != self._tasks_reported:
            self._tasks_reported = tasks
            self.owner.report_tasks(len(self.task_configs), task_state, self.config.tasks_max)

    def committed_offsets(self) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        """The connector's committed offsets; a dedicated topic's take precedence (KIP-618).
        Safe from any thread (the connector's own reader calls it too)."""
        return self._committed_and_positions()[0]

    def _committed_and_positions(
        self,
    ) -> tuple[list[tuple[dict[str, Any], dict[str, Any]]], dict[int, int]]:
        """`committed_offsets()` and the primary offsets topic's positions they were read at."""
        name = self.config.name
        merged: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
        with self._offsets_lock:
            if self.global_view is not None:
                self.global_view.catch_up()
                for partition, offset in self.global_view.offsets_for(name):
                    merged[_identity(partition)] = (partition, offset)
            self.primary_view.catch_up()
            for partition, offset in self.primary_view.offsets_for(name):
                merged[_identity(partition)] = (partition, offset)
            return list(merged.values()), dict(self.primary_view.positions)

    def plan(self) -> list[SourceTaskPlan]:
        """One plan per task for the next micro-batch, from the offsets committed in Kafka."""
        config = self.config
        started = self.refresh_target_state(force=True) is TargetState.STARTED
        connector = self.connector.connector
        if not (started and self.generation_active and self.task_configs and connector):
            return []
        task_class = class_path(connector.task_class())
        java = isinstance(connector, JavaSourceConnector)  # converts its records in its JVM
        extra = (
            connector.task_settings(record_options(config.connector_props))
            if isinstance(connector, JavaSourceConnector)
            else {}
        )
        committed, positions = self._committed_and_positions()
        per_task = max(1, math.ceil(config.max_records_per_trigger / len(self.task_configs)))
        return [
            SourceTaskPlan(
                connector=config.name,
                task=task,
                task_class=task_class,
                task_config=dict(task_config),
                transactional_id=config.task_transactional_id(task),
                exactly_once=config.exactly_once,
                transaction_boundary=config.transaction_boundary,
                transaction_interval_ms=config.transaction_interval_ms,
                offsets_topic=config.primary_offsets_topic,
                offsets_topic_partitions=self.primary_partitions,
                mirror_offsets_topic=(
                    config.offsets_topic if config.connector_offsets_topic else None
                ),
                mirror_offsets_topic_partitions=self.global_partitions,
                committed=committed,
                offsets_positions=positions,
                max_records=per_task,
                max_poll_duration_ms=config.max_poll_duration_ms,
                group_id=config.group_id,
                config_topic=config.config_topic,
                status_topic=config.status_topic,
                hooks=commit_hooks.installed(),
                generation_commit_offset=self.generation_commit_offset,
                status_generation=self.generation,
                providers=config.providers,
                conversion=None if java else config.conversion,
                extra=extra,
            )
            for task, task_config in enumerate(self.task_configs)
        ]

    def stop(self) -> None:
        """The query stops: stop the connector, abort what its tasks left open, and report the
        connector and its tasks UNASSIGNED (a FAILED connector keeps its trace; a STOPPED one
        stays STOPPED), as a Connect worker does when it leaves; after a task failed for good
        (its FAILED status the latest) the connector FAILED and that task kept FAILED
        (`ConnectorOwner.leave`).

        A batch the stop interrupted may have left a task's transaction open until the
        broker's `transaction.timeout.ms`: fencing the tasks' producers aborts it now. Not when
        another driver leads the connector (`still_leading`): its producers must not be fenced.
        """
        self.owner.stop_heartbeat()
        failed = self.connector.phase is ConnectorPhase.FAILED
        trace = self.connector.trace
        tasks = len(self.task_configs)
        self.connector.stop()
        try:
            leading = self.still_leading()
            if leading and self.generation_active and self.config.exactly_once:
                for task in range(self.config.tasks_max):
                    self._fence_task(task)
            if leading:  # its tasks report this driver's generation
                self.owner.leave(trace if failed else None, tasks, of_this_generation=True)
        finally:
            if self.leader is not None:
                self.leader.close()
            self.config_store.close()
            with self._offsets_lock:
                self.primary_view.close()
                if self.global_view is not None:
                    self.global_view.close()

    def still_leading(self) -> bool:
        """Whether the connector's latest generation in the config topic is this driver's (or
        none was led yet) and it was neither taken over nor deleted."""
        if self.taken_over:
            return False
        if self.generation_commit_offset is None:
            return True
        snapshot = self.config_store.read_to_end()
        name = self.config.name
        return snapshot.contains(name) and (
            snapshot.latest_commit_offset(name) == self.generation_commit_offset
            or snapshot.committed_task_count(name) == 0
        )


def _identity(partition: dict[str, Any]) -> str:
    from spark_eos_connect.protocol.offsets_format import partition_key

    return partition_key(partition)
