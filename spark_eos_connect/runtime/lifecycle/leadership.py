"""The driver as the Connect leader of its connector: start a new generation in the config topic
(KIP-618 §5): task configs, fencing of every earlier task producer, then the task-count record."""

from __future__ import annotations

import logging
import os
import socket
import time
from collections.abc import Callable, Mapping

from spark_eos_connect.errors import EosConnectError
from spark_eos_connect.ports import ConfigStore, ConfigWriter, LeaderFencedError
from spark_eos_connect.protocol.config_records import ClusterConfigSnapshot
from spark_eos_connect.protocol.generations import start_generation

log = logging.getLogger(__name__)

LEADER_ATTEMPTS = 5


def worker_id() -> str:
    """How this driver names itself in status records (`host:pid`, like Connect's host:port)."""
    return f"{socket.gethostname()}:{os.getpid()}"


class GenerationStartError(EosConnectError, RuntimeError):
    """The driver could not start a new generation of its connector's tasks."""


def begin_generation(
    store: ConfigStore,
    name: str,
    connector_config: Mapping[str, str],
    task_configs: list[dict[str, str]],
    fence: Callable[[int], None],
    exactly_once: bool,
    timeout_s: float = 60.0,
    leader: ConfigWriter | None = None,
) -> tuple[ConfigWriter, ClusterConfigSnapshot]:
    """Write a new generation as leader; returns the leader and the snapshot that shows it.

    Steps: claim leadership unless `leader` still holds it (fencing older leaders and aborting
    their open transactions, so the read below neither waits on them nor misses their last
    write); read to the end; write the connector config if it changed and the task configs;
    fence every producer of the earlier generations; write the task-count record and read until
    it is visible after the new task configs. A leader that is fenced midway claims again,
    re-reads the topic and starts over, so the topic never holds a task-count record that a
    newer leader did not decide.
    """
    for attempt in range(1, LEADER_ATTEMPTS + 1):
        if leader is None or leader.fenced:
            leader = store.leader(timeout_s)
        snapshot = store.read_to_end(timeout_s)
        try:
            plan = start_generation(snapshot, name, dict(connector_config), task_configs)
            if plan.write_connector_config:
                leader.put_connector_config(name, dict(connector_config))
            leader.put_task_configs(name, task_configs)
            if exactly_once:
                for task in range(plan.fence_task_count):
                    fence(task)
            return leader, _write_task_count(store, leader, name, len(task_configs), timeout_s)
        except LeaderFencedError as error:
            log.warning("leader for %s fenced (attempt %d): %s", name, attempt, error)
            leader.close()
            leader = None
    raise GenerationStartError(
        f"could not start a new generation of connector {name}: another leader kept fencing "
        f"this driver ({LEADER_ATTEMPTS} attempts)"
    )


def _write_task_count(
    store: ConfigStore, leader: ConfigWriter, name: str, count: int, timeout_s: float
) -> ClusterConfigSnapshot:
    """Write the task-count record, retrying until it reads back after the latest task configs."""
    deadline = time.monotonic() + timeout_s
    while True:
        leader.put_task_count(name, count)
        snapshot = store.read_to_end(timeout_s)
        if snapshot.task_count_record_follows_latest_task_configs(name):
            return snapshot
        if time.monotonic() > deadline:
            raise GenerationStartError(
                f"the task-count record of connector {name} did not become visible in the "
                f"config topic within {timeout_s:.0f}s"
            )
