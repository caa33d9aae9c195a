"""`make demo`'s stages (`apps/jobs/demo.py`) on the test broker, with fewer records: the run is
clean. Progress only on stdout (no Spark, JVM or Kafka client log line), no line reporting
nothing, no "checkpoint replaced?" warning on the normal restarts (in the log file either), one
line saying where the source resumed, and a last line saying what was verified."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from ..docs.readme import REPO

pytestmark = pytest.mark.integration

NOISE = re.compile(
    r" WARN | INFO |WARNING|Traceback|%\d\|"  # log4j, Python logging, librdkafka
    r"| 0 offsets committed| 0 records committed|checkpoint replaced"
)


def test_demo_stages_print_a_clean_run(
    bootstrap_servers: str, unique_name: Callable[[str], str], tmp_path: Path
) -> None:
    command = [sys.executable, "-m", "spark_eos_connect.apps.jobs.demo"]
    command += ["--records-per-task", "2000", "--bootstrap-servers", bootstrap_servers]
    command += ["--prefix", unique_name("demo"), "--work", str(tmp_path)]

    result = subprocess.run(
        command, cwd=REPO, capture_output=True, text=True, timeout=900, check=False
    )

    lines = result.stdout.splitlines()
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    logs = f"== Spark, JVM and Kafka client logs: {tmp_path / 'demo.log'} (Spark's: job-logs/)"
    assert lines[0] == logs
    spark_logs = [
        Path(line.split(": ", 1)[1]) for line in lines if line.startswith("Spark's log: ")
    ]
    assert spark_logs and all(log.parent == tmp_path / "job-logs" for log in spark_logs)
    assert [line for line in lines if NOISE.search(line)] == []
    assert "checkpoint replaced" not in (tmp_path / "demo.log").read_text()
    [resumed] = [line for line in lines if "resuming from the offsets committed in Kafka" in line]
    [so_far] = re.findall(r"(\d+) records committed so far", result.stdout)
    positions = [int(p) for p in re.findall(r"task \d at (\d+)", resumed)]
    assert len(positions) == 2 and sum(positions) == int(so_far), resumed  # where run 1 stopped
    assert any(re.match(r"batch \d+: \d+ records committed to Kafka", line) for line in lines)
    assert any(line.startswith("resuming after the table's offsets: ") for line in lines)
    assert any(re.match(r"batch \d+: \d+ rows written to ", line) for line in lines)
    assert lines[-1].startswith("== verified: all 4000 generated records exactly once in Kafka")
