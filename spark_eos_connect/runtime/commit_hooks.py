"""The commit hooks a process runs with: none, unless a job installed some (the crash tests do).

The job's driver installs hooks once, before Spark starts (`install_from_environment`: the
class named in `EOSCONNECT_COMMIT_HOOKS`, its `from_environment(environ)`, loaded as a plugin;
nothing when the variable is unset). Plans sent to executors carry the installed hooks, so
executor code never looks for them. Spark runs a data source's driver-side calls (planning,
commit) in Python processes of its own, which inherit the job's environment: there
`installed()` builds the hooks once from the same class, and `EOSCONNECT_DRIVER_PGID` tells
them the driver's process group. Nothing here imports test code: a test arms hooks by naming
their class in the environment of the job it starts.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Protocol

from spark_eos_connect.plugins.loader import load_class
from spark_eos_connect.ports import CommitHooks

HOOKS_ENV = "EOSCONNECT_COMMIT_HOOKS"
"""`package.module.Class` of the hooks a job installs, for its driver and Spark's own Python
processes."""

DRIVER_GROUP_ENV = "EOSCONNECT_DRIVER_PGID"
"""The process group of the job's driver, recorded by `install_from_environment` for hooks built
in Spark's own Python processes (a crash there takes the driver down too)."""


class NoHooks:
    """Production: every point passes."""

    def reached(self, point: str, batch_id: int | None) -> None:
        """Nothing happens."""

    def armed(self, point: str) -> bool:
        """Never."""
        return False


class HooksFactory(Protocol):
    """What `EOSCONNECT_COMMIT_HOOKS` names: a class that builds hooks from the environment."""

    @classmethod
    def from_environment(cls, environ: Mapping[str, str]) -> CommitHooks | None: ...


NO_HOOKS: CommitHooks = NoHooks()
_installed: CommitHooks | None = None


def install(hooks: CommitHooks) -> None:
    """Make `hooks` the ones this process's commit paths and new plans use."""
    global _installed
    _installed = hooks


def install_from_environment() -> CommitHooks:
    """Driver, before Spark starts: install the hooks `EOSCONNECT_COMMIT_HOOKS` names (none when
    it is unset), recording this process's group for Spark's processes, which inherit the
    environment. Returns the hooks installed."""
    if os.environ.get(HOOKS_ENV):
        os.environ[DRIVER_GROUP_ENV] = str(os.getpgrp())
    hooks = _from_environment(os.environ)
    install(hooks)
    return hooks


def installed() -> CommitHooks:
    """The hooks installed in this process: `install`ed, else the ones the environment names
    (read once), else `NO_HOOKS`."""
    global _installed
    if _installed is None:
        _installed = _from_environment(os.environ)
    return _installed


def _from_environment(environ: Mapping[str, str]) -> CommitHooks:
    dotted = environ.get(HOOKS_ENV)
    if not dotted:
        return NO_HOOKS
    factory: type[HooksFactory] = load_class(dotted, f"commit hooks class ({HOOKS_ENV})")
    return factory.from_environment(environ) or NO_HOOKS
