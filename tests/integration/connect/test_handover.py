"""A FileStreamSource handed from the project to Kafka Connect 4.3.1 and back through one offsets
topic (README, "Moving offsets to and from a Kafka Connect cluster"): the project reads the
file partway, the Connect worker takes over under the same connector name and continues, then
the project continues after Connect. The topic must hold every line exactly once, in order.

The project's side is its own cluster (group, config and status topics) whose
`offset.storage.topic` is the Connect worker's: sharing the group id would also share the
config-topic leader's transactional id (`connect-cluster-<group.id>`) and fence Connect's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from spark_eos_connect.apps.connect_worker import FILE_SOURCE, ConnectWorker
from spark_eos_connect.kafka.clients import ConsumedRecord
from spark_eos_connect.testing import wait_for

from .conftest import CONNECT_MARKS, Project, project_cluster

pytestmark = CONNECT_MARKS

FIRST = 5_000
"""Lines in the file when the project starts; it reads `PARTWAY` of them."""
PARTWAY = 1_000
MORE = 3_000
"""Lines appended after Connect stopped."""
TIMEOUT_S = 120.0


def lines(start: int, stop: int) -> list[str]:
    return [f"line {n:05d} {'x' * (n % 7)}" for n in range(start, stop)]


def append(path: Path, new: list[str]) -> None:
    with path.open("a", encoding="utf-8") as out:
        out.write("".join(f"{line}\n" for line in new))


def assert_exactly_once(records: list[ConsumedRecord], expected: list[str]) -> None:
    """Every expected line once, in order, as Connect's StringConverter writes it (no key, no
    headers); the first gap or duplicate is named."""
    values = [r.value.decode() if r.value is not None else None for r in records]
    for index, (got, want) in enumerate(zip(values, expected, strict=False)):
        assert got == want, f"record {index}: {got!r}, expected {want!r} (a gap or a duplicate)"
    assert len(values) == len(expected), f"{len(values)} records for {len(expected)} lines"
    assert all(r.key is None and not r.headers for r in records)


@pytest.fixture
def shared(
    kafka_config: dict[str, Any],
    connect_worker: ConnectWorker,
    unique_name: Callable[[str], str],
) -> Iterator[Project]:
    """The project's cluster, on the Connect worker's offsets topic."""
    cluster = project_cluster(
        kafka_config, unique_name("handover"), offsets_topic=connect_worker.offsets_topic
    )
    try:
        yield cluster
    finally:
        cluster.herder.close()


def test_file_source_moves_to_connect_and_back_exactly_once(
    connect_worker: ConnectWorker,
    shared: Project,
    run_source: Callable[..., Any],
    tmp_path: Path,
    topic_factory: Callable[..., str],
    read_committed: Callable[..., list[ConsumedRecord]],
    unique_name: Callable[[str], str],
) -> None:
    name = unique_name("handover")
    source = tmp_path / "in.txt"
    append(source, lines(0, FIRST))
    config = {  # a Connect connector config, Java class name included, run as it is by both
        "connector.class": FILE_SOURCE,
        "tasks.max": "1",
        "file": str(source),
        "topic": topic_factory("handover"),
        "batch.size": "100",
    }
    project_options = {"name": name, **config, **shared.worker_options()}
    offsets_path = f"/connectors/{name}/offsets"

    # 1. the project reads the file partway: one micro-batch of PARTWAY lines
    run_source({**project_options, "maxRecordsPerTrigger": str(PARTWAY)})
    assert_exactly_once(read_committed(config["topic"]), lines(0, PARTWAY))
    [after_project] = shared.rest.get(offsets_path).json()["offsets"]
    assert after_project["offset"]["position"] == len("".join(f"{x}\n" for x in lines(0, PARTWAY)))

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
        assert after_connect == {
            "offsets": [
                {
                    "partition": {"filename": str(source)},
                    "offset": {"position": source.stat().st_size},
                }
            ]
        }
        assert shared.rest.get(offsets_path).json() == after_connect  # one offsets topic
    finally:
        connect_worker.call("DELETE", f"/connectors/{name}")

    # 3. the project continues after Connect, with lines appended meanwhile
    append(source, lines(FIRST, FIRST + MORE))
    run_source(project_options)
    assert_exactly_once(read_committed(config["topic"]), lines(0, FIRST + MORE))
