"""`ConnectorOffsets`: KIP-875's offsets endpoints (``GET|PATCH|DELETE .../offsets``).

A source connector's offsets live in the offsets topics (the worker's global one and the
connector's own, whose entries win: `source_offsets`); a sink connector's are its consumer
group's, ``connect-<name>`` (`consumer_groups`). Offsets change only while the connector is
STOPPED (`without_query.offsets_modifiable`) and after the connector's ``alter_offsets`` hook
accepted them. Before a source connector's offsets change, every task producer of its
generation is fenced (exactly-once support); a sink's group must have no members.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from spark_eos_connect.api.sink import SinkConnector, TopicPartition
from spark_eos_connect.api.source import SourceConnector
from spark_eos_connect.errors import EosConnectError
from spark_eos_connect.herder.config_topic import ConfigTopic
from spark_eos_connect.herder.consumer_groups import group_errors, require_inactive
from spark_eos_connect.herder.entities import modified_message
from spark_eos_connect.herder.errors import BadRequestError, HerderError
from spark_eos_connect.herder.offsets_body import (
    parse_sink_offsets,
    parse_source_offsets,
    sink_offsets_body,
    source_offsets_body,
)
from spark_eos_connect.herder.plugins import Plugins
from spark_eos_connect.herder.source_offsets import (
    OffsetTopics,
    known_partitions,
    merged_offsets,
    remaining_partitions,
)
from spark_eos_connect.herder.without_query import offsets_modifiable
from spark_eos_connect.ports import GroupOffsets, OffsetEntries, SourceOffsetStore
from spark_eos_connect.protocol.config_records import ClusterConfigSnapshot
from spark_eos_connect.protocol.sink_groups import sink_group_id
from spark_eos_connect.storage.offsets import OffsetStoreError

log = logging.getLogger(__name__)

Config = Mapping[str, str | None]
SourcePairs = list[tuple[dict[str, Any], dict[str, Any] | None]]


@dataclass(eq=False)
class ConnectorOffsets:
    """Offsets in `source_offsets` (the global topic: `offsets_topic`) and `groups`."""

    config_topic: ConfigTopic
    plugins: Plugins
    source_offsets: SourceOffsetStore
    groups: GroupOffsets
    offsets_topic: str

    def offset_topics(self, config: Config) -> OffsetTopics:
        """The global offsets topic and the connector's own (``offsets.storage.topic``)."""
        return OffsetTopics(self.offsets_topic, config.get("offsets.storage.topic"))

    def offsets(self, name: str) -> dict[str, Any]:
        """``GET .../offsets``: source offsets from the offsets topics, or the sink's group's."""
        with self.config_topic.lock:
            config = self.config_topic.connector_config(self.config_topic.snapshot(), name)
            if self.plugins.kind_of(config) == "sink":
                with group_errors():
                    return sink_offsets_body(self.groups.committed(sink_group_id(name)))
            per_topic = self._per_topic(name, self.offset_topics(config))
            return source_offsets_body(merged_offsets(per_topic))

    def alter(self, name: str, body: object) -> dict[str, str]:
        """``PATCH .../offsets``: only the partitions named change; the connector's hook first."""
        with self.config_topic.lock:
            snapshot, config = self._modifiable(name)
            connector = self.plugins.load(config)
            if isinstance(connector, SinkConnector):
                handled, count = self._alter_sink(name, connector, config, body)
            else:
                handled, count = self._alter_source(name, connector, snapshot, config, body)
            log.info("Offsets of connector %s altered (%d partitions)", name, count)
            return {"message": modified_message(handled, reset=False)}

    def reset(self, name: str) -> dict[str, str]:
        """``DELETE .../offsets``: tombstone every known partition (verified), or drop the group."""
        with self.config_topic.lock:
            snapshot, config = self._modifiable(name)
            connector = self.plugins.load(config)
            if isinstance(connector, SinkConnector):
                handled = self._reset_sink(name, connector, config)
            else:
                handled = self._reset_source(name, _source(name, connector), snapshot, config)
            log.info("Offsets of connector %s reset", name)
            return {"message": modified_message(handled, reset=True)}

    def _modifiable(self, name: str) -> tuple[ClusterConfigSnapshot, dict[str, str | None]]:
        """The snapshot and the connector's config; 400 unless it is STOPPED."""
        snapshot = self.config_topic.snapshot()
        config = self.config_topic.connector_config(snapshot, name)
        target = snapshot.target_state(name)
        if not offsets_modifiable(target, snapshot.committed_task_count(name)):
            raise BadRequestError(
                "Connectors must be in the STOPPED state before their offsets can be modified. "
                "This can be done for the specified connector by issuing a 'PUT' request to the "
                f"'/connectors/{name}/stop' endpoint"
            )
        return snapshot, config

    # --- sink connectors: the consumer group -----------------------------------------------

    def _alter_sink(
        self, name: str, connector: SinkConnector, config: Config, body: object
    ) -> tuple[bool, int]:
        sink = parse_sink_offsets(body)
        resets = sorted(f"{tp.topic}-{tp.partition}" for tp, o in sink.items() if o is None)
        if resets:
            raise BadRequestError(
                "Resetting single partitions of a sink connector (a null offset) is not "
                f"supported here ({', '.join(resets)}); use DELETE "
                f"/connectors/{name}/offsets to reset them all"
            )
        require_inactive(self.groups, name, sink_group_id(name), "altered")
        handled = _hook(name, lambda: connector.alter_offsets(_defined(config), sink))
        with group_errors():
            self.groups.alter(name, sink_group_id(name), _complete(sink))
        return handled, len(sink)

    def _reset_sink(self, name: str, connector: SinkConnector, config: Config) -> bool:
        group = sink_group_id(name)
        require_inactive(self.groups, name, group, "reset")
        with group_errors():
            committed = self.groups.committed(group)
        sink: dict[TopicPartition, int | None] = dict.fromkeys(committed)
        handled = _hook(name, lambda: connector.alter_offsets(_defined(config), sink))
        with group_errors():
            self.groups.delete(name, group)
        return handled

    # --- source connectors: the offsets topics ---------------------------------------------

    def _alter_source(
        self,
        name: str,
        connector: object,
        snapshot: ClusterConfigSnapshot,
        config: Config,
        body: object,
    ) -> tuple[bool, int]:
        pairs = parse_source_offsets(body)
        source = _source(name, connector)
        self._fence_tasks(snapshot, name, config)
        handled = _hook(name, lambda: source.alter_offsets(_defined(config), pairs))
        with _offset_errors():
            self.source_offsets.write(name, self.offset_topics(config), pairs)
        return handled, len(pairs)

    def _reset_source(
        self, name: str, source: SourceConnector, snapshot: ClusterConfigSnapshot, config: Config
    ) -> bool:
        topics = self.offset_topics(config)
        self._fence_tasks(snapshot, name, config)
        partitions = known_partitions(self._per_topic(name, topics))
        pairs: SourcePairs = [(p, None) for p in partitions]
        handled = _hook(name, lambda: source.alter_offsets(_defined(config), pairs))
        if pairs:
            with _offset_errors():
                self.source_offsets.write(name, topics, pairs)
            left = remaining_partitions(self._per_topic(name, topics), partitions)
            if left:
                raise HerderError(
                    f"Offsets of connector {name} are still present after the reset for "
                    f"{len(left)} partitions; try again"
                )
        return handled

    def _per_topic(self, name: str, topics: OffsetTopics) -> dict[str, OffsetEntries]:
        with _offset_errors():
            return self.source_offsets.per_topic(name, topics)

    def _fence_tasks(self, snapshot: ClusterConfigSnapshot, name: str, config: Config) -> None:
        """Fence every task producer the connector may have had (not below ``tasks.max``)."""
        count = max(snapshot.task_count(name) or 0, _tasks_max(config))
        with _offset_errors():
            self.source_offsets.fence_tasks(name, count)


def _source(name: str, connector: object) -> SourceConnector:
    if not isinstance(connector, SourceConnector):
        raise BadRequestError(
            f"Connector {name}'s class {type(connector).__name__} is neither a source nor a "
            "sink connector; its offsets cannot be modified"
        )
    return connector


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


@contextmanager
def _offset_errors() -> Iterator[None]:
    """A source offsets store's failure as the herder's (500)."""
    try:
        yield
    except OffsetStoreError as exc:
        raise HerderError(str(exc)) from exc


def _defined(config: Config) -> dict[str, str]:
    return {k: v for k, v in config.items() if v is not None}


def _tasks_max(config: Config) -> int:
    try:
        return max(1, int(config.get("tasks.max") or 1))
    except ValueError:
        return 1


def _complete(offsets: Mapping[TopicPartition, int | None]) -> dict[TopicPartition, int]:
    return {tp: offset for tp, offset in offsets.items() if offset is not None}
