"""The driver's connector lifecycle: failures become Connect's states, not exceptions."""

from __future__ import annotations

from typing import Any

from spark_eos_connect.api.config import ConfigDef
from spark_eos_connect.api.source import SourceConnector, SourceTask
from spark_eos_connect.runtime.lifecycle.connector_lifecycle import ConnectorPhase, ManagedConnector


class Scripted(SourceConnector):
    """A connector whose start/stop/task_configs misbehave on demand; counts its calls."""

    fail_start = False
    fail_stop = False
    tasks = 2
    instances: list[Scripted] = []

    def __init__(self) -> None:
        self.started = self.stopped = 0
        Scripted.instances.append(self)

    def config_def(self) -> ConfigDef:
        return ConfigDef()

    def start(self, props: dict[str, str]) -> None:
        self.started += 1
        if Scripted.fail_start:
            raise RuntimeError("cannot reach the source system")

    def stop(self) -> None:
        self.stopped += 1
        if Scripted.fail_stop:
            raise RuntimeError("cannot close the session")

    def task_class(self) -> type[SourceTask]:
        raise NotImplementedError

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [{"task": str(t)} for t in range(min(max_tasks, Scripted.tasks))]


def managed(max_tasks: int = 4, **behaviour: Any) -> ManagedConnector:
    Scripted.fail_start = behaviour.get("fail_start", False)
    Scripted.fail_stop = behaviour.get("fail_stop", False)
    Scripted.tasks = behaviour.get("tasks", 2)
    Scripted.instances = []
    return ManagedConnector(Scripted, {"name": "c"}, max_tasks)


def test_start_initializes_a_fresh_instance_and_asks_for_task_configs() -> None:
    connector = managed(max_tasks=1)
    assert connector.start()
    assert connector.phase is ConnectorPhase.RUNNING
    assert connector.task_configs == [{"task": "0"}]
    assert connector.connector is Scripted.instances[0]
    assert Scripted.instances[0].context is not None


def test_a_start_that_raises_is_failed_with_its_trace() -> None:
    connector = managed(fail_start=True)
    assert not connector.start()
    assert connector.phase is ConnectorPhase.FAILED
    assert connector.trace is not None and "cannot reach the source system" in connector.trace
    assert connector.task_configs is None


def test_no_task_configs_is_a_failure() -> None:
    connector = managed(tasks=0)
    assert not connector.start()
    assert connector.trace is not None and "no task configs" in connector.trace


def test_an_instance_whose_start_raised_is_never_stopped_one_whose_task_configs_failed_is() -> None:
    connector = managed(fail_start=True)
    assert not connector.start()
    connector.stop()
    assert Scripted.instances[0].stopped == 0  # never started: a Connect worker does not stop it

    connector = managed(tasks=0)
    assert not connector.start()
    connector.stop()
    assert Scripted.instances[0].stopped == 1  # started: its resources are released


def test_an_error_reported_from_a_background_thread_fails_the_connector_but_keeps_tasks() -> None:
    connector = managed()
    connector.start()
    assert not connector.check_reported_error()
    Scripted.instances[0].context.raise_error(ValueError("lost the source"))
    Scripted.instances[0].context.raise_error(ValueError("second, ignored"))
    assert connector.check_reported_error()
    assert connector.phase is ConnectorPhase.FAILED
    assert connector.trace is not None and "lost the source" in connector.trace
    assert connector.task_configs == [{"task": "0"}, {"task": "1"}]
    assert not connector.check_reported_error()  # reported once


def test_a_stop_that_raises_still_ends_stopped() -> None:
    connector = managed(fail_stop=True)
    connector.start()
    connector.stop()
    assert connector.phase is ConnectorPhase.STOPPED
    assert connector.trace is None and connector.task_configs is None
    assert Scripted.instances[0].stopped == 1


def test_stopping_a_failed_connector_stops_it_and_a_new_start_uses_a_fresh_instance() -> None:
    connector = managed(fail_stop=True)
    connector.start()
    Scripted.instances[0].context.raise_error(RuntimeError("boom"))
    connector.check_reported_error()
    connector.stop()
    assert connector.phase is ConnectorPhase.STOPPED
    Scripted.fail_stop = False
    assert connector.start()
    assert connector.phase is ConnectorPhase.RUNNING and connector.trace is None
    assert len(Scripted.instances) == 2 and Scripted.instances[1].started == 1


def test_restart_stops_the_old_instance_first() -> None:
    connector = managed()
    connector.start()
    assert connector.restart()
    first, second = Scripted.instances
    assert (first.stopped, second.started, second.stopped) == (1, 1, 0)


def test_an_error_reported_by_a_stopped_instance_is_ignored() -> None:
    connector = managed()
    connector.start()
    context = Scripted.instances[0].context
    connector.stop()
    context.raise_error(RuntimeError("late"))
    assert not connector.check_reported_error()
    assert connector.phase is ConnectorPhase.STOPPED


def test_a_reconfiguration_request_counts_only_when_task_configs_change() -> None:
    connector = managed()
    connector.start()
    context = Scripted.instances[0].context
    context.request_task_reconfiguration()
    assert not connector.take_reconfiguration_request()  # same configs
    Scripted.tasks = 3
    context.request_task_reconfiguration()
    assert connector.take_reconfiguration_request()
    assert connector.task_configs == [{"task": str(t)} for t in range(3)]
    assert not connector.take_reconfiguration_request()
