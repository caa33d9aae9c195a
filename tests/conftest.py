"""Shared fixtures: a real local Kafka broker, a local SparkSession with Delta, topic helpers."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from confluent_kafka import Producer

from spark_eos_connect.kafka.clients import ConsumedRecord, admin_client, ensure_topic, read_to_end
from spark_eos_connect.runtime.commit_hooks import HOOKS_ENV
from spark_eos_connect.testing import BrokerProcess
from spark_eos_connect.testing.fast_jvm import use_fast_start_jvms
from spark_eos_connect.testing.faults import FAULT_ENV, MARKER_ENV, job_environment
from spark_eos_connect.testing.postgres import PostgresCluster, PostgresDatabase

EXTERNAL_BOOTSTRAP_ENV = "EOSCONNECT_TEST_BOOTSTRAP_SERVERS"
TEST_TIMES_ENV = "EOSCONNECT_TEST_TIMES"
"""A file each test's phases are appended to as they end (seconds, phase, test id): the run's
slowest tests can be read while it runs, or after one cut short (`make test-times`)."""

use_fast_start_jvms(os.environ)  # every Spark JVM of the run, and the jobs' and scripts' too


_TIMES: list[str] = []
"""`$EOSCONNECT_TEST_TIMES` when this process writes it: set by `pytest_configure` in the
process that is not an xdist worker (xdist's controller and workers both see each report)."""


def pytest_configure(config: pytest.Config) -> None:
    """Takes `$EOSCONNECT_TEST_TIMES` unless this process is an xdist worker."""
    times = os.environ.get(TEST_TIMES_ENV)
    if times and not hasattr(config, "workerinput"):
        _TIMES.append(times)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Appends the phase's time to `$EOSCONNECT_TEST_TIMES`."""
    for times in _TIMES:
        with open(times, "a", encoding="utf-8") as out:
            out.write(f"{report.duration:.1f}\t{report.when}\t{report.nodeid}\n")


@pytest.fixture(scope="session")
def kafka_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess | None]:
    """The broker started by `eosconnect kafka` for the whole session (None when external)."""
    if os.environ.get(EXTERNAL_BOOTSTRAP_ENV):
        yield None
        return
    broker = BrokerProcess(tmp_path_factory.mktemp("kafka"))
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()


@pytest.fixture(scope="session")
def bootstrap_servers(kafka_broker: BrokerProcess | None) -> str:
    """`bootstrap.servers` of the test broker."""
    external = os.environ.get(EXTERNAL_BOOTSTRAP_ENV)
    if external:
        return external
    assert kafka_broker is not None
    return kafka_broker.bootstrap_servers


@pytest.fixture(scope="session")
def kafka_config(bootstrap_servers: str) -> dict[str, Any]:
    """Base librdkafka config for test clients."""
    return {"bootstrap.servers": bootstrap_servers}


@pytest.fixture
def topic_factory(kafka_config: dict[str, Any]) -> Callable[..., str]:
    """Creates uniquely named topics: `topic_factory("orders", partitions=3)`."""
    admin = admin_client(kafka_config)

    def create(prefix: str = "t", partitions: int = 1, config: dict[str, str] | None = None) -> str:
        name = f"{prefix}-{uuid.uuid4().hex[:10]}"
        ensure_topic(admin, name, partitions=partitions, config=config)
        return name

    return create


Record = tuple[int, bytes | None, bytes | None]
"""(partition, key, value)."""


@pytest.fixture
def produce(kafka_config: dict[str, Any]) -> Iterator[Callable[..., None]]:
    """`produce(topic, records, abort=False)`: one transaction of `(partition, key, value)`."""
    producer = Producer({**kafka_config, "transactional.id": f"sink-tests-{uuid.uuid4().hex}"})
    producer.init_transactions(30)

    def send(
        topic: str,
        records: Iterable[Record],
        abort: bool = False,
        headers: list[tuple[str, bytes]] | None = None,
        timestamp: int | None = None,
    ) -> None:
        producer.begin_transaction()
        for partition, key, value in records:
            extra: dict[str, Any] = {"headers": headers} if headers else {}
            if timestamp is not None:
                extra["timestamp"] = timestamp
            producer.produce(topic, value, key, partition=partition, **extra)
        if abort:
            producer.flush(30)
            producer.abort_transaction(30)
        else:
            producer.commit_transaction(30)

    yield send
    producer.flush(5)


@pytest.fixture
def read_committed(kafka_config: dict[str, Any]) -> Callable[..., list[ConsumedRecord]]:
    """Reads topics to their end as a read_committed consumer.

    By default the end is the high watermark and the read waits until every transaction before
    it is decided: `commit_transaction` returns before the coordinator has written the commit
    markers, so a read right after a commit could otherwise end at a last stable offset that
    does not include it yet (a partition's records missing, now and then). `settled=False`
    reads to the last stable offsets, for a test that leaves a transaction open on purpose."""

    def read(*topics: str, timeout_s: float = 60.0, settled: bool = True) -> list[ConsumedRecord]:
        return read_to_end(
            kafka_config, topics, "read_committed", timeout_s, wait_for_open_transactions=settled
        )

    return read


@pytest.fixture
def read_uncommitted(kafka_config: dict[str, Any]) -> Callable[..., list[ConsumedRecord]]:
    """Reads topics to their end as a read_uncommitted consumer."""

    def read(*topics: str, timeout_s: float = 60.0) -> list[ConsumedRecord]:
        return read_to_end(kafka_config, topics, "read_uncommitted", timeout_s)

    return read


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresCluster]:
    """One throwaway PostgreSQL server (`wal_level=logical`) for the whole session."""
    with PostgresCluster() as cluster:
        yield cluster


