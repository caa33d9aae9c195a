"""`WorkerSettings`: the worker-level options the herder needs (Connect's names)."""

from __future__ import annotations

import socket
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from spark_eos_connect.herder.ownership import HERDER_WORKER_SUFFIX
from spark_eos_connect.herder.plugins import PLUGIN_CONFIG, PLUGIN_PACKAGES, plugin_packages
from spark_eos_connect.runtime.config.framework_config import WORKER_CONFIG, WorkerConfig


@dataclass(frozen=True)
class WorkerSettings(WorkerConfig):
    """The worker-level options the herder needs (Connect's names, this project's defaults)."""

    offsets_partitions: int = 25
    worker_id: str = field(default_factory=lambda: socket.gethostname() + HERDER_WORKER_SUFFIX)
    plugin_packages: tuple[str, ...] = ()
    """``plugin.packages``: packages whose connector classes requests may name (besides the
    shipped connectors); nothing else is imported."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "plugin_packages", plugin_packages(self.plugin_packages))

    @classmethod
    def from_options(cls, options: Mapping[str, Any]) -> WorkerSettings:
        """Parse ``group.id``, ``config.storage.topic`` ..., ``plugin.packages`` (others are
        ignored)."""
        given = {k: v for k, v in options.items() if k in WORKER_CONFIG}
        values = WORKER_CONFIG.parse(given)
        own = PLUGIN_CONFIG.parse(options)
        return cls(
            **WorkerConfig.fields_from(values, given),
            offsets_partitions=values["offset.storage.partitions"],
            plugin_packages=tuple(own[PLUGIN_PACKAGES]),
        )
