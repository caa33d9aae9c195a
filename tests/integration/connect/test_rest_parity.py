"""The REST API against Kafka Connect 4.3.1's: the same requests for the same FileStreamSource
connector (same name, same config) sent to a Connect worker and to the project, whose connector
a Spark query runs; status codes and body shapes must match.

Differences on purpose, asserted as such: the project answers 400 where Connect answers 500
for a malformed offsets body or offsets the connector rejects (Connect's Jackson and connector
exceptions end as 500s); a connector no query runs is UNASSIGNED here (the query is the
worker) where a Connect worker runs it, its trace and the 201 body's added `status` saying so;
the project's FileStreamSource needs `file` (no standard input); and Connect's states carry
KIP-891's `version`, which the project's status records do not hold.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from spark_eos_connect.apps.connect_worker import ConnectWorker
from spark_eos_connect.testing import wait_for

from .conftest import CONNECT_MARKS, Project
from .parity import CONNECT_ONLY_KEYS, Answer, Exchange, Pair, shape

pytestmark = CONNECT_MARKS

LINES = 200
STATE_TIMEOUT_S = 90.0
CONNECT_PACKAGE = "org.apache.kafka.connect."
"""The package of the connectors Kafka Connect ships (the oracle worker has others as plugins)."""


@pytest.fixture
def pair(connect_worker: ConnectWorker, project: Project) -> Pair:
    return Pair(connect_worker, project.rest)


@pytest.fixture
def connector(
    tmp_path: Path, topic_factory: Callable[..., str], unique_name: Callable[[str], str]
) -> tuple[str, dict[str, str]]:
    """A connector name and a FileStreamSource config over a file of `LINES` lines."""
    source = tmp_path / "in.txt"
    source.write_text("".join(f"line {n}\n" for n in range(LINES)))
    config = {
        "connector.class": "FileStreamSource",
        "tasks.max": "1",
        "file": str(source),
        "topic": topic_factory("parity"),
    }
    return unique_name("parity"), config


@pytest.fixture
def cleanup(pair: Pair) -> Iterator[list[str]]:
    """Names of connectors to delete from the Connect worker at teardown."""
    names: list[str] = []
    yield names
    for name in names:
        pair.worker.call("DELETE", f"/connectors/{name}")


def states(body: Any) -> tuple[str, list[str]]:
    """(connector state, task states) of a status body."""
    return body["connector"]["state"], [task["state"] for task in body["tasks"]]


def wait_both(pair: Pair, name: str, expected: tuple[str, list[str]]) -> None:
    """Until both sides report `expected` (connector state, task states)."""
    pair.worker.wait_for_status(
        name, lambda body: states(body) == expected, STATE_TIMEOUT_S, f"states {expected}"
    )

    def project_reports() -> bool:
        response = pair.project.get(f"/connectors/{name}/status")
        return response.status_code == 200 and states(response.json()) == expected

    wait_for(project_reports, STATE_TIMEOUT_S, f"the project's states {expected}")


def wait_offsets(pair: Pair, name: str, position: int) -> None:
    """Until both sides' GET offsets hold `position` (each side has read the whole file)."""

    def at_end(answer: Answer) -> bool:
        body = answer.body if answer.status == 200 else None
        offsets: list[Any] = (body.get("offsets") if isinstance(body, dict) else None) or []
        return bool(offsets) and offsets[-1]["offset"] == {"position": position}

    def both_at_end() -> bool:
        exchange = pair.send("GET", f"/connectors/{name}/offsets")
        return at_end(exchange.connect) and at_end(exchange.project)

    wait_for(both_at_end, STATE_TIMEOUT_S, f"both offsets at position {position}")


