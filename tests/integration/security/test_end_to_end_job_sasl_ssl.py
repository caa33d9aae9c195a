"""`spark-submit jobs/end_to_end.py` against the SASL_SSL broker, the client settings passed as
`--kafka` options, as a principal granted exactly the README's source and Delta rows: the
generator's records reach Delta exactly once, and the password is in none of its output."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from spark_eos_connect.kafka.broker import LocalKafkaBroker

from .acl_table import DELTA, SOURCE, grants, rows_for
from .conftest import SECURITY_MARKS, Principal
from .paths import make_deployment, principal_with

pytestmark = SECURITY_MARKS

REPO = Path(__file__).resolve().parents[3]
TASKS, RECORDS_PER_TASK = 2, 500


def key_values(flag: str, settings: dict[str, str]) -> list[str]:
    """`flag key=value` for each setting."""
    return [part for key, value in settings.items() for part in (flag, f"{key}={value}")]


def test_end_to_end_job_over_sasl_ssl_as_a_least_privilege_principal(
    secured_broker: LocalKafkaBroker,
    principal_factory: Callable[[str], Principal],
    tmp_path: Path,
) -> None:
    deployment = make_deployment(secured_broker)
    name = f"e2e-{deployment.pipeline.group_id}"
    pipeline = dataclasses.replace(
        deployment.pipeline,
        connectors=(f"{name}-source",),
        sink_topics=(deployment.topic,),
        sink_connectors=(f"{name}-delta",),
    )
    rows = {*rows_for(SOURCE), *rows_for(DELTA)}
    principal = principal_with(secured_broker, principal_factory, grants(pipeline, rows))
    client = dict(principal.config)
    bootstrap = client.pop("bootstrap.servers")
    worker = deployment.worker_options()
    spark_submit = Path(sys.executable).parent / "spark-submit"  # installed by pyspark
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}

    argv = [str(spark_submit), str(REPO / "jobs" / "end_to_end.py"), "--name", name]
    argv += ["--bootstrap-servers", bootstrap, "--topic", deployment.topic]
    argv += ["--tasks", str(TASKS), "--records-per-task", str(RECORDS_PER_TASK)]
    argv += ["--work-dir", str(tmp_path / "work"), *key_values("--kafka", client)]
    argv += [*key_values("--source-option", worker), *key_values("--sink-option", worker)]

    result = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600, check=False)

    assert result.returncode == 0, (result.stdout[-2000:], result.stderr[-3000:])
    records = TASKS * RECORDS_PER_TASK
    verification = f"source records {records}, Delta rows {records}, duplicates 0, missing 0"
    assert f"verification: {verification}" in result.stdout
    assert principal.password not in result.stdout + result.stderr
