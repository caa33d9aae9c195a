"""A sink query's connector lifecycle: registration, target states, rebasing after a stop.

A Kafka stream read with a `name` belongs to the sink connector `name`. The driver registers the
connector in the config topic (when `connector.class` is given and it is not there yet), follows
its target state (no new micro-batch while PAUSED or STOPPED) and reports it in the status topic.
After a stop, the stream continues from the consumer group `connect-<name>`, whose offsets may
have been altered or reset in the meantime (KIP-875).

Spark's offsets of such a stream are the reader's `{"topic": {"partition": offset}}` JSON plus
up to two reserved keys (a topic name cannot contain `$`):

- `"$start"`, in the end offsets of a batch that does not continue from the previous batch's
  end: that batch's own start. Spark replays a batch from the (start, end) it logged, so a
  rebased start must be part of the logged end to read the same records again.
- `"$tasksCommit"`: the config-topic offset of the connector's latest task-config commit when
  the stream last started from the group's offsets. Stopping a connector writes a new commit (an
  empty task set), so a different offset means a stop this stream has not caught up with, also
  one that happened while the query was not running.

The driver owns the connector as a source driver does, through the same
`runtime.lifecycle.connector_owner`: it refuses to start while another live driver runs it,
unless `takeover=true`, takes a silent one over once its liveness lapses, and re-writes its
RUNNING or PAUSED status every `HEARTBEAT_S` while it runs, stopping once a driver took it over.
When the query ends it reports the connector UNASSIGNED, or FAILED when a task failed for good
(the tasks report themselves through `runtime.task_status`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from spark_eos_connect.errors import EosConnectError
from spark_eos_connect.ports import ConfigStore, StatusStore
from spark_eos_connect.protocol.config_records import ClusterConfigSnapshot, TargetState
from spark_eos_connect.runtime.config.config_references import (
    ConfigProviders,
    has_reference,
    is_provider_option,
)
from spark_eos_connect.runtime.config.framework_config import (
    TAKEOVER,
    TAKEOVER_CONFIG,
    WORKER_CONFIG,
    InternalTopicSettings,
)
from spark_eos_connect.runtime.config.options import DataSourceOptions
from spark_eos_connect.runtime.lifecycle.connector_owner import (
    HEARTBEAT_S,
    STATE_CHECK_INTERVAL_S,
    ConnectorOwner,
    target_state,
)
from spark_eos_connect.runtime.lifecycle.leadership import LEADER_ATTEMPTS, worker_id
from spark_eos_connect.sink.kafka_input import (
    READER_CONFIG,
    TP,
    offsets_from_json,
    offsets_to_json,
)
from spark_eos_connect.storage.config_store import LeaderFencedError, config_store_for
from spark_eos_connect.storage.status_store import KafkaStatusStore

log = logging.getLogger(__name__)

RESERVED_PREFIX = "$"
START_KEY = "$start"
TASKS_COMMIT_KEY = "$tasksCommit"

CONNECTOR_OPTIONS_OF_THE_READER = ("name", "topics", "topics.regex")
READER_ONLY_OPTIONS = (frozenset(READER_CONFIG.names()) - set(CONNECTOR_OPTIONS_OF_THE_READER)) | {
    TAKEOVER
}
"""Spark reader options that are not part of the connector's config (`startingOffsets` ...,
and `takeover`, which is about this run)."""


# --- Spark's offsets (pure) ---------------------------------------------------------------------


@dataclass(frozen=True)
class StreamOffsets:
    """One of Spark's offsets of the stream: the next offsets to read and the reserved keys."""

    next: dict[TP, int]
    start: dict[TP, int] | None = None
    tasks_commit: int | None = None


def decode_stream_offsets(data: Mapping[str, Any] | None) -> StreamOffsets:
    """Spark's offsets JSON (None: nothing yet); raises ValueError on a malformed value."""
    if data is None:
        return StreamOffsets({})
    if not isinstance(data, Mapping):
        raise ValueError("offsets must be a JSON object of topics")
    topics = {k: v for k, v in data.items() if not str(k).startswith(RESERVED_PREFIX)}
    reserved = {str(k) for k in data} - set(topics)
    unknown = sorted(reserved - {START_KEY, TASKS_COMMIT_KEY})
    if unknown:
        raise ValueError(f"unknown reserved keys {', '.join(unknown)} in offsets")
    start = data.get(START_KEY)
    commit = data.get(TASKS_COMMIT_KEY)
    if commit is not None and (isinstance(commit, bool) or not isinstance(commit, int)):
        raise ValueError(f"bad {TASKS_COMMIT_KEY} {commit!r} in offsets")
    return StreamOffsets(
        offsets_from_json(topics),
        None if start is None else offsets_from_json(start),
        commit,
    )


def encode_stream_offsets(offsets: StreamOffsets) -> dict[str, Any]:
    """The JSON Spark logs: topics in a stable order, then the reserved keys that are set."""
    result: dict[str, Any] = dict(offsets_to_json(offsets.next))
    if offsets.start is not None:
        result[START_KEY] = offsets_to_json(offsets.start)
    if offsets.tasks_commit is not None:
        result[TASKS_COMMIT_KEY] = offsets.tasks_commit
    return result


