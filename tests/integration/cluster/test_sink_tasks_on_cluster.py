"""Live sink tasks on the standalone cluster: executor JVMs SIGKILLed while a sink task runs.
Spark runs the task again on another executor, whose task host starts it afresh; a sink keeping
its offsets in its output (`OffsetsInOutputSinkTask`, which rewinds in `open`) ends with every
record exactly once."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from spark_eos_connect.testing import wait_for

from ..sink.test_live_sink_tasks import produce_values, written
from .conftest import CLUSTER_MARKS, Submitted
from .standalone import StandaloneCluster
from .test_failures_on_cluster import kill_busy_executor
from .test_jobs_on_cluster import succeeded

pytestmark = CLUSTER_MARKS

CONNECTORS = Path(__file__).parents[1] / "sink" / "sink_test_connectors.py"
RECORDS = 1600


def test_sink_tasks_rerun_elsewhere_after_executor_kills_write_each_record_once(
    spark_cluster: StandaloneCluster,
    submit: Callable[..., Submitted],
    bootstrap_servers: str,
    topic_factory: Callable[..., str],
    produce: Callable[..., None],
    read_committed: Callable[..., list[Any]],
    tmp_path: Path,
) -> None:
    topic = topic_factory("cluster-sink-kill", partitions=2)
    produce_values(produce, topic, range(RECORDS))
    out = tmp_path / "out.txt"
    job = submit(
        "kafka_to_sink.py",
        *("--name", f"sinkkill-{uuid.uuid4().hex[:8]}", "--tasks-max", "2", "--topics", topic),
        *("--connector-class", "sink_test_connectors.OffsetsInOutputSinkConnector"),
        *("--option", f"file={out}", "--option", "put.delay.ms=100"),
        *("--option", "consumer.override.max.poll.records=25"),
        *("--max-records-per-trigger", "200", "--bootstrap-servers", bootstrap_servers),
        *("--checkpoint", str(tmp_path / "ck"), "--until-idle", "--timeout", "300"),
        conf={"spark.submit.pyFiles": str(CONNECTORS)},
    )
    killed = []
    for _ in range(2):
        seen = len(written(out))
        wait_for(lambda s=seen: len(written(out)) > s, 240, "the sink to write more")
        killed.append(kill_busy_executor(job))

    succeeded(job, spark_cluster, timeout_s=400)
    lines = written(out)
    assert len(killed) == 2 and len(lines) == len(set(lines)), "a record was written twice"
    assert sorted(lines) == sorted(
        (r.partition, r.offset, r.value.decode()) for r in read_committed(topic)
    )
    lost = [r for r in job.event_log().failed_tasks if r == "ExecutorLostFailure"]
    assert len(lost) >= 2  # each kill interrupted a running sink task