def test_lifecycle_and_offsets_of_a_running_file_source(
    pair: Pair,
    project: Project,
    connector: tuple[str, dict[str, str]],
    run_source: Callable[..., Any],
    cleanup: list[str],
) -> None:
    name, config = connector
    size = Path(config["file"]).stat().st_size
    cleanup.append(name)
    base = f"/connectors/{name}"

    created = pair.send("POST", "/connectors", {"name": name, "config": config}).same_status(201)
    info = dict(created.project.body)
    no_query = info.pop("status")  # the project's one addition: no query runs it yet
    assert created.connect.body == info, created.report("bodies differ beyond `status`")
    assert no_query["state"] == "UNASSIGNED", created.report("")
    assert no_query["trace"].startswith(f"No Spark query runs connector {name}")
    pair.send("POST", "/connectors", {"name": name, "config": config}).is_error(409, 409)
    query = run_source({"name": name, **config, **project.worker_options()}, once=False)

    wait_both(pair, name, ("RUNNING", ["RUNNING"]))
    status = pair.send("GET", f"{base}/status").same_shape()
    assert set(status.connect.body["connector"]) - set(status.project.body["connector"]) == {
        "version"
    }, status.report("only KIP-891's version may be missing here")
    pair.send("GET", f"{base}/config").same_body()
    pair.send("GET", base).same_body()  # task ids included
    tasks = pair.send("GET", f"{base}/tasks").same_shape(ignored={"config"})
    [connect_task], [project_task] = tasks.connect.body, tasks.project.body
    assert connect_task["config"] == {  # Connect adds the Java task class; the project does not
        **project_task["config"],
        "task.class": "org.apache.kafka.connect.file.FileStreamSourceTask",
    }, tasks.report("task configs differ beyond task.class")
    pair.send("GET", f"{base}/tasks/0/status").same_shape()
    pair.send("GET", "/connectors").same_status(200)
    pair.send("GET", "/connectors?expand=status").same_status(200)

    wait_offsets(pair, name, size)
    pair.send("GET", f"{base}/offsets").same_body()  # the same file: the same offsets
    body = {"offsets": [{"partition": {"filename": config["file"]}, "offset": {"position": 7}}]}
    pair.send("PATCH", f"{base}/offsets", body).is_error(400, 400).same_body()  # not STOPPED
    pair.send("DELETE", f"{base}/offsets").is_error(400, 400).same_body()

    pair.send("PUT", f"{base}/pause").same_status(202)
    wait_both(pair, name, ("PAUSED", ["PAUSED"]))
    pair.send("GET", f"{base}/status").same_shape()
    pair.send("PATCH", f"{base}/offsets", body).is_error(400, 400).same_body()  # PAUSED is not

    pair.send("PUT", f"{base}/resume").same_status(202)
    wait_both(pair, name, ("RUNNING", ["RUNNING"]))

    pair.send("PUT", f"{base}/stop").same_status(204)
    wait_both(pair, name, ("STOPPED", []))
    pair.send("GET", f"{base}/status").same_shape()
    pair.send("GET", f"{base}/tasks").same_body()  # []
    pair.send("GET", f"{base}/tasks/0/status").is_error(404, 404)
    pair.send("PUT", f"{base}/stop").same_status(204)  # idempotent

    pair.send("PATCH", f"{base}/offsets", body).same_status(200).same_body()
    pair.send("GET", f"{base}/offsets").same_body()
    reset_one = {"offsets": [{"partition": {"filename": config["file"]}, "offset": None}]}
    pair.send("PATCH", f"{base}/offsets", reset_one).same_status(200).same_body()
    pair.send("GET", f"{base}/offsets").same_status(200).same_body()  # {"offsets":[]}
    pair.send("PATCH", f"{base}/offsets", body).same_status(200)
    pair.send("DELETE", f"{base}/offsets").same_status(200).same_body()
    assert pair.send("GET", f"{base}/offsets").same_body().project.body == {"offsets": []}

    query.stop()
    pair.send("DELETE", base).same_status(204)
    # Connect forgets a deleted connector's status asynchronously, the project at once
    gone = lambda: pair.worker.call("GET", f"{base}/status")[0] == 404  # noqa: E731
    wait_for(gone, STATE_TIMEOUT_S, "Connect to forget the deleted connector")
    pair.send("GET", f"{base}/status").is_error(404, 404)
    pair.send("GET", f"{base}/config").is_error(404, 404).same_body()


# (offsets body, Connect's status, the project's status): the project's 400s where Connect's
# Jackson parsing or the connector's alterOffsets check end as 500s are on purpose.
BAD_OFFSETS = [
    pytest.param({"offsets": []}, 400, 400, id="empty-list"),
    pytest.param({}, 400, 400, id="no-offsets-key"),
    pytest.param({"offsets": [{"offset": {"position": 3}}]}, 500, 400, id="no-partition"),
    pytest.param({"offsets": [{"partition": None, "offset": {}}]}, 500, 400, id="null-partition"),
    pytest.param({"offsets": 5}, 500, 400, id="offsets-not-a-list"),
    pytest.param([1], 500, 400, id="body-not-an-object"),
    pytest.param(b"not json", 500, 400, id="malformed-json"),
    pytest.param(
        {"offsets": [{"partition": {"filename": {"a": 1}}, "offset": None}]},
        500,
        400,
        id="partition-value-not-primitive",
    ),
    pytest.param("position-x", 500, 400, id="position-not-a-number"),
    pytest.param("position-negative", 500, 400, id="position-negative"),
    pytest.param("no-position-key", 500, 400, id="offset-without-position"),
]


