"""The jobs against the SASL_SSL broker, the client settings passed as `--kafka` options with the
password by reference (`${file:...}`), each as a principal granted exactly its README rows:
`spark-submit jobs/end_to_end.py` (its own client creates the topic) brings the generator's
records to Delta exactly once, and `jobs/source_to_kafka.py` fences its tasks' transactional ids
when it stops; each job resolves the reference itself and the password is in none of its output."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from spark_eos_connect.connectors.generator import expected_records
from spark_eos_connect.jvm.broker import LocalKafkaBroker
from spark_eos_connect.kafka.clients import read_to_end

from .acl_table import DELTA, SOURCE, grants, rows_for
from .conftest import SECURITY_MARKS, Principal
from .paths import RECORDS, SEED, SINK_VALUES, committed, make_deployment, principal_with

pytestmark = SECURITY_MARKS

REPO = Path(__file__).resolve().parents[3]
TASKS, RECORDS_PER_TASK = 2, 500
PASSWORD_KEY = "kafka.password"


def key_values(flag: str, settings: dict[str, str]) -> list[str]:
    """`flag key=value` for each setting."""
    return [part for key, value in settings.items() for part in (flag, f"{key}={value}")]


def client_by_reference(principal: Principal, folder: Path) -> tuple[str, dict[str, str]]:
    """(bootstrap servers, the other client settings) of `principal`, its password replaced by
    a `${file:...}` reference to a properties file written in `folder`."""
    secrets = folder / "kafka-secrets.properties"
    secrets.write_text(f"{PASSWORD_KEY}={principal.password}\n")
    client = dict(principal.config)
    client["sasl.password"] = f"${{file:{secrets}:{PASSWORD_KEY}}}"
    return client.pop("bootstrap.servers"), client


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
    bootstrap, client = client_by_reference(principal, tmp_path)
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


def test_source_to_kafka_job_fences_its_tasks_with_the_password_by_reference(
    secured_broker: LocalKafkaBroker,
    principal_factory: Callable[[str], Principal],
    run_job: Callable[..., subprocess.CompletedProcess[str]],
    tmp_path: Path,
) -> None:
    """The job fences every task's transactional id after its query stops, with its own
    producer: with an unresolved `${file:...}` password that producer is refused and the job
    fails; resolved, the job exits 0 with each record committed once."""
    deployment = make_deployment(secured_broker)
    principal = principal_with(
        secured_broker, principal_factory, grants(deployment.pipeline, rows_for(SOURCE))
    )
    bootstrap, client = client_by_reference(principal, tmp_path)
    options = {
        "topic": deployment.topic,
        "seed": str(SEED),
        "max.records": str(RECORDS),
        **deployment.worker_options(),
    }
    argv = ["--name", deployment.connector, "--connector-class", "Generator"]
    argv += [*key_values("--option", options), *key_values("--kafka", client)]
    argv += ["--bootstrap-servers", bootstrap, "--checkpoint", str(tmp_path / "checkpoint")]
    argv += ["--until-idle", "--timeout", "240"]

    result = run_job("source_to_kafka.py", *argv)

    assert result.returncode == 0, (result.stdout[-2000:], result.stderr[-3000:])
    assert committed(secured_broker, deployment.topic) == expected_records(SEED, 0, 0, RECORDS)
    assert_no_open_transaction(secured_broker, deployment.topic)
    assert principal.password not in result.stdout + result.stderr


def assert_no_open_transaction(broker: LocalKafkaBroker, topic: str) -> None:
    """Reading `topic` up to its high watermark finishes only if no transaction is open."""
    records: list[Any] = read_to_end(
        broker.client_config(), [topic], wait_for_open_transactions=True, timeout_s=20
    )
    assert len(records) == RECORDS


def test_kafka_to_delta_job_reads_with_sparks_kafka_source_over_sasl_ssl(
    secured_broker: LocalKafkaBroker,
    principal_factory: Callable[[str], Principal],
    run_job: Callable[..., subprocess.CompletedProcess[str]],
    spark: Any,
    tmp_path: Path,
) -> None:
    """`--reader kafka`: the librdkafka settings (SCRAM over TLS, the CA file, the password by
    reference) reach Spark's Java Kafka clients translated; the Delta query's README rows are
    enough, only committed records are written, and the password is in none of the output."""
    deployment = make_deployment(secured_broker)
    principal = principal_with(
        secured_broker, principal_factory, grants(deployment.pipeline, rows_for(DELTA))
    )
    bootstrap, client = client_by_reference(principal, tmp_path)
    table = tmp_path / "table"
    argv = ["--name", deployment.sink_connector, "--topics", deployment.sink_topic]
    argv += ["--path", str(table), "--reader", "kafka", *key_values("--kafka", client)]
    argv += ["--bootstrap-servers", bootstrap, "--checkpoint", str(tmp_path / "checkpoint")]
    argv += ["--until-idle", "--timeout", "240"]

    result = run_job("kafka_to_delta.py", *argv)

    assert result.returncode == 0, (result.stdout[-2000:], result.stderr[-3000:])
    values = sorted(r.value.decode() for r in spark.read.format("delta").load(str(table)).collect())
    assert values == SINK_VALUES
    assert principal.password not in result.stdout + result.stderr
