"""`sink.plan`: the driver starts the connector once and plans its task configs."""

from __future__ import annotations

import logging

import pytest

from spark_eos_connect.api.config import ConfigDef, ConfigType, InvalidConfigError
from spark_eos_connect.connectors.file_stream import FileStreamSinkConnector
from spark_eos_connect.sink.options import parse_sink_options, unknown_sink_options
from spark_eos_connect.sink.plan import plan_sink
from tests.unit.sink.test_live_task import RecordingConnector


def test_sink_options_give_connector_props_and_task_configs() -> None:
    parsed = parse_sink_options(
        {
            "name": "rec",
            "connector.class": "x.Y",
            "tasks.max": "2",
            "topics": "t",
            "errors.tolerance": "all",
            "kafka.bootstrap.servers": "b:9092",
        }
    )

    sink_plan = plan_sink(parsed, RecordingConnector())

    assert parsed.connector_props == {
        "topics": "t",
        "name": "rec",
        "connector.class": "x.Y",
        "tasks.max": "2",
    }
    assert [c["marker"] for c in sink_plan.task_configs] == ["task-0", "task-1"]
    assert sink_plan.task_class.endswith("RecordingTask")
    assert sink_plan.group_id == "connect-rec"
    assert sink_plan.errors.tolerate_all


class PathConnector(RecordingConnector):
    """A sink connector whose `path` is required (as DeltaSink's location is)."""

    def config_def(self) -> ConfigDef:
        return ConfigDef().define("path", ConfigType.STRING, importance="high", doc="Where.")


TYPO_OPTIONS = {
    "name": "typo",
    "connector.class": "x.Y",
    "topics": "orders",
    "startingOffsets": "earliest",
    "checkpointLocation": "/tmp/ck",
    "kafka.bootstrap.servers": "b:9092",
}


def test_a_typo_of_a_required_sink_option_is_named_first_with_a_did_you_mean() -> None:
    parsed = parse_sink_options({**TYPO_OPTIONS, "pth": "/tmp/table"})

    with pytest.raises(InvalidConfigError) as caught:
        plan_sink(parsed, PathConnector())

    assert list(caught.value.problems) == ["pth", "path"]
    lines = str(caught.value).splitlines()
    assert lines[1] == (
        '  - Unknown option "pth": defined neither by the framework nor by PathConnector '
        '(did you mean "path"?); the connector ignores it'
    )
    assert lines[2].startswith('  - Missing required configuration "path"')


def test_a_typo_of_an_optional_sink_option_is_logged_with_a_did_you_mean(
    caplog: pytest.LogCaptureFixture,
) -> None:
    parsed = parse_sink_options({**TYPO_OPTIONS, "connector.class": "FileStreamSink", "fiel": "/f"})

    with caplog.at_level(logging.WARNING, logger="spark_eos_connect.sink.plan"):
        plan_sink(parsed, FileStreamSinkConnector())

    assert [r.getMessage() for r in caplog.records] == [
        'Unknown option "fiel": defined neither by the framework nor by '
        'FileStreamSinkConnector (did you mean "file"?); the connector ignores it'
    ]


def test_options_of_the_reader_spark_and_the_worker_are_not_unknown() -> None:
    props = {
        "name": "n",
        "topics": "t",
        "startingoffsets": "latest",
        "checkpointlocation": "/ck",
        "group.id": "g",
        "file": "/f",
        "flie": "/f",
    }

    unknown = unknown_sink_options(props, "FileStreamSinkConnector", ["file", "topics"])

    assert list(unknown) == ["flie"]
    assert unknown_sink_options(props, "Anything", []) == {}