@pytest.mark.parametrize(("body", "connect_status", "project_status"), BAD_OFFSETS)
def test_bad_offsets_bodies_are_refused_by_both(
    pair: Pair,
    connector: tuple[str, dict[str, str]],
    cleanup: list[str],
    body: Any,
    connect_status: int,
    project_status: int,
) -> None:
    name, config = connector
    cleanup.append(name)
    partition = {"filename": config["file"]}
    offsets = {
        "position-x": {"position": "x"},
        "position-negative": {"position": -1},
        "no-position-key": {"pos": 3},
    }
    if isinstance(body, str):
        body = {"offsets": [{"partition": partition, "offset": offsets[body]}]}
    pair.send("POST", "/connectors", {"name": name, "config": config, "initial_state": "STOPPED"})
    wait_both(pair, name, ("STOPPED", []))

    pair.send("PATCH", f"/connectors/{name}/offsets", body).is_error(connect_status, project_status)
    pair.send("GET", f"/connectors/{name}/offsets").same_body()  # nothing was written


def test_unknown_connectors_are_404_on_every_path(
    pair: Pair, unique_name: Callable[[str], str]
) -> None:
    base = f"/connectors/{unique_name('missing')}"
    offsets = {"offsets": [{"partition": {"filename": "/f"}, "offset": {"position": 1}}]}
    for method, path, body in [
        ("GET", base, None),
        ("GET", f"{base}/config", None),
        ("GET", f"{base}/status", None),
        ("GET", f"{base}/tasks", None),
        ("GET", f"{base}/offsets", None),
        ("PATCH", f"{base}/offsets", offsets),
        ("DELETE", f"{base}/offsets", None),
        ("PUT", f"{base}/pause", None),
        ("PUT", f"{base}/resume", None),
        ("PUT", f"{base}/stop", None),
        ("POST", f"{base}/restart", None),
        ("DELETE", base, None),
    ]:
        pair.send(method, path, body).is_error(404, 404)


def invalid_configs(file: str) -> list[tuple[str, dict[str, Any]]]:
    """(what is wrong, POST /connectors body) refused by both with 400."""
    good = {"connector.class": "FileStreamSource", "file": file, "topic": "t"}
    return [
        ("batch.size not a number", {"name": "bad", "config": {**good, "batch.size": "zero"}}),
        ("tasks.max 0", {"name": "bad", "config": {**good, "tasks.max": "0"}}),
        ("unknown class", {"name": "bad", "config": {**good, "connector.class": "NoSuch"}}),
        ("no connector.class", {"name": "bad", "config": {"file": file, "topic": "t"}}),
        ("name mismatch", {"name": "bad", "config": {**good, "name": "other"}}),
        ("no name", {"config": good}),
    ]


def test_invalid_configs_are_400_and_create_nothing(pair: Pair, tmp_path: Path) -> None:
    for what, body in invalid_configs(str(tmp_path / "in.txt")):
        exchange = pair.send("POST", "/connectors", body)
        statuses = (exchange.connect.status, exchange.project.status)
        assert statuses == (400, 400), exchange.report(f"{what}: expected 400 from both")
        exchange.is_error(400, 400)
    listed = pair.send("GET", "/connectors").same_status(200)
    assert "bad" not in listed.connect.body and "bad" not in listed.project.body


def test_a_file_source_without_file_is_refused_here_only(
    pair: Pair, unique_name: Callable[[str], str], cleanup: list[str]
) -> None:
    """Connect's FileStreamSource reads standard input without `file`; the project's has no
    standard input to read and refuses the config (a documented difference)."""
    name = unique_name("stdin")
    cleanup.append(name)
    body = {"name": name, "config": {"connector.class": "FileStreamSource", "topic": "t"}}
    exchange = pair.send("POST", "/connectors", body)
    assert (exchange.connect.status, exchange.project.status) == (201, 400), exchange.report("")
    assert "file" in exchange.project.body["message"]


def test_a_connector_no_query_runs_is_unassigned_here(
    pair: Pair, connector: tuple[str, dict[str, str]], cleanup: list[str]
) -> None:
    """A Connect worker runs what is created; here a Spark query is the worker, so until one
    runs the connector its status is UNASSIGNED with no tasks, in Connect's shape, its trace
    saying that no query runs it."""
    name, config = connector
    cleanup.append(name)
    pair.send("POST", "/connectors", {"name": name, "config": config}).same_status(201)
    pair.worker.wait_for_status(name, lambda body: states(body) == ("RUNNING", ["RUNNING"]))

    exchange = pair.send("GET", f"/connectors/{name}/status").same_status(200)
    assert states(exchange.project.body) == ("UNASSIGNED", []), exchange.report("")
    unassigned = exchange.project.body["connector"]
    assert unassigned["state"] == "UNASSIGNED"
    assert unassigned["trace"].startswith(f"No Spark query runs connector {name}")
    assert set(exchange.connect.body) == set(exchange.project.body), exchange.report("")
    assert set(exchange.connect.body["connector"]) >= CONNECT_ONLY_KEYS


