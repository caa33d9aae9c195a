"""A real Kafka Connect 4.3.1 worker as the oracle, next to the project on the same broker.

The worker (`spark_eos_connect.apps.connect_worker`) starts once per pytest worker, on the session's
broker, with `exactly.once.source.support=enabled`; every module here carries the `connect`
xdist group, so under `make test`'s `--dist loadgroup` one pytest worker runs them all against
one Connect worker. The project's side is a herder and its REST app on fresh internal topics
(`project`), and Spark source queries with the same worker options (`run_source`).
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from pyspark.errors import StreamingQueryException

from spark_eos_connect.apps.connect_worker import ConnectWorker
from spark_eos_connect.herder import Herder, WorkerSettings
from spark_eos_connect.jvm.jars import plugin_path
from spark_eos_connect.rest import create_app

CONNECT_MARKS = [pytest.mark.integration, pytest.mark.xdist_group("connect")]
"""`pytestmark` of every module here: one xdist worker, one Connect worker."""

WORKER_HEAP = "512m"
QUERY_TIMEOUT_S = 180.0


@pytest.fixture(scope="session")
def connect_worker(
    bootstrap_servers: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ConnectWorker]:
    """A one-node Connect cluster (group `oracle-<id>`, its own internal topics), started once
    and waited for through its REST API; stopped (SIGTERM, then SIGKILL) at the session's end.
    Debezium's PostgreSQL connector is its one plugin (`plugin.path`, loaded in isolation). The
    jars are fetched by Maven on first use (`ensure_jars("connect")`, `plugin_path("debezium")`)."""
    group = f"oracle-{uuid.uuid4().hex[:8]}"
    worker = ConnectWorker(
        bootstrap_servers,
        group,
        tmp_path_factory.mktemp("connect-worker"),
        heap=WORKER_HEAP,
        extra={"plugin.path": str(plugin_path("debezium"))},
    )
    with worker:
        yield worker


@dataclass
class Project:
    """The project's side of a comparison: worker settings, a herder and its REST app."""

    settings: WorkerSettings
    herder: Herder
    rest: TestClient

    def worker_options(self) -> dict[str, str]:
        """The reader options that make a source query a worker of this cluster."""
        return {
            "group.id": self.settings.group_id,
            "config.storage.topic": self.settings.config_topic,
            "offset.storage.topic": self.settings.offsets_topic,
            "status.storage.topic": self.settings.status_topic,
        }


def project_cluster(
    kafka_config: Mapping[str, Any],
    group: str,
    offsets_topic: str | None = None,
    plugin_path: str | None = None,
) -> Project:
    """A herder (and its REST app) on fresh topics named after `group`; `offsets_topic` shares
    another cluster's offsets topic instead (the hand-over); `plugin_path` is the herder's
    `plugin.path`."""
    settings = WorkerSettings(
        group_id=group,
        config_topic=f"{group}-configs",
        offsets_topic=offsets_topic or f"{group}-offsets",
        status_topic=f"{group}-status",
        plugin_path=plugin_path,
    )
    herder = Herder(kafka_config, settings, timeout_s=30.0).start()
    return Project(settings, herder, TestClient(create_app(herder)))


@pytest.fixture
def project(kafka_config: dict[str, Any], unique_name: Callable[[str], str]) -> Iterator[Project]:
    """The project's cluster on fresh internal topics, closed at teardown."""
    cluster = project_cluster(kafka_config, unique_name("project"))
    try:
        yield cluster
    finally:
        cluster.herder.close()


@pytest.fixture
def run_source(spark: Any, bootstrap_servers: str, tmp_path: Path) -> Iterator[Callable[..., Any]]:
    """`run_source(options, once=True, check=True)`: a source query over `options` (a Connect
    connector config plus worker options; `kafka.bootstrap.servers` is added) into Spark's
    `noop` sink. `once`: one `availableNow` micro-batch, awaited (with `check`, failing the test
    if the query failed); otherwise a running query (200 ms trigger), stopped at teardown."""
    running: list[Any] = []

    def run(options: Mapping[str, str], once: bool = True, check: bool = True) -> Any:
        reader = spark.readStream.format("eosconnect").options(**options)
        stream = reader.option("kafka.bootstrap.servers", bootstrap_servers).load()
        writer = stream.writeStream.format("noop").option(
            "checkpointLocation", str(tmp_path / f"ck-{uuid.uuid4().hex[:8]}")
        )
        if not once:
            running.append(writer.trigger(processingTime="200 milliseconds").start())
            return running[-1]
        query = writer.trigger(availableNow=True).start()
        finished = True
        with contextlib.suppress(StreamingQueryException):  # read back as query.exception()
            finished = query.awaitTermination(QUERY_TIMEOUT_S)
        if not finished:
            query.stop()
        assert finished, f"the source query did not finish within {QUERY_TIMEOUT_S:.0f} s"
        assert not check or query.exception() is None, query.exception()
        return query

    yield run
    for query in running:
        query.stop()
