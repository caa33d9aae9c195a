"""Driver side of a source pipeline: start the connector, fence earlier task producers, read the
committed offsets from Kafka and plan each micro-batch's tasks.
"""

from __future__ import annotations

import logging
import math
import time
from typing import Any

from spark_eos_connect.api.config import InvalidConfigError
from spark_eos_connect.api.source import (
    ConnectorTransactionBoundaries,
    ExactlyOnceSupport,
    SourceConnector,
)
from spark_eos_connect.connectors.registry import resolve_connector_class
from spark_eos_connect.errors import ConfigError, EosConnectError
from spark_eos_connect.kafka.producers import fence_transactional_id
from spark_eos_connect.protocol.config_records import TargetState
from spark_eos_connect.protocol.status_records import StatusState
from spark_eos_connect.runtime.framework_config import SourcePipelineConfig
from spark_eos_connect.runtime.leadership import begin_generation, config_store_for, worker_id
from spark_eos_connect.runtime.source_plan import SourceTaskPlan
from spark_eos_connect.storage.config_store import ConfigLeader
from spark_eos_connect.storage.offsets import OffsetsTopicView, ensure_offsets_topic
from spark_eos_connect.storage.status_store import KafkaStatusStore

log = logging.getLogger(__name__)

STATE_CHECK_INTERVAL_S = 0.5
RUNNING_STATES = {
    TargetState.STARTED: StatusState.RUNNING,
    TargetState.PAUSED: StatusState.PAUSED,
    TargetState.STOPPED: StatusState.STOPPED,
}


class ConnectorTakenOverError(EosConnectError, RuntimeError):
    """Another driver now leads this connector, or it was deleted: this query must stop."""


def class_path(cls: type) -> str:
    """`package.module.Class` of `cls`."""
    return f"{cls.__module__}.{cls.__qualname__}"


def load_source_connector(config: SourcePipelineConfig) -> SourceConnector:
    """Instantiate the connector and check its config and exactly-once promises (no I/O)."""
    connector_class = resolve_connector_class(config.connector_class)
    if not issubclass(connector_class, SourceConnector):
        raise ConfigError(
            f"connector.class {config.connector_class!r} is not a source connector; "
            "readStream.format('eosconnect') with connector.class needs a SourceConnector"
        )
    connector = connector_class()
    problems = {
        report.name: report.errors
        for report in connector.validate(config.connector_props)
        if report.errors
    }
    if problems:
        raise InvalidConfigError(problems)
    props = dict(config.connector_props)
    if config.exactly_once and config.exactly_once_required:
        support = connector.exactly_once_support(props)
        if support is not ExactlyOnceSupport.SUPPORTED:
            raise ConfigError(
                f"exactly.once.support=required, but connector {config.name} "
                f"({config.connector_class}) does not declare exactly-once support for this "
                f"configuration (it answered {support.name if support else 'unknown'})"
            )
    if config.transaction_boundary == "connector":
        answer = connector.can_define_transaction_boundaries(props)
        if answer is not ConnectorTransactionBoundaries.SUPPORTED:
            raise ConfigError(
                f"transaction.boundary=connector, but connector {config.name} "
                f"({config.connector_class}) cannot define transaction boundaries"
            )
    return connector


