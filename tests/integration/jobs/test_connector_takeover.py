"""Reusing a running connector's name is refused, naming the driver that runs it; a driver
that went silent is taken over once its liveness lapses, and the new one says so (issue 40
item 7)."""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from spark_eos_connect.errors import EosConnectError
from spark_eos_connect.protocol.status_records import StatusState
from spark_eos_connect.runtime.lifecycle.liveness import LIVENESS_S
from spark_eos_connect.storage.status_store import KafkaStatusStore
from spark_eos_connect.testing import wait_for

pytestmark = pytest.mark.integration


def generator_args(name: str, topic: str, servers: str, checkpoint: Path) -> list[str]:
    return [
        *("--name", name, "--connector-class", "Generator"),
        *("--option", f"topic={topic}", "--option", "rate=100"),
        *("--bootstrap-servers", servers, "--checkpoint", str(checkpoint)),
    ]


def test_a_second_job_with_a_running_connectors_name_is_refused_and_the_first_runs_on(
    kafka_config: dict[str, Any],
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    read_committed: Callable[..., list[Any]],
    start_job: Callable[..., Any],
    run_job: Callable[..., Any],
    unique_name: Callable[[str], str],
    tmp_path: Path,
) -> None:
    topic = topic_factory("in-use")
    name = unique_name("in-use")
    first = start_job(
        "source_to_kafka.py", *generator_args(name, topic, bootstrap_servers, tmp_path / "a")
    )
    wait_for(lambda: len(read_committed(topic, settled=False)) > 0, 180, "the first job's records")
    owner = KafkaStatusStore(kafka_config, "eosconnect-status").read_to_end().connector_status(name)
    assert owner is not None and owner.state is StatusState.RUNNING

    second = run_job(
        "source_to_kafka.py", *generator_args(name, topic, bootstrap_servers, tmp_path / "b")
    )

    assert second.returncode == 1
    last = second.stderr.strip().splitlines()[-1]
    assert f"ConnectorInUseError: connector {name} is RUNNING on another driver, " in last, last
    assert owner.worker_id in last
    assert "takeover=true" in last
    assert first.process.poll() is None, "the first job was not fenced"
    before = len(read_committed(topic, settled=False))
    wait_for(
        lambda: len(read_committed(topic, settled=False)) > before, 60, "the first job going on"
    )
    output = first.stop(signal.SIGTERM, timeout_s=180)
    assert first.process.returncode == 0, output[-3000:]


def test_a_driver_silent_past_its_liveness_is_taken_over_saying_so(
    kafka_config: dict[str, Any],
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    run_job: Callable[..., Any],
    unique_name: Callable[[str], str],
    tmp_path: Path,
) -> None:
    topic = topic_factory("lapsed")
    name = unique_name("lapsed")
    silent = "crashed-host.invalid:4242"  # another host: no process to look up, only its age
    statuses = KafkaStatusStore(kafka_config, "eosconnect-status")
    statuses.ensure_topic()
    statuses.put_connector_status(name, StatusState.RUNNING, silent, 1)
    statuses.close()
    written = time.monotonic()

    done = run_job(
        "source_to_kafka.py",
        *generator_args(name, topic, bootstrap_servers, tmp_path / "ck"),
        *("--option", "max.records=20", "--until-idle"),
    )

    assert done.returncode == 0, done.stderr[-3000:]
    took_over = f"connector {name}: took over from driver {silent}, silent for "
    assert took_over in done.stderr
    silent_for = float(done.stderr.split(took_over, 1)[1].split(" s", 1)[0])
    assert silent_for >= LIVENESS_S  # never before its liveness lapsed (the wait itself, with
    # its bound, is tests/unit/source/test_coordinator_claim.py's: Spark's start-up alone
    # outlasts LIVENESS_S here)
    assert time.monotonic() - written >= LIVENESS_S
    status = KafkaStatusStore(kafka_config, "eosconnect-status").read_to_end()
    assert status.connector_status(name).worker_id != silent  # type: ignore[union-attr]


def sink_args(name: str, topic: str, servers: str, out: Path, checkpoint: Path) -> list[str]:
    return [
        *("--name", name, "--connector-class", "FileStreamSink", "--topics", topic),
        *("--option", f"file={out}"),
        *("--bootstrap-servers", servers, "--checkpoint", str(checkpoint)),
    ]


def test_a_second_sink_job_with_a_running_connectors_name_is_refused_unless_takeover(
    kafka_config: dict[str, Any],
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    start_job: Callable[..., Any],
    run_job: Callable[..., Any],
    unique_name: Callable[[str], str],
    tmp_path: Path,
) -> None:
    topic = topic_factory("sink-in-use")
    name = unique_name("sink-in-use")
    first = start_job(
        "kafka_to_sink.py",
        *sink_args(name, topic, bootstrap_servers, tmp_path / "a.txt", tmp_path / "a"),
    )
    statuses = KafkaStatusStore(kafka_config, "eosconnect-status")

    def running() -> Any:
        try:  # the job creates the status topic
            status = statuses.read_to_end().connector_status(name)
        except EosConnectError:
            return None
        return status if status is not None and status.state is StatusState.RUNNING else None

    wait_for(lambda: running() is not None, 180, "the first sink job's connector RUNNING")
    owner = running()

    second = run_job(
        "kafka_to_sink.py",
        *sink_args(name, topic, bootstrap_servers, tmp_path / "b.txt", tmp_path / "b"),
        "--until-idle",
    )

    assert second.returncode == 1, second.stderr[-3000:]
    last = second.stderr.strip().splitlines()[-1]
    assert f"ConnectorInUseError: connector {name} is RUNNING on another driver, " in last, last
    assert owner.worker_id in last and "takeover=true" in last
    assert first.process.poll() is None, "the first job runs on"

    third = start_job(
        "kafka_to_sink.py",
        *sink_args(name, topic, bootstrap_servers, tmp_path / "c.txt", tmp_path / "c"),
        *("--option", "takeover=true"),
    )

    first.process.wait(timeout=180)  # stops within a heartbeat of the takeover
    output = first.log.read_text()
    assert first.process.returncode == 1, output[-3000:]
    assert f"SinkTakenOverError: connector {name} was taken over by driver " in output
    third_output = third.stop(signal.SIGTERM, timeout_s=180)
    assert third.process.returncode == 0, third_output[-3000:]
    assert f"connector {name}: taking it over from driver {owner.worker_id}" in third_output
