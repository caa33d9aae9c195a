"""The shipped jobs through `spark-submit --master spark://...` on the standalone cluster: exactly
once, counted read_committed (or in the Delta table), and run on the cluster's executor JVMs
according to each application's event log.

One application per side: the README's source job (two tasks on two executors) and the Delta
job (range readers on both executors). `jobs/end_to_end.py`, which runs the two one after the
other, and the FileStreamSource job are run locally (tests/integration/jobs/): on the cluster
they would repeat these two applications' paths at two to five minutes each."""

from __future__ import annotations

import shlex
import uuid
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from confluent_kafka import Producer

from spark_eos_connect import __version__
from spark_eos_connect.connectors.generator import parse_generated_value

from ..docs.readme import replace_tokens, shell_lines, snippet
from .conftest import CLUSTER_MARKS, Submitted
from .standalone import EventLog, StandaloneCluster

pytestmark = CLUSTER_MARKS


def assert_ran_on(cluster: StandaloneCluster, log: EventLog, executors: int) -> None:
    """The application ran on `cluster`'s master, its tasks on at least `executors` of the
    executor JVMs the workers started, none in the driver."""
    assert log.master == cluster.master_url
    assert set(log.executors_added.values()) == {"127.0.0.1"}
    assert "driver" not in log.tasks_per_executor
    assert set(log.tasks_per_executor) <= set(log.executors_added)
    assert len(log.tasks_per_executor) >= executors, log.tasks_per_executor


def assert_generated_exactly_once(values: list[bytes], tasks: int, per_task: int) -> None:
    counts = Counter(parse_generated_value(value) for value in values)
    duplicates = {key: n for key, n in counts.items() if n > 1}
    missing = {(t, n) for t in range(tasks) for n in range(per_task)} - set(counts)
    assert not duplicates, f"{len(duplicates)} duplicated, e.g. {sorted(duplicates)[:5]}"
    assert not missing, f"{len(missing)} missing, e.g. {sorted(missing)[:5]}"
    assert len(values) == tasks * per_task


def generator_args(name: str, topic: str, bootstrap: str, ck: Path, per_task: int) -> list[str]:
    return [
        *("--name", name, "--connector-class", "Generator", "--tasks-max", "2"),
        *("--option", f"topic={topic}", "--option", f"max.records={per_task}"),
        *("--bootstrap-servers", bootstrap, "--checkpoint", str(ck)),
        *("--until-idle", "--timeout", "240"),
    ]


def succeeded(job: Submitted, cluster: StandaloneCluster, timeout_s: float = 300) -> str:
    """The job's output, once it exited 0 after announcing the cluster's master, with no
    `BrokenPipeError` traceback from a Python daemon (the driver JVM's own Python processes run
    the quiet daemon through the `spark-env.sh` that setup writes, executor kills or not)."""
    output = job.wait(timeout_s)
    assert job.process.returncode == 0, output[-4000:]
    assert f"Spark master {cluster.master_url} (spark-submit)" in output
    assert "BrokenPipeError" not in output, output[-4000:]
    return output


def produce(bootstrap: str, topic: str, values: list[bytes], commit: bool) -> None:
    """One transaction over the topic's two partitions."""
    producer = Producer(
        {"bootstrap.servers": bootstrap, "transactional.id": f"cluster-{uuid.uuid4().hex}"}
    )
    producer.init_transactions(30)
    producer.begin_transaction()
    for index, value in enumerate(values):
        producer.produce(topic, value, partition=index % 2)
    if commit:
        producer.commit_transaction(30)
    else:
        producer.flush(30)
        producer.abort_transaction(30)


def test_kafka_to_delta_table_on_a_shared_path(
    spark_cluster: StandaloneCluster,
    submit: Callable[..., Submitted],
    spark: Any,
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    tmp_path: Path,
) -> None:
    """The job with the eosconnect reader, whose range consumers run on both executors (Spark's
    own Kafka reader into the same Delta sink runs in `sink/test_kafka_to_delta_job.py`)."""
    topic, table = topic_factory("cluster-delta", partitions=2), tmp_path / "table"
    produce(bootstrap_servers, topic, [f"v{n}".encode() for n in range(300)], commit=True)
    produce(bootstrap_servers, topic, [b"aborted"] * 20, commit=False)
    produce(bootstrap_servers, topic, [f"v{n}".encode() for n in range(300, 350)], commit=True)

    job = submit(
        "kafka_to_delta.py",
        *("--name", f"delta-{uuid.uuid4().hex[:8]}", "--topics", topic, "--path", str(table)),
        *("--max-records-per-trigger", "120", "--bootstrap-servers", bootstrap_servers),
        *("--checkpoint", str(tmp_path / "ck"), "--until-idle", "--timeout", "240"),
        *(
            "--reader",
            "eosconnect",
        ),  # `--reader kafka`: tests/integration/sink/test_kafka_to_delta_job.py
    )

    succeeded(job, spark_cluster)
    values = [r.value for r in spark.read.format("delta").load(str(table)).collect()]
    assert sorted(values) == sorted(f"v{n}".encode() for n in range(350))
    assert_ran_on(spark_cluster, job.event_log(), executors=2)


def test_readme_block_submits_to_the_cluster(
    spark_cluster: StandaloneCluster,
    submit: Callable[..., Submitted],
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    read_committed: Callable[..., list[Any]],
    tmp_path: Path,
) -> None:
    """The README's "Running on a cluster" block: `make dist` and installing the wheel it names
    are what tests/integration/jobs/test_wheel.py runs; the `spark-submit` line (the Generator,
    two tasks, into Kafka) runs here."""
    [(build, _), (install, _), (submit_line, _)] = shell_lines(snippet("```bash make dist").text)
    assert build == "make dist"
    assert install == f"pip install dist/spark_eos_connect-{__version__}-py3-none-any.whl"
    topic = topic_factory("readme-cluster", partitions=2)
    argv = replace_tokens(
        shlex.split(submit_line),
        {
            "spark://127.0.0.1:7077": spark_cluster.master_url,
            "topic=orders": f"topic={topic}",
            "127.0.0.1:9092": bootstrap_servers,
            "/tmp/ck": str(tmp_path / "ck"),
            "gen": f"gen-{uuid.uuid4().hex[:8]}",
        },
    )
    assert argv[:3] == ["spark-submit", "--master", spark_cluster.master_url], argv
    assert argv[3].startswith("jobs/"), argv
    per_task = int(next(a for a in argv if a.startswith("max.records=")).split("=")[1])

    job = submit(Path(argv[3]).name, *argv[4:])

    succeeded(job, spark_cluster)
    assert_generated_exactly_once([r.value for r in read_committed(topic)], 2, per_task)
    assert_ran_on(spark_cluster, job.event_log(), executors=2)
