"""The config topic in Kafka: an incremental read_committed replay and the leader's writer.

`KafkaConfigStore` replays the one-partition, compacted config topic into a
`ClusterConfigSnapshot` (formats in `protocol.config_records`) and hands out the `ConfigLeader`,
the only writer. The leader is a transactional producer with id ``connect-cluster-<group.id>``:
claiming it fences every older leader (KIP-618's zombie leader), and every write is its own
transaction, so a fenced leader cannot add anything to the topic, not even half a write.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from typing import Any

from spark_eos_connect.kafka.clients import KafkaTimeoutError, TopicTail
from spark_eos_connect.kafka.errors import missing_acl
from spark_eos_connect.kafka.internal_topics import InternalTopic, ensure_internal_topic
from spark_eos_connect.kafka.producers import is_fenced, produce, transactional_producer
from spark_eos_connect.ports import ConfigReadTimeoutError, ConfigStoreError, LeaderFencedError
from spark_eos_connect.protocol.config_records import (
    ClusterConfigSnapshot,
    ConfigWrites,
)

log = logging.getLogger(__name__)

__all__ = [
    "ConfigLeader",
    "ConfigReadTimeoutError",
    "ConfigStoreError",
    "ConfigTopicError",
    "ConfigWriteError",
    "KafkaConfigStore",
    "LeaderFencedError",
    "leader_transactional_id",
]

CONFIG_REPLICATION_OPTION = "config.storage.replication.factor"
LEADER_ID_PREFIX = "connect-cluster-"


class ConfigTopicError(ConfigStoreError, ValueError):
    """The config topic exists but is not usable (e.g. more than one partition)."""


class ConfigWriteError(ConfigStoreError):
    """A write to the config topic failed and was aborted: nothing of it is visible."""


def leader_transactional_id(group_id: str) -> str:
    """``connect-cluster-<group.id>``: the config-topic leader's transactional id."""
    return LEADER_ID_PREFIX + group_id


Record = tuple[str, bytes | None]


class KafkaConfigStore:
    """The config topic `topic` of the Connect cluster `group_id`, read through `kafka`.

    `kafka` holds librdkafka settings (``bootstrap.servers`` ...). Thread-safe.
    """

    def __init__(self, kafka: Mapping[str, Any], topic: str, group_id: str) -> None:
        self.kafka = dict(kafka)
        if "transactional.id" in self.kafka:
            del self.kafka["transactional.id"]
            log.warning(
                "Ignoring the transactional.id setting: the config-topic leader always uses %r "
                "so that older leaders are fenced (KIP-618)",
                leader_transactional_id(group_id),
            )
        self.topic = topic
        self.group_id = group_id
        self._lock = threading.Lock()
        self._snapshot = ClusterConfigSnapshot()
        self._position: int | None = None
        self._tail: TopicTail | None = None

    def ensure_topic(self, timeout_s: float = 30.0, replication_factor: int | None = None) -> bool:
        """Create the compacted one-partition topic (`config.storage.replication.factor`
        `replication_factor`, None for Connect's default), or check the existing one.

        Returns whether it was created; raises `ConfigTopicError` if it has several partitions.
        """
        spec = InternalTopic(self.topic, 1, CONFIG_REPLICATION_OPTION, replication_factor)
        ensured = ensure_internal_topic(self.kafka, spec, timeout_s)
        partitions = ensured.partitions
        if partitions != 1:
            raise ConfigTopicError(
                f"Config topic {self.topic!r} (config.storage.topic) has {partitions} partitions; "
                "it must have exactly 1 so that every reader sees config records in one order "
                "(Kafka Connect refuses such a topic too). Point config.storage.topic at a "
                "one-partition compacted topic."
            )
        return ensured.created

    def read_to_end(self, timeout_s: float = 30.0) -> ClusterConfigSnapshot:
        """Catch up with the topic's end, waiting for open transactions; the live snapshot.

        Reads only records written since the previous call. Raises `ConfigReadTimeoutError`
        when the end cannot be reached within `timeout_s` (e.g. a transaction stays open).
        """
        with self._lock:
            if self._tail is None:
                self._tail = TopicTail(self.kafka, self.topic)
            try:
                records = self._tail.read_new(timeout_s, wait_for_open_transactions=True)
            except KafkaTimeoutError as exc:
                raise ConfigReadTimeoutError(
                    f"Could not read the config topic {self.topic!r} to its end within "
                    f"{timeout_s:g}s: {exc}"
                ) from exc
            for record in records:
                key = _decode_key(record.key)
                if key is None:
                    self._snapshot.skipped += 1
                else:
                    self._snapshot.apply(key, record.value, record.offset)
                self._position = record.offset + 1
            return self._snapshot

    def close(self) -> None:
        """Release the reader's Kafka clients (a later `read_to_end` makes new ones)."""
        with self._lock:
            if self._tail is not None:
                self._tail.close()
                self._tail = None

    @property
    def snapshot(self) -> ClusterConfigSnapshot:
        """The snapshot as of the last `read_to_end` (not refreshed by this property)."""
        return self._snapshot

    def leader(self, timeout_s: float = 30.0) -> ConfigLeader:
        """Claim the leader's transactional id, fencing every older leader of this cluster."""
        transactional_id = leader_transactional_id(self.group_id)
        producer = transactional_producer(self.kafka, transactional_id, timeout_s)
        return ConfigLeader(producer, self.topic, transactional_id, timeout_s, self.kafka)


