"""What a test shows of a job that ended otherwise than expected."""

from __future__ import annotations

import subprocess
from pathlib import Path

from spark_eos_connect.testing.job_output import first_causes, job_report, spark_log


def test_the_causes_come_first_once_each_then_the_consoles_end(tmp_path: Path) -> None:
    log = tmp_path / "spark.log"
    log.write_text(
        "INFO starting\n"
        "WARN TaskSetManager: Lost task 0.0: psycopg.OperationalError: server closed\n"
        "\tat org.apache.spark.Foo\n"
        "Caused by: java.io.EOFException\n"
        "Caused by: java.io.EOFException\n"
    )
    job = subprocess.CompletedProcess(
        ["job"], 1, stdout=f"Spark's log: {log}\n", stderr="x" * 50 + "the end"
    )

    report = job_report(job, tail_chars=7)

    assert report.splitlines() == [
        "exit code 1; causes named:",
        "WARN TaskSetManager: Lost task 0.0: psycopg.OperationalError: server closed",
        "Caused by: java.io.EOFException",
        "--- console's end:",
        "the end",
    ]


def test_a_job_that_names_no_log_or_a_gone_one_has_none() -> None:
    assert spark_log("no log named here") == ""
    assert spark_log("Spark's log: /nonexistent/spark.log\n") == ""


def test_causes_are_capped() -> None:
    text = "\n".join(f"ValueError: number {n}" for n in range(30))
    assert len(first_causes(text, limit=5)) == 5