def batch_start(start: StreamOffsets, end: StreamOffsets) -> dict[TP, int]:
    """Where a batch's ranges begin: its recorded own start, else the previous batch's end."""
    return dict(end.start) if end.start is not None else dict(start.next)


def continued(current: StreamOffsets, end: Mapping[TP, int]) -> StreamOffsets:
    """The end of a batch that continues from `current` (the stop marker carries over)."""
    return StreamOffsets(dict(end), None, current.tasks_commit)


def rebased(
    begin: Mapping[TP, int], end: Mapping[TP, int], tasks_commit: int | None
) -> StreamOffsets:
    """The end of a batch that starts over at `begin` (the group's offsets) after a stop."""
    return StreamOffsets(dict(end), dict(begin), tasks_commit)


# --- the connector in the config topic (pure) ---------------------------------------------------


@dataclass(frozen=True)
class ConnectorView:
    """What the config topic says about the connector, as far as its sink query cares."""

    exists: bool
    state: TargetState
    tasks_commit: int | None
    generation: int

    @property
    def running(self) -> bool:
        """Whether micro-batches may run (target state STARTED)."""
        return self.state is TargetState.STARTED


def connector_view(snapshot: ClusterConfigSnapshot, name: str) -> ConnectorView:
    """The connector's view; an unknown connector is STARTED (nothing tells it otherwise)."""
    return ConnectorView(
        exists=snapshot.contains(name),
        state=target_state(snapshot, name),
        tasks_commit=snapshot.latest_commit_offset(name),
        generation=snapshot.generation(name),
    )


def must_rebase(current: StreamOffsets, view: ConnectorView, stop_seen: bool) -> bool:
    """Whether the next batch starts from the group's offsets rather than from `current`.

    Yes after a stop: one this driver saw (`stop_seen`), or one recorded in the config topic
    after the commit the stream last started from the group at (also while the query was down).
    """
    return stop_seen or (
        view.tasks_commit is not None and view.tasks_commit != current.tasks_commit
    )


# --- options (pure) -----------------------------------------------------------------------------


@dataclass(frozen=True)
class SinkLifecycleConfig:
    """Where the sink connector `name` lives: worker settings, Kafka client settings, config."""

    name: str
    group_id: str
    config_topic: str
    status_topic: str
    kafka: dict[str, str]
    connector_config: dict[str, str] | None
    topics: InternalTopicSettings = field(default_factory=InternalTopicSettings)
    """How the config and status topics are created (Connect's `*.storage.*` options)."""
    """The config to register; None without `connector.class` (nothing is registered)."""
    providers: ConfigProviders = field(default_factory=ConfigProviders)
    """Resolve `kafka` with these (the config is registered with references unresolved)."""
    takeover: bool = False
    """Take the connector over from another driver that is alive (option `takeover`)."""


def connector_config(options: Mapping[str, Any] | DataSourceOptions) -> dict[str, str]:
    """The connector's own options: without `kafka.*`, worker (`config.providers*` too) and
    reader-only options; references unresolved."""
    return {
        key: str(value)
        for key, value in sorted(DataSourceOptions.read(options).rest.items())
        if key not in WORKER_CONFIG
        and key not in READER_ONLY_OPTIONS
        and not is_provider_option(key)
        and value is not None
    }


def parse_sink_lifecycle(
    options: Mapping[str, Any] | DataSourceOptions,
) -> SinkLifecycleConfig | None:
    """The lifecycle settings of a Kafka reader; None without a `name` (nothing to follow)."""
    read = DataSourceOptions.read(options)
    rest, kafka = read.rest, read.kafka
    name = str(rest.get("name") or "").strip()
    if not name:
        return None
    given = {k: v for k, v in rest.items() if k in WORKER_CONFIG}
    worker = WORKER_CONFIG.parse(given)
    config = connector_config(read) if rest.get("connector.class") else None
    if config is not None:
        config["name"] = name
    return SinkLifecycleConfig(
        name=name,
        group_id=worker["group.id"],
        config_topic=worker["config.storage.topic"],
        status_topic=worker["status.storage.topic"],
        kafka=kafka,
        connector_config=config,
        providers=read.checked_providers(),
        topics=InternalTopicSettings.from_values(worker, given),
        takeover=_takeover(rest.get(TAKEOVER)),
    )


def _takeover(value: Any) -> bool:
    """`takeover` read with its one definition; a `${provider:...}` reference is the reader's
    to resolve (`spark.kafka_stream.parse_kafka_stream`), False until then."""
    if value is None or has_reference(value):
        return False
    return bool(TAKEOVER_CONFIG.parse({TAKEOVER: value})[TAKEOVER])


# --- Kafka (driver I/O) -------------------------------------------------------------------------


class SinkTakenOverError(EosConnectError, RuntimeError):
    """Another driver took this query's sink connector over (`takeover=true`): it stops."""


class SinkRegistrationError(EosConnectError, RuntimeError):
    """The sink connector could not be written to the config topic."""


