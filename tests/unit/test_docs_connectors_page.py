"""The connector examples of `docs/connectors/index.md`, run as written: the source counts down
per task and resumes from its stored offset; the sink appends values and commits what it flushed."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from spark_eos_connect.api import (
    InMemoryOffsetStorageReader,
    SinkRecord,
    SinkTaskContext,
    SourceTaskContext,
    TopicPartition,
)

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "connectors" / "index.md"


def load_readme_helper() -> ModuleType:
    """`tests/integration/docs/readme.py` (pure Python), loaded by path."""
    path = REPO / "tests" / "integration" / "docs" / "readme.py"
    spec = importlib.util.spec_from_file_location("_readme_snippets", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


readme = load_readme_helper()


def block(first_line: str) -> dict[str, Any]:
    """Execute the page's Python block whose first line is `first_line`; its namespace."""
    found = readme.snippet(f"```python {first_line}", PAGE.read_text())
    namespace: dict[str, Any] = {}
    exec(compile(found.text, f"{PAGE.name}[{first_line}]", "exec"), namespace)
    return namespace


def test_source_example_counts_down_and_resumes() -> None:
    example = block("from spark_eos_connect.api import (")
    connector = example["CountdownConnector"]()
    assert connector.validate({"topic": "t", "start": "3"})  # one report per option
    assert [r for r in connector.validate({"start": "-1"}) if r.errors]  # topic missing, start < 0
    connector.start({"topic": "t", "start": "3"})
    configs = connector.task_configs(2)
    assert [c["task"] for c in configs] == ["0", "1"]

    offsets = InMemoryOffsetStorageReader()
    task = connector.task_class()()
    task.initialize(SourceTaskContext(configs[1], offsets))
    task.start(configs[1])
    first = task.poll() + task.poll()
    assert [r.value for r in first] == ["3", "2"]
    assert {r.topic for r in first} == {"t"}

    offsets.set(first[-1].source_partition, first[-1].source_offset)  # what a commit stores
    restarted = connector.task_class()()
    restarted.initialize(SourceTaskContext(configs[1], offsets))
    restarted.start(configs[1])
    rest = []
    while (polled := restarted.poll()) is not None:
        rest += polled
    assert [r.value for r in rest] == ["1", "0"]  # resumed after "2": no record twice


def test_sink_example_appends_and_commits_what_it_flushed(tmp_path: Path) -> None:
    example = block(
        "from spark_eos_connect.api import ConfigDef, ConfigType, SinkConnector, SinkTask"
    )
    connector = example["LinesConnector"]()
    target = tmp_path / "out.txt"
    connector.start({"file": str(target)})
    [config] = connector.task_configs(1)
    task = connector.task_class()()
    task.initialize(SinkTaskContext(config))
    task.start(config)
    tp = TopicPartition("orders", 0)
    task.open([tp])

    task.put([SinkRecord("orders", 0, n, None, f"v{n}") for n in range(3)])
    committed = task.pre_commit({tp: 3})

    assert committed == {tp: 3}
    assert target.read_text() == "v0\nv1\nv2\n"  # flushed before the offsets are handed back
    task.close([tp])
    task.stop()
