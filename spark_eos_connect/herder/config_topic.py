"""`ConfigTopic`: the config topic as the herder's actions use it.

Every action reads the topic to its end first (a `ClusterConfigSnapshot`); writes go through the
config-topic leader (``connect-cluster-<group.id>``), claimed on first use. A leader fenced by a
newer one is dropped: the action reads the topic again and decides again, once. One lock
serialises the herder's actions.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TypeVar

from spark_eos_connect.errors import EosConnectError
from spark_eos_connect.herder.errors import ConflictError, HerderTimeoutError, NotFoundError
from spark_eos_connect.ports import (
    ConfigReadTimeoutError,
    ConfigStore,
    ConfigWriter,
    LeaderFencedError,
)
from spark_eos_connect.protocol.config_records import ClusterConfigSnapshot

log = logging.getLogger(__name__)

T = TypeVar("T")
Action = Callable[[ClusterConfigSnapshot, ConfigWriter], T]
"""A write: decides on a fresh snapshot, writes with the leader."""


class ConfigTopic:
    """Snapshots of `store` read within `timeout_s`, and writes through its leader."""

    def __init__(self, store: ConfigStore, timeout_s: float) -> None:
        self.store = store
        self.timeout_s = timeout_s
        self.lock = threading.RLock()
        """Held by every action (re-entrant: an action may call another's reads)."""
        self._leader: ConfigWriter | None = None

    def snapshot(self) -> ClusterConfigSnapshot:
        """The topic read to its end; `HerderTimeoutError` if that takes too long."""
        try:
            return self.store.read_to_end(self.timeout_s)
        except ConfigReadTimeoutError as exc:
            raise HerderTimeoutError(str(exc)) from exc

    @staticmethod
    def connector_config(snapshot: ClusterConfigSnapshot, name: str) -> dict[str, str | None]:
        """The connector's config in `snapshot`; `NotFoundError` if it has none."""
        config = snapshot.connector_config(name)
        if config is None:
            raise NotFoundError(f"Connector {name} not found")
        return config

    def write(self, action: Action[T]) -> T:
        """Run `action` on a fresh snapshot with the leader; re-read and retry once if fenced."""
        with self.lock:
            for attempt in range(2):
                snapshot = self.snapshot()
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
            return self.store.leader(self.timeout_s)
        except EosConnectError:
            raise
        except Exception as exc:  # librdkafka: init_transactions timed out or was refused
            raise HerderTimeoutError(
                f"Could not claim the config-topic leader's transactional id: {exc}"
            ) from exc

    def close(self) -> None:
        """Release the leader's producer and the topic's reader."""
        with self.lock:
            if self._leader is not None:
                self._leader.close()
                self._leader = None
            self.store.close()