@pytest.fixture
def postgres(postgres_server: PostgresCluster) -> Iterator[PostgresCluster]:
    """The session's PostgreSQL server; tests take a fresh database each (`postgres_db`, or
    `postgres.create_database()`), dropped with its replication slots when the test ends, so
    slots left by one test never use up `max_replication_slots` for the next."""
    before = set(postgres_server.created)
    yield postgres_server
    for name in [name for name in postgres_server.created if name not in before]:
        postgres_server.drop_database(name)


@pytest.fixture
def postgres_db(postgres: PostgresCluster) -> PostgresDatabase:
    """A fresh, empty database on the session's PostgreSQL server (the superuser's details)."""
    return postgres.create_database()


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """A local SparkSession with Delta and the `eosconnect` source registered."""
    from spark_eos_connect.spark.session import local_spark_session

    session = local_spark_session(app_name="spark_eos_connect-tests")
    try:
        yield session
    finally:
        session.stop()


@pytest.fixture
def default_rest_api(kafka_config: dict[str, Any]) -> Iterator[Any]:
    """Kafka Connect's REST API (a `TestClient`) over a herder on the default internal topics,
    the ones running queries use unless told otherwise."""
    from fastapi.testclient import TestClient

    from spark_eos_connect.herder import Herder
    from spark_eos_connect.rest import create_app

    herder = Herder(kafka_config).start()
    try:
        yield TestClient(create_app(herder))
    finally:
        herder.close()


@pytest.fixture
def generator_query(
    spark: Any, bootstrap_servers: str, tmp_path: Path
) -> Iterator[Callable[..., Any]]:
    """`start(name, topic, **options)`: a running Generator source query into Kafka (1 task, 200
    records/s, polls of 50, 200 ms trigger; `options` override or add reader options), stopped
    at teardown."""
    started: list[Any] = []

    def start(name: str, topic: str, **options: str) -> Any:
        kafka = {"kafka.bootstrap.servers": bootstrap_servers}
        reader = {
            "connector.class": "Generator",
            "rate": "200",
            "records.per.poll": "50",
            "maxPollDurationMs": "500",
            **options,
        }
        stream = (
            spark.readStream.format("eosconnect")
            .options(name=name, topic=topic, **reader, **kafka)
            .load()
        )
        query = (
            stream.writeStream.format("eosconnect")
            .options(name=name, **kafka)
            .option("checkpointLocation", str(tmp_path / f"ck-{name}"))
            .trigger(processingTime="200 milliseconds")
            .start()
        )
        started.append(query)
        return query

    yield start
    for query in started:
        query.stop()


@pytest.fixture
def unique_name() -> Callable[[str], str]:
    """Unique names for connectors, groups and folders."""
    return lambda prefix: f"{prefix}-{uuid.uuid4().hex[:10]}"


@pytest.fixture
def work_dir(tmp_path: Path) -> Path:
    """A per-test scratch folder."""
    return tmp_path


REPO_ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def load_job() -> Callable[[str], ModuleType]:
    """The module behind `jobs/<script>`: `spark_eos_connect.apps.jobs.<name>` (the script is a thin
    wrapper around it)."""

    def load(script: str) -> ModuleType:
        return importlib.import_module(f"spark_eos_connect.apps.jobs.{Path(script).stem}")

    return load


@dataclass
class BackgroundJob:
    """A job started by `start_job`: its process and the file its stdout and stderr go to."""

    process: subprocess.Popen[bytes]
    log: Path

    def stop(self, sig: int, timeout_s: float) -> str:
        """Send `sig`, wait for the exit, and return everything the job printed."""
        self.process.send_signal(sig)
        self.process.wait(timeout=timeout_s)
        return self.log.read_text()


@pytest.fixture
def start_job(tmp_path: Path) -> Iterator[Callable[..., BackgroundJob]]:
    """Starts `jobs/<script>` in the background in its own process group (output to a file, so
    a chatty job never blocks on a full pipe); still-running jobs are killed at teardown."""
    started: list[BackgroundJob] = []

    def start(script: str, *args: str) -> BackgroundJob:
        log = tmp_path / f"{Path(script).stem}-{len(started)}.log"
        with log.open("wb") as sink:
            process = subprocess.Popen(
                [sys.executable, str(REPO_ROOT / "jobs" / script), *args],
                env=dict(os.environ),
                stdout=sink,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        started.append(BackgroundJob(process, log))
        return started[-1]

    yield start
    for job in started:
        if job.process.poll() is None:
            job.process.kill()
            job.process.wait()


@pytest.fixture
def run_job() -> Callable[..., subprocess.CompletedProcess[str]]:
    """Runs `jobs/<script>` in its own process group; `fault="point@batch"` arms a crash."""

    def run(
        script: str,
        *args: str,
        fault: str | None = None,
        marker: Path | None = None,
        timeout_s: float = 300.0,
    ) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if k not in (FAULT_ENV, MARKER_ENV, HOOKS_ENV)}
        env.update(job_environment(fault, str(marker) if marker is not None else None))
        return subprocess.run(
            [sys.executable, str(REPO_ROOT / "jobs" / script), *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout_s,
            start_new_session=True,
            check=False,
        )

    return run
