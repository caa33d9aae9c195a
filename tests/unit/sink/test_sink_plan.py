"""`sink.plan`: the driver starts the connector once and plans its task configs."""

from __future__ import annotations

from spark_eos_connect.sink.options import parse_sink_options
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
