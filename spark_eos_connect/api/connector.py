"""What every connector and task implements, sources and sinks alike (Connect's `Connector`/`Task`).

A `Connector` runs on the Spark driver: it validates its configuration and splits the work into task
configurations. Each `Task` runs on an executor (one Spark input partition or writer per task).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

from spark_eos_connect.api.config import ConfigDef, ConfigValueReport
from spark_eos_connect.errors import EosConnectError
from spark_eos_connect.version import __version__

__all__ = ["Connector", "ConnectorContext", "Task"]


@runtime_checkable
class ConnectorContext(Protocol):
    """What the runtime offers a running connector (driver side)."""

    def request_task_reconfiguration(self) -> None:
        """Ask the runtime to call `task_configs` again because the work to split has changed."""

    def raise_error(self, error: BaseException) -> None:
        """Report an unrecoverable error from a background thread; the connector becomes FAILED."""


class Task(ABC):
    """Common base of `SourceTask` and `SinkTask` (executor side)."""

    def version(self) -> str:
        """The task's version; by default the package version."""
        return __version__

    @abstractmethod
    def start(self, props: dict[str, str]) -> None:
        """Start with one of the configurations the connector's `task_configs` returned."""

    @abstractmethod
    def stop(self) -> None:
        """Release resources; may be called from another thread while the task is blocked."""


class Connector(ABC):
    """Base of `SourceConnector` and `SinkConnector` (driver side)."""

    _context: ConnectorContext | None = None

    def version(self) -> str:
        """The connector's version; by default the package version."""
        return __version__

    def initialize(self, context: ConnectorContext) -> None:
        """Called once by the runtime before `start`."""
        self._context = context

    @property
    def context(self) -> ConnectorContext:
        """The context given to `initialize`."""
        if self._context is None:
            raise EosConnectError(f"{type(self).__name__} has not been initialized")
        return self._context

    @abstractmethod
    def config_def(self) -> ConfigDef:
        """The connector's own options (not the framework's such as `name` or `tasks.max`)."""

    def validate(self, props: Mapping[str, Any]) -> list[ConfigValueReport]:
        """One report per option; by default checks `props` against `config_def()`."""
        return self.config_def().validate(props)

    @abstractmethod
    def start(self, props: dict[str, str]) -> None:
        """Start with the full connector configuration."""

    @abstractmethod
    def stop(self) -> None:
        """Stop; no further `task_configs` calls follow."""

    @abstractmethod
    def task_class(self) -> type[Task]:
        """The task class that runs this connector's work."""

    @abstractmethod
    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        """Up to `max_tasks` task configurations, one per task to run."""