def register_connector(store: ConfigStore, name: str, config: Mapping[str, str]) -> bool:
    """Write `connector-<name>` unless the connector exists; returns whether it was written.

    The leader is claimed before the final check, so a connector created meanwhile (e.g.
    through the REST API) is seen and kept; a newer leader fencing this one means re-checking.
    """
    topic = getattr(store, "topic", "config.storage.topic")
    if store.read_to_end().contains(name):
        return False
    for attempt in range(1, LEADER_ATTEMPTS + 1):
        leader = store.leader()
        try:
            if store.read_to_end().contains(name):
                return False
            leader.put_connector_config(name, dict(config))
            log.info("registered sink connector %s in config topic %s", name, topic)
            return True
        except LeaderFencedError as error:
            log.warning("registering %s: leader fenced (attempt %d): %s", name, attempt, error)
        finally:
            leader.close()
    raise SinkRegistrationError(
        f"could not register sink connector {name} in config topic {topic} "
        f"(config.storage.topic): other leaders kept fencing this driver ({LEADER_ATTEMPTS} "
        "attempts)"
    )


class SinkLifecycle:
    """Driver: the sink connector behind one Kafka stream, read from the config topic."""

    def __init__(
        self,
        config: SinkLifecycleConfig,
        stores: tuple[ConfigStore, StatusStore] | None = None,
        heartbeat_s: float = HEARTBEAT_S,
        **clock: Any,
    ) -> None:
        """`stores`: the config and status stores (default: the Kafka topics of `config`);
        `clock`: `ConnectorOwner.claim`'s `now_ms`, `sleep` and `alive` (tests)."""
        self.config = config
        if config.connector_config is not None:  # a bad reference fails before the write
            config.providers.resolve(config.connector_config)
        self.configs, self.statuses = stores or self._kafka_stores(config)
        self._view: ConnectorView | None = None
        self._checked_at = 0.0
        self._stop_seen = False
        self.owner = ConnectorOwner(config.name, self.statuses, config.takeover, worker_id())
        """This driver as the connector's owner in the status topic."""
        self.claim(**clock)
        if config.connector_config is not None:
            register_connector(self.configs, config.name, config.connector_config)
        self.owner.start_heartbeat(heartbeat_s)

    @staticmethod
    def _kafka_stores(config: SinkLifecycleConfig) -> tuple[ConfigStore, StatusStore]:
        kafka = config.providers.resolve(config.kafka, prefix="kafka.")
        topics = config.topics
        configs = config_store_for(
            kafka, config.config_topic, config.group_id, topics.config_replication
        )
        statuses = KafkaStatusStore(kafka, config.status_topic)
        statuses.ensure_topic(
            topics.status_partitions, replication_factor=topics.status_replication
        )
        return configs, statuses

    @property
    def taken_over(self) -> str | None:
        """The driver that took the connector over (`takeover=true`) while this one ran it."""
        return self.owner.taken_over_by

    def claim(self, **clock: Any) -> None:
        """Refuse to start while another live driver runs the connector, unless `takeover`
        (`ConnectorOwner.claim`, which also clears the task statuses an earlier run left;
        `clock`: its `now_ms`, `sleep`, `alive` in tests)."""
        self.owner.claim(**clock)

    def beat(self) -> None:
        """Re-write the connector's RUNNING or PAUSED status: this driver is alive; unless a
        driver that started later took the connector over (`ConnectorOwner.beat`): then this
        query stops at its next micro-batch (`view`)."""
        self.owner.beat()

    def view(self, force: bool = False) -> ConnectorView:
        """The connector's view, re-read at most every `STATE_CHECK_INTERVAL_S` unless forced.

        A STOPPED state seen here makes the next running batch start from the group's offsets.
        """
        if self.taken_over is not None:
            raise SinkTakenOverError(
                f"connector {self.config.name} was taken over by driver {self.taken_over} "
                "(takeover=true): this query stops; the other one runs the connector"
            )
        fresh = time.monotonic() - self._checked_at < STATE_CHECK_INTERVAL_S
        if self._view is not None and fresh and not force:
            return self._view
        view = connector_view(self.configs.read_to_end(), self.config.name)
        self._checked_at = time.monotonic()
        if view.state is TargetState.STOPPED:
            self._stop_seen = True
        if view.exists:
            self.owner.follow(view.state, view.generation)
        self._view = view
        return view

    def rebase_due(self, current: StreamOffsets, view: ConnectorView) -> bool:
        """Whether the next batch starts from the group's offsets (see `must_rebase`); never
        while the connector is PAUSED or STOPPED."""
        return view.running and must_rebase(current, view, self._stop_seen)

    def rebased(self) -> None:
        """A batch starting from the group's offsets was planned."""
        self._stop_seen = False

    def close(self) -> None:
        """The query stops: a running connector is no longer assigned to anyone, its running
        tasks neither; FAILED, with the failed tasks kept, when a task failed for good
        (`ConnectorOwner.leave`; its tasks report under generation 0, so any failure counts:
        the claim cleared an earlier run's)."""
        try:
            self.owner.leave()
        finally:
            self.statuses.close()