def test_root_and_plugin_listing_have_connects_shapes(pair: Pair) -> None:
    root = pair.send("GET", "/").same_shape()
    assert set(root.connect.body) == {"version", "commit", "kafka_cluster_id"}
    assert root.connect.body["kafka_cluster_id"] == root.project.body["kafka_cluster_id"]

    plugins = pair.send("GET", "/connector-plugins").same_status(200)
    for entry in [*plugins.connect.body, *plugins.project.body]:
        expected = {"class": "string", "type": entry["type"], "version": "string"}
        assert shape(entry) == expected, plugins.report(f"{entry} is not a PluginInfo")
    kinds = [  # Connect's own connectors (the worker also has Debezium's as a plugin)
        {
            (entry["class"].rsplit(".", 1)[1], entry["type"])
            for entry in body
            if body is plugins.project.body or entry["class"].startswith(CONNECT_PACKAGE)
        }
        for body in (plugins.connect.body, plugins.project.body)
    ]
    assert ("FileStreamSourceConnector", "source") in kinds[0], plugins.report("no FileStream")
    assert kinds[0] <= kinds[1], plugins.report("the project lacks a FileStream connector")


def validation(pair: Pair, config: dict[str, str]) -> tuple[Exchange, dict[str, Any]]:
    """PUT .../config/validate to both: the exchange, and per option both sides' entries for
    the options both define."""
    path = "/connector-plugins/FileStreamSource/config/validate"
    exchange = pair.send("PUT", path, config).same_status(200)
    by_name = [
        {entry["definition"]["name"]: entry for entry in body["configs"]}
        for body in (exchange.connect.body, exchange.project.body)
    ]
    common = {
        name: (by_name[0][name], by_name[1][name]) for name in by_name[0] if name in by_name[1]
    }
    return exchange, common


def test_config_validation_has_connects_shape(pair: Pair, tmp_path: Path) -> None:
    """ConfigInfos: the same keys at every level; for the connector's own options and `name`
    and `tasks.max`, the same definition and value shapes (types, nulls, how many errors).
    Left out: recommended values (the project lists a ValidString's values where Connect,
    without a recommender, lists none) and the framework options' defaults, some of which are
    this project's own (e.g. `transaction.boundary.interval.ms` is 60000 here, and null in
    Connect, which falls back to the worker's `offset.flush.interval.ms`, also 60000)."""
    config = {"connector.class": "FileStreamSource", "file": str(tmp_path / "f"), "topic": "t"}
    exchange, common = validation(pair, {**config, "tasks.max": "0"})  # and no name: 2 errors
    connect, project = exchange.connect.body, exchange.project.body
    assert set(connect) == set(project), exchange.report("top-level keys differ")
    assert connect["error_count"] == project["error_count"] == 2, exchange.report("")
    compared = {"name", "tasks.max", "file", "topic", "batch.size"}
    assert compared | {"connector.class"} <= set(common)
    for name, (connect_entry, project_entry) in common.items():
        for part in ("definition", "value"):
            connect_keys, project_keys = set(connect_entry[part]), set(project_entry[part])
            assert connect_keys == project_keys, exchange.report(f"{name}: {part} keys differ")
        if name in compared:
            connect_shape, project_shape = (
                shape(entry, ignored={"recommended_values"})
                for entry in (connect_entry, project_entry)
            )
            assert connect_shape == project_shape, exchange.report(f"{name} differs")
    assert common["tasks.max"][0]["value"]["value"] == common["tasks.max"][1]["value"]["value"]


@pytest.mark.xfail(
    strict=True,
    reason="ConfigDef.validate (spark_eos_connect/api/config.py) reports the raw text of a value "
    "that does not parse as its type, where Connect reports null",
)
def test_an_unparseable_value_validates_to_null(pair: Pair, tmp_path: Path) -> None:
    config = {"connector.class": "FileStreamSource", "file": str(tmp_path / "f"), "topic": "t"}
    exchange, common = validation(pair, {**config, "name": "n", "batch.size": "many"})
    connect_value, project_value = (entry["value"] for entry in common["batch.size"])
    assert connect_value["value"] is None and connect_value["errors"], exchange.report("")
    assert project_value["value"] is None, exchange.report("the project echoes the raw text")