class SourceCoordinator:
    """Plans the micro-batches of one source connector (one per streaming query)."""

    def __init__(self, config: SourcePipelineConfig) -> None:
        self.config = config
        self.connector = load_source_connector(config)
        self.connector.start(dict(config.connector_props))
        self.task_configs = self.connector.task_configs(config.tasks_max)[: config.tasks_max]
        if not self.task_configs:
            raise ConfigError(f"connector {config.name} produced no task configs")
        self.task_class = class_path(self.connector.task_class())
        kafka = config.kafka
        self.global_partitions = ensure_offsets_topic(
            kafka, config.global_offsets_topic, config.offsets_partitions
        )
        self.primary_partitions = self.global_partitions
        if config.connector_offsets_topic:
            self.primary_partitions = ensure_offsets_topic(
                kafka, config.connector_offsets_topic, config.offsets_partitions
            )
        self.config_store = config_store_for(kafka, config.config_topic, config.group_id)
        self.status_store = KafkaStatusStore(kafka, config.status_topic)
        self.status_store.ensure_topic()
        self.leader: ConfigLeader | None = None
        self.generation_commit_offset: int | None = None
        self.generation = 0
        self.state: TargetState | None = None
        self._checked_at = 0.0
        self.refresh_target_state(force=True)
        self.primary_view = OffsetsTopicView(kafka, config.primary_offsets_topic)
        self.global_view = (
            OffsetsTopicView(kafka, config.global_offsets_topic)
            if config.connector_offsets_topic
            else None
        )

    def start_generation(self) -> None:
        """Lead a new generation of this connector's tasks (KIP-618 §5, see `leadership`)."""
        config, kafka = self.config, self.config.kafka
        if self.leader is not None:
            self.leader.close()
        self.leader, snapshot = begin_generation(
            self.config_store,
            config.name,
            config.connector_props,
            self.task_configs,
            fence=lambda task: fence_transactional_id(kafka, config.task_transactional_id(task)),
            exactly_once=config.exactly_once,
        )
        self.generation_commit_offset = snapshot.latest_commit_offset(config.name)
        self.generation = snapshot.generation(config.name)

    def refresh_target_state(self, force: bool = False) -> TargetState:
        """React to the connector's target state in the config topic (read at most every
        `STATE_CHECK_INTERVAL_S` unless forced): a STARTED connector without a running
        generation starts one (first start, or resume after a stop); a newer generation that
        this driver did not write means another driver took the connector over."""
        if not force and time.monotonic() - self._checked_at < STATE_CHECK_INTERVAL_S:
            return self.state or TargetState.STARTED
        self._checked_at = time.monotonic()
        name = self.config.name
        snapshot = self.config_store.read_to_end()
        state = snapshot.target_state(name) or TargetState.STARTED
        if self.generation_commit_offset is not None and not snapshot.contains(name):
            raise ConnectorTakenOverError(f"connector {name} was deleted from the config topic")
        if state is TargetState.STARTED:
            latest = snapshot.latest_commit_offset(name)
            if self.generation_commit_offset is None or (
                latest != self.generation_commit_offset and snapshot.committed_task_count(name) == 0
            ):
                self.start_generation()
            elif latest != self.generation_commit_offset:
                raise ConnectorTakenOverError(
                    f"a newer generation of connector {name} was started by another driver "
                    "(this query is a zombie and stops; its tasks are fenced)"
                )
        if state is not self.state:
            self.state = state
            self.report_status(RUNNING_STATES[state])
        return state

    def report_status(self, state: StatusState, trace: str | None = None) -> None:
        """Write the connector's and its tasks' states to the status topic."""
        name, me = self.config.name, worker_id()
        self.status_store.put_connector_status(name, state, me, self.generation, trace)
        for task in range(len(self.task_configs)):
            if state is StatusState.STOPPED:
                self.status_store.delete_task_status(name, task)
            else:
                self.status_store.put_task_status(name, task, state, me, self.generation, trace)

    def committed_offsets(self) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        """The connector's committed offsets; a dedicated topic's take precedence (KIP-618)."""
        name = self.config.name
        merged: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
        if self.global_view is not None:
            self.global_view.catch_up()
            for partition, offset in self.global_view.offsets_for(name):
                merged[_identity(partition)] = (partition, offset)
        self.primary_view.catch_up()
        for partition, offset in self.primary_view.offsets_for(name):
            merged[_identity(partition)] = (partition, offset)
        return list(merged.values())

    def plan(self) -> list[SourceTaskPlan]:
        """One plan per task for the next micro-batch, from the offsets committed in Kafka."""
        config = self.config
        if self.refresh_target_state(force=True) is not TargetState.STARTED:
            return []
        committed = self.committed_offsets()
        per_task = max(1, math.ceil(config.max_records_per_trigger / len(self.task_configs)))
        return [
            SourceTaskPlan(
                connector=config.name,
                task=task,
                task_class=self.task_class,
                task_config=dict(task_config),
                transactional_id=config.task_transactional_id(task),
                exactly_once=config.exactly_once,
                transaction_boundary=config.transaction_boundary,
                transaction_interval_ms=config.transaction_interval_ms,
                offsets_topic=config.primary_offsets_topic,
                offsets_topic_partitions=self.primary_partitions,
                mirror_offsets_topic=(
                    config.global_offsets_topic if config.connector_offsets_topic else None
                ),
                mirror_offsets_topic_partitions=self.global_partitions,
                committed=committed,
                offsets_positions=dict(self.primary_view.positions),
                max_records=per_task,
                max_poll_duration_ms=config.max_poll_duration_ms,
                group_id=config.group_id,
                config_topic=config.config_topic,
                status_topic=config.status_topic,
                generation_commit_offset=self.generation_commit_offset,
            )
            for task, task_config in enumerate(self.task_configs)
        ]

    def stop(self) -> None:
        """Stop the connector; its tasks are no longer assigned to anyone."""
        self.connector.stop()
        if self.state is TargetState.STARTED:
            self.report_status(StatusState.UNASSIGNED)
        if self.leader is not None:
            self.leader.close()


def _identity(partition: dict[str, Any]) -> str:
    from spark_eos_connect.protocol.offsets_format import partition_key

    return partition_key(partition)