def _decode_key(raw: bytes | None) -> str | None:
    if raw is None:
        return None
    try:
        return bytes(raw).decode("utf-8")
    except UnicodeDecodeError:
        return None


def _kafka_error(exc: BaseException) -> Any:
    """The librdkafka `KafkaError` carried by `exc`, or None."""
    args = getattr(exc, "args", ())
    return args[0] if args and hasattr(args[0], "code") else None


class ConfigLeader(ConfigWrites):
    """The only writer of the config topic: one transaction per write (KIP-618).

    Once fenced by a newer leader every call raises `LeaderFencedError`; the caller must read
    the topic to its end again and decide anew (with a new leader if it still should write).
    """

    def __init__(
        self,
        producer: Any,
        topic: str,
        transactional_id: str,
        timeout_s: float,
        kafka: Mapping[str, Any] | None = None,
    ) -> None:
        self._producer = producer
        self._kafka = dict(kafka or {})  # to name the principal when an ACL is missing
        self.topic = topic
        self.transactional_id = transactional_id
        self._timeout_s = timeout_s
        self._fenced = False
        self._broken: str | None = None
        self._lock = threading.Lock()

    @property
    def fenced(self) -> bool:
        """Whether a newer leader has fenced this one."""
        return self._fenced

    def close(self) -> None:
        """Release the producer (it stays fenced-safe: nothing is left open). Never raises:
        every write already ended its transaction, so what librdkafka reports here (e.g. a
        fatal INVALID_TXN_STATE after a refused write) only echoes the failure that write
        raised, which callers closing in a `finally` must not have replaced."""
        try:
            self._producer.flush(0)
        except Exception as exc:  # librdkafka raises fatal errors from any call (even SystemError)
            log.debug("Closing config-topic leader %s: %s", self.transactional_id, exc)

    def _write(self, records: list[tuple[str, bytes | None]]) -> None:
        """Write `records` in one transaction of the leader's producer."""
        keys = ", ".join(key for key, _ in records)
        with self._lock:
            if self._fenced:
                raise LeaderFencedError(self._fenced_message(keys))
            if self._broken is not None:
                raise ConfigWriteError(f"The config-topic leader is unusable: {self._broken}")
            try:
                self._producer.begin_transaction()
                for key, value in records:
                    produce(self._producer, self.topic, value, key.encode("utf-8"), partition=0)
                self._producer.commit_transaction(self._timeout_s)
            except Exception as exc:
                self._fail(exc, keys)
            log.debug("Wrote %s to config topic %s", keys, self.topic)

    def _fail(self, exc: Exception, keys: str) -> None:
        error = _kafka_error(exc)
        if error is not None and is_fenced(exc):  # type: ignore[arg-type]
            self._fenced = True
            raise LeaderFencedError(self._fenced_message(keys)) from exc
        if error is not None and error.fatal():
            self._broken = str(exc)
        else:
            try:
                self._producer.abort_transaction(self._timeout_s)
            except Exception as abort_exc:
                self._broken = f"aborting after {exc} failed: {abort_exc}"
        denied = missing_acl(exc, "Write and Describe", self.topic, self._kafka)
        raise ConfigWriteError(
            f"Writing {keys} to config topic {self.topic!r} failed and was aborted: {denied or exc}"
        ) from exc

    def _fenced_message(self, keys: str) -> str:
        return (
            f"Not writing {keys}: this config-topic leader ({self.transactional_id}) was fenced by "
            "a newer leader; read the config topic to its end and decide again"
        )


def config_store_for(
    kafka: Mapping[str, Any], topic: str, group_id: str, replication_factor: int | None = None
) -> KafkaConfigStore:
    """A config store whose topic exists (created compacted with one partition and
    `replication_factor` replicas, None for Connect's default, if absent)."""
    store = KafkaConfigStore(kafka, topic, group_id)
    store.ensure_topic(replication_factor=replication_factor)
    return store
