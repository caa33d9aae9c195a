"""References in sink options: the connector starts with resolved values, the plan shipped to
executors holds them unresolved, and the task resolves them before it starts."""

from __future__ import annotations

import re
from pathlib import Path
from typing import ClassVar

import pytest

from spark_eos_connect.api.config import ConfigDef
from spark_eos_connect.api.sink import SinkConnector, SinkRecord, SinkTask
from spark_eos_connect.errors import ConfigError
from spark_eos_connect.sink.live_task import LiveSinkTask, SinkBatch
from spark_eos_connect.sink.options import parse_sink_options
from spark_eos_connect.sink.plan import plan_sink
from tests.unit.sink.test_live_task import MemoryInput

SECRET = "s3cr3t-sink-value"


class TokenTask(SinkTask):
    started: ClassVar[list[dict[str, str]]] = []

    def start(self, props: dict[str, str]) -> None:
        TokenTask.started.append(dict(props))

    def put(self, records: list[SinkRecord]) -> None:
        pass

    def stop(self) -> None:
        pass


class TokenConnector(SinkConnector):
    started: ClassVar[list[dict[str, str]]] = []

    def config_def(self) -> ConfigDef:
        return ConfigDef()

    def start(self, props: dict[str, str]) -> None:
        TokenConnector.started.append(dict(props))
        self.props = props

    def stop(self) -> None:
        pass

    def task_class(self) -> type[SinkTask]:
        return TokenTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [{**self.props, "task": str(i)} for i in range(max_tasks)]


def test_sink_plan_ships_references_and_tasks_start_resolved(tmp_path: Path) -> None:
    secrets = tmp_path / "s.properties"
    secrets.write_text(f"token={SECRET}\n")
    reference = f"${{file:{secrets}:token}}"
    parsed = parse_sink_options(
        {
            "name": "tok",
            "connector.class": "x.Y",
            "tasks.max": "2",
            "api.token": reference,
            "kafka.sasl.password": f"${{file:{secrets}:token}}",
            "config.providers": "file",
            "config.providers.file.param.allowed.paths": str(tmp_path),
        }
        | {"kafka.bootstrap.servers": "b:9092"}
    )
    TokenConnector.started.clear()
    TokenTask.started.clear()

    plan = plan_sink(parsed, TokenConnector())
    LiveSinkTask(plan, SinkBatch(1, 0, "run-1", 1, ()), MemoryInput()).close()

    assert parsed.connector_props["api.token"] == reference
    assert not any(k.startswith("config.providers") for k in parsed.connector_props)
    assert TokenConnector.started[0]["api.token"] == SECRET
    assert [c["api.token"] for c in plan.task_configs] == [reference, reference]
    assert plan.kafka["sasl.password"] == reference
    assert plan.resolved_kafka()["sasl.password"] == SECRET
    assert TokenTask.started == [{**parsed.connector_props, "api.token": SECRET, "task": "1"}]
    assert SECRET not in repr(plan)


def test_bad_sink_reference_fails_naming_it_before_the_connector_starts(tmp_path: Path) -> None:
    reference = f"${{file:{tmp_path}/missing.properties:token}}"
    parsed = parse_sink_options(
        {"name": "t", "connector.class": "x.Y", "api.token": reference}
        | {"kafka.bootstrap.servers": "b:9092"}
    )
    TokenConnector.started.clear()

    expected = re.escape(f"Cannot resolve {reference} in option api.token: cannot read")
    with pytest.raises(ConfigError, match=expected):
        plan_sink(parsed, TokenConnector())
    assert TokenConnector.started == []
