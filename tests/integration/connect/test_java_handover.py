"""The hand-over of `test_handover`, with Connect's own Java FileStreamSourceConnector on the
project's side (from the connect-file plugin folder, `plugin.path`): the project's Java task
reads the file partway, the Kafka Connect 4.3.1 worker takes over from the offsets it committed
and continues, then the project's Java task continues after Connect. Every line exactly once,
in order, and the offsets are the same records for both."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from spark_eos_connect.apps.connect_worker import FILE_SOURCE, ConnectWorker
from spark_eos_connect.jvm import jars
from spark_eos_connect.kafka.clients import ConsumedRecord
from spark_eos_connect.testing import wait_for

from .conftest import CONNECT_MARKS, Project, project_cluster
from .test_handover import FIRST, MORE, PARTWAY, TIMEOUT_S, append, assert_exactly_once, lines

pytestmark = CONNECT_MARKS

JAVA_FILE_TASK = "org.apache.kafka.connect.file.FileStreamSourceTask"


@pytest.fixture
def on_connects_offsets(
    kafka_config: dict[str, Any],
    connect_worker: ConnectWorker,
    unique_name: Callable[[str], str],
) -> Iterator[Project]:
    """The project's cluster, on the Connect worker's offsets topic."""
    cluster = project_cluster(
        kafka_config, unique_name("java-handover"), offsets_topic=connect_worker.offsets_topic
    )
    try:
        yield cluster
    finally:
        cluster.herder.close()


def test_java_file_source_moves_to_connect_and_back_exactly_once(
    connect_worker: ConnectWorker,
    on_connects_offsets: Project,
    run_source: Callable[..., Any],
    tmp_path: Path,
    topic_factory: Callable[..., str],
    read_committed: Callable[..., list[ConsumedRecord]],
    unique_name: Callable[[str], str],
) -> None:
    project = on_connects_offsets
    name = unique_name("java-handover")
    source = tmp_path / "in.txt"
    append(source, lines(0, FIRST))
    config = {
        "connector.class": FILE_SOURCE,
        "tasks.max": "1",
        "file": str(source),
        "topic": topic_factory("java-handover"),
        "batch.size": "100",
    }
    java = {"plugin.path": str(jars.plugin_path("connect-file"))}
    project_options = {"name": name, **config, **java, **project.worker_options()}
    offsets_path = f"/connectors/{name}/offsets"

    # 1. the project's Java task reads the file partway: one micro-batch of PARTWAY lines
    run_source({**project_options, "maxRecordsPerTrigger": str(PARTWAY)})
    assert_exactly_once(read_committed(config["topic"]), lines(0, PARTWAY))
    [after_project] = project.rest.get(offsets_path).json()["offsets"]
    assert after_project == {
        "partition": {"filename": str(source)},
        "offset": {"position": len("".join(f"{x}\n" for x in lines(0, PARTWAY)))},
    }
    [task] = project.rest.get(f"/connectors/{name}/tasks").json()
    assert task["config"]["task.class"] == JAVA_FILE_TASK  # the Java plugin ran

    # 2. Connect takes over under the same name and continues to the end of the file
    try:
        connect_worker.put_connector(name, config)
        wait_for(
            lambda: len(read_committed(config["topic"], settled=False)) >= FIRST,
            TIMEOUT_S,
            f"Connect to continue to line {FIRST}",
        )
        connect_worker.request("PUT", f"/connectors/{name}/stop")
        connect_worker.wait_for_status(
            name, lambda s: s["connector"]["state"] == "STOPPED" and not s["tasks"], TIMEOUT_S
        )
        assert_exactly_once(read_committed(config["topic"]), lines(0, FIRST))
        after_connect = connect_worker.request("GET", offsets_path)
        assert project.rest.get(offsets_path).json() == after_connect  # one offsets topic
    finally:
        connect_worker.call("DELETE", f"/connectors/{name}")

    # 3. the project's Java task continues after Connect, with lines appended meanwhile
    append(source, lines(FIRST, FIRST + MORE))
    run_source(project_options)
    assert_exactly_once(read_committed(config["topic"]), lines(0, FIRST + MORE))
